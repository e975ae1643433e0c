package main

import (
	"math"
	"testing"
	"time"
)

func TestPlaceBoundPodsFillsDevicesThenCPUNodesWithinRoom(t *testing.T) {
	nodes := []*eksNode{
		{name: "gpu-a", milliCPU: 96000, pods: 250, device: "nvidia.com/gpu", devices: 8},
		{name: "neuron-a", milliCPU: 128000, pods: 250, device: "aws.amazon.com/neuron", devices: 2},
		{name: "cpu-a", milliCPU: 3920, pods: 58},
		{name: "cpu-b", milliCPU: 500, pods: 110},
	}
	pods := placeBoundPods(nodes, 60, 20, []string{"team-00", "team-01"})
	onNode := map[string]int{}
	devices := map[string]int{}
	for _, pod := range pods {
		onNode[pod.node]++
		if pod.device != "" {
			devices[pod.node]++
		}
	}
	// Only 10 devices exist: 10 device pods, never more than a node has.
	if devices["gpu-a"] != 8 || devices["neuron-a"] != 2 {
		t.Errorf("device pods per node: %v", devices)
	}
	// CPU for 39 pods of 100m on cpu-a, 5 on cpu-b: 54 of the 60 fit.
	if onNode["cpu-a"] != 39 || onNode["cpu-b"] != 5 {
		t.Errorf("CPU pods per node: %v", onNode)
	}
	if len(pods) != 54 {
		t.Errorf("%d pods, want 54", len(pods))
	}
	if pods[0].namespace != "team-00" || pods[1].namespace != "team-01" {
		t.Errorf("namespaces not round-robin: %q, %q", pods[0].namespace, pods[1].namespace)
	}
}

func TestPlaceBoundPodsStopsWhenTheClusterIsFull(t *testing.T) {
	nodes := []*eksNode{{name: "cpu-a", milliCPU: 4000, pods: 12}}
	if pods := placeBoundPods(nodes, 100, 0, []string{"ns"}); len(pods) != 10 { // 12 slots less 2 reserved
		t.Errorf("%d pods on a node with room for 10", len(pods))
	}
}

func TestMemorySlope(t *testing.T) {
	var flat, rising []SoakSample
	for minute := 0; minute <= 60; minute++ {
		wobble := 0.5 * float64(minute%2*2-1) // +-0.5 MiB
		flat = append(flat, SoakSample{Minute: float64(minute), OperatorMiB: 100 + wobble})
		rising = append(rising, SoakSample{Minute: float64(minute), OperatorMiB: 100 + float64(minute)/6})
	}
	flat[0].OperatorMiB = 50 // before churn warmed the caches: left out
	if slope, noise := memorySlope(flat); math.Abs(slope) > 1 || math.Abs(noise-0.5) > 0.01 {
		t.Errorf("flat: slope %v MiB/h, noise %v MiB", slope, noise)
	}
	if slope, noise := memorySlope(rising); math.Abs(slope-10) > 0.01 || noise > 0.01 {
		t.Errorf("rising by 10 MiB an hour: slope %v, noise %v", slope, noise)
	}
}

func TestHistogramQuantileIsTheBucketBound(t *testing.T) {
	before := Histogram{buckets: map[float64]float64{0.001: 5, 0.002: 5, math.Inf(1): 5}, count: 5, sum: 0.004}
	after := Histogram{buckets: map[float64]float64{0.001: 55, 0.002: 104, math.Inf(1): 105}, count: 105,
		sum: 0.2}
	views := after.minus(before)
	if views.count != 100 {
		t.Fatalf("count %v, want 100", views.count)
	}
	if q := views.quantileMs(0.5); q != 1 {
		t.Errorf("p50 %v ms, want 1 (50 of 100 at or under 1 ms)", q)
	}
	if q := views.quantileMs(0.99); q != 2 {
		t.Errorf("p99 %v ms, want 2", q)
	}
	if q := views.quantileMs(1); !math.IsInf(q, 1) {
		t.Errorf("max %v, want +Inf (one past the last bound)", q)
	}
	if q := (Histogram{}).quantileMs(0.5); !math.IsNaN(q) {
		t.Errorf("no observations: %v, want NaN", q)
	}
}

func TestFloorChurnCoversTheArrivalsWithinTheOperatorsChurn(t *testing.T) {
	s := EKSSettings{Arrivals: 1000, ArrivalRate: 10, ChurnLifetime: 30 * time.Second, Churn: time.Hour}
	if d := floorChurnDuration(s); d != 130*time.Second { // 100 s of arrivals, then a pod's lifetime
		t.Errorf("%v, want 2m10s", d)
	}
	s.Churn = time.Minute
	if d := floorChurnDuration(s); d != time.Minute {
		t.Errorf("%v, want the operator's churn, 1m", d)
	}
}

func TestHeapHeldSlopeIsFlatWhileResidentMemoryRisesTowardIt(t *testing.T) {
	var samples []SoakSample
	for minute := 0; minute <= 60; minute++ {
		// Free pages touched again: resident memory rises, what malloc
		// holds (in use and free move against each other) does not.
		inUse := 20 + float64(minute%3)
		samples = append(samples, SoakSample{Minute: float64(minute), OperatorMiB: 40 + float64(minute)/60,
			HeapInUseMiB: inUse, HeapFreeMiB: 30 - inUse, HeapMappedMiB: 0.5})
	}
	if slope, _ := memorySlope(samples); math.Abs(slope-1) > 0.01 {
		t.Errorf("resident: %v MiB/h, want 1", slope)
	}
	if slope, noise := slopeOf(samples, heapHeld); slope != 0 || noise != 0 {
		t.Errorf("held: slope %v MiB/h, noise %v, want both 0", slope, noise)
	}
}
