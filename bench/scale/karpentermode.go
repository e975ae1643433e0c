package main

// Cluster mode with Karpenter (--cluster --karpenter): no node exists until
// a pod needs one. Karpenter's kwok provider launches each node from the
// catalog's types at its prices (scripts/controlplane start --cluster
// --karpenter), so the time from a GpuWorkload's creation to its pods
// Running includes the node's launch, and the fleet the run ends with is
// what the reactor's placements cost.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FleetSnapshot: the nodes at one moment and what they cost an hour at the
// price Karpenter launched each at (its offering's, on the node's
// eks-node-viewer/instance-price label).
type FleetSnapshot struct {
	Nodes       int            `json:"nodes"`
	CostPerHour float64        `json:"costPerHour"`
	ByType      map[string]int `json:"byType"` // "g6.xlarge on-demand" -> nodes
}

// LaunchFigures: what Karpenter launched over one reactor's run.
type LaunchFigures struct {
	// The Deployments' first pods Running, before any GpuWorkload.
	BeforePlacement FleetSnapshot `json:"beforePlacement"`
	// Every placed pod Running and the rollouts done (the measured window's end).
	AfterPlacement FleetSnapshot `json:"afterPlacement"`
	// After the idle window: Karpenter's time to consolidate what emptied.
	AfterIdle FleetSnapshot `json:"afterIdle"`
	// Distinct nodes seen from the control plane's start, and in the window.
	Launched         int     `json:"launched"`
	LaunchedInWindow int     `json:"launchedInWindow"`
	Removed          int     `json:"removed"` // nodes that went away (consolidation)
	PeakNodes        int     `json:"peakNodes"`
	PeakCostPerHour  float64 `json:"peakCostPerHour"`
	// What the GpuWorkloads' statuses say the cluster pays an hour for
	// them (the operator's; the floor writes no status), after the idle
	// window, to set beside AfterIdle's cost.
	ClaimedCostPerHour float64 `json:"claimedCostPerHour,omitempty"`
	Claims             int     `json:"claims,omitempty"`
	// Karpenter's own process over the run.
	KarpenterPeakRSSMiB float64 `json:"karpenterPeakRssMiB"`
	KarpenterRSSMiB     float64 `json:"karpenterRssMiB"` // at the end
}

const fleetPollPeriod = 2 * time.Second

// fleetWatch lists the nodes every fleetPollPeriod: a few hundred nodes,
// one list, so the poll adds little to the API server's figure.
type fleetWatch struct {
	client   *Client
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu          sync.Mutex
	seen        map[string]bool
	current     FleetSnapshot
	removed     int
	peakNodes   int
	peakCost    float64
	windowStart int // len(seen) when the window opened
	err         error
}

func watchFleet(client *Client) *fleetWatch {
	w := &fleetWatch{client: client, stop: make(chan struct{}), done: make(chan struct{}), seen: map[string]bool{}}
	w.poll()
	go func() {
		defer close(w.done)
		ticker := time.NewTicker(fleetPollPeriod)
		defer ticker.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-ticker.C:
				w.poll()
			}
		}
	}()
	return w
}

func (w *fleetWatch) poll() {
	nodes, _, err := w.client.ListAll("/api/v1/nodes")
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.err = err
		return
	}
	snapshot := FleetSnapshot{ByType: map[string]int{}}
	present := map[string]bool{}
	for _, node := range nodes {
		labels := node.Metadata.Labels
		present[node.Metadata.Name] = true
		w.seen[node.Metadata.Name] = true
		price, _ := strconv.ParseFloat(labels["eks-node-viewer/instance-price"], 64)
		snapshot.Nodes++
		snapshot.CostPerHour += price
		snapshot.ByType[labels["node.kubernetes.io/instance-type"]+" "+labels["karpenter.sh/capacity-type"]]++
	}
	snapshot.CostPerHour = round(snapshot.CostPerHour, 4)
	w.removed = len(w.seen) - len(present)
	w.current = snapshot
	w.peakNodes = max(w.peakNodes, snapshot.Nodes)
	w.peakCost = max(w.peakCost, snapshot.CostPerHour)
}

// snapshot: the fleet now (after a fresh poll).
func (w *fleetWatch) snapshot() FleetSnapshot {
	w.poll()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current
}

func (w *fleetWatch) openWindow() FleetSnapshot {
	snapshot := w.snapshot()
	w.mu.Lock()
	w.windowStart = len(w.seen)
	w.mu.Unlock()
	return snapshot
}

func (w *fleetWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

// finish stops the poll and fills the run's totals.
func (w *fleetWatch) finish(figures *LaunchFigures) error {
	figures.AfterIdle = w.snapshot()
	w.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	figures.Launched = len(w.seen)
	figures.LaunchedInWindow = len(w.seen) - w.windowStart
	figures.Removed = w.removed
	figures.PeakNodes = w.peakNodes
	figures.PeakCostPerHour = w.peakCost
	return w.err
}

// claimedCost sums status.placement.hourlyCost x replicas over the bench's
// GpuWorkloads: what the operator says the placements cost.
func claimedCost(client *Client) (float64, int, error) {
	items, _, err := client.ListAll(workloadsPath)
	if err != nil {
		return 0, 0, err
	}
	total, claims := 0.0, 0
	for _, item := range items {
		var status struct {
			Placement struct {
				HourlyCost string `json:"hourlyCost"`
				Replicas   int    `json:"replicas"`
			} `json:"placement"`
		}
		if json.Unmarshal(item.Status, &status) != nil || status.Placement.HourlyCost == "" {
			continue
		}
		price, err := strconv.ParseFloat(status.Placement.HourlyCost, 64)
		if err != nil {
			continue
		}
		total += price * float64(max(status.Placement.Replicas, 1))
		claims++
	}
	return round(total, 4), claims, nil
}

// karpenterPools writes config/sim/karpenter-launch.yaml's NodePools (one
// per tier, tainted, on-demand and spot, consolidation on) with each
// pool's limits raised far above what `size` workloads of the mix need:
// this run measures launching, not limits (e2e_KarpenterLaunch tests
// those). The pools are read from that file, so the two never drift.
func karpenterPools(repo, dir string, size int) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	source := filepath.Join(repo, "config", "sim", "karpenter-launch.yaml")
	text, err := os.ReadFile(source)
	if err != nil {
		return "", err
	}
	pools, err := raiseLimits(string(text), size)
	if err != nil {
		return "", fmt.Errorf("%s: %v", source, err)
	}
	path := filepath.Join(dir, "pools.yaml")
	header := fmt.Sprintf("# The scale benchmark's Karpenter cluster (bench/run-scale --cluster --karpenter)\n"+
		"# for %d workloads: config/sim/karpenter-launch.yaml with limits far above the demand.\n", size)
	return path, os.WriteFile(path, []byte(header+pools), 0o644)
}

// raiseLimits replaces the limits line of each pool (cpu, nvidia, neuron)
// in a pool file's text. Each workload's first pod and its placed pod may
// run at once, so the CPU limit grows with the size.
func raiseLimits(text string, size int) (string, error) {
	cpu := max(64, size/2)
	limits := map[string]string{
		"cpu":    fmt.Sprintf(`{cpu: "%d", memory: %dGi}`, cpu, cpu*8),
		"nvidia": fmt.Sprintf(`{cpu: "%d", memory: %dGi, nvidia.com/gpu: "%d"}`, cpu*4, cpu*32, max(16, size/10)),
		"neuron": fmt.Sprintf(`{cpu: "%d", memory: %dGi, aws.amazon.com/neuron: "%d"}`, cpu*2, cpu*16,
			max(32, size/10)),
	}
	var out strings.Builder
	pool := ""
	raised := map[string]bool{}
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(trimmed, "- name:"); ok {
			pool = strings.TrimSpace(name)
		}
		if strings.HasPrefix(trimmed, "limits:") {
			value, ok := limits[pool]
			if !ok {
				return "", fmt.Errorf("pool %q: no limits for the benchmark", pool)
			}
			indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
			line = indent + "limits: " + value + "\n"
			raised[pool] = true
		}
		out.WriteString(line)
	}
	for pool := range limits {
		if !raised[pool] {
			return "", fmt.Errorf("pool %q: not found, or without limits", pool)
		}
	}
	return out.String(), nil
}

// karpenterCapacityLabel: the label Karpenter puts on every node it
// launches (there are none yet to find it on).
var karpenterCapacityLabel = map[string]string{"key": "karpenter.sh/capacity-type", "onDemand": "on-demand",
	"spot": "spot"}

func describeFleet(s FleetSnapshot) string {
	kinds := make([]string, 0, len(s.ByType))
	for kind := range s.ByType {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	text := fmt.Sprintf("%d nodes, $%.2f/h", s.Nodes, s.CostPerHour)
	for i, kind := range kinds {
		if i == 0 {
			text += ":"
		} else {
			text += ","
		}
		text += fmt.Sprintf(" %d %s", s.ByType[kind], kind)
	}
	return text
}

func printLaunches(l *LaunchFigures) {
	fmt.Printf("  Karpenter: %d nodes launched (%d in the window), %d removed; peak %d nodes, $%.2f/h; Karpenter's RSS %.1f MiB (peak %.1f)\n",
		l.Launched, l.LaunchedInWindow, l.Removed, l.PeakNodes, l.PeakCostPerHour, l.KarpenterRSSMiB,
		l.KarpenterPeakRSSMiB)
	fmt.Printf("    before placement: %s\n", describeFleet(l.BeforePlacement))
	fmt.Printf("    after placement:  %s\n", describeFleet(l.AfterPlacement))
	fmt.Printf("    after idle:       %s\n", describeFleet(l.AfterIdle))
	if l.Claims > 0 {
		fmt.Printf("    the statuses claim $%.2f/h for %d placements\n", l.ClaimedCostPerHour, l.Claims)
	}
}
