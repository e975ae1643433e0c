package main

import (
	"math"
	"testing"
)

// Any 100 consecutive workloads hold the mix's shares exactly.
func TestMixSharesOverAnyHundred(t *testing.T) {
	for start := 0; start < 300; start += 37 {
		counts := make([]int, len(clusterMix))
		for i := start; i < start+100; i++ {
			counts[mixKind(i)]++
		}
		for k, kind := range clusterMix {
			if counts[k] != kind.Share {
				t.Errorf("from %d: %s %d times, want %d", start, kind.Name, counts[k], kind.Share)
			}
		}
	}
}

func TestParseQuantity(t *testing.T) {
	cases := map[string]float64{"3920m": 3.92, "4": 4, "6735Mi": 6735 << 20, "17Gi": 17 << 30, "110": 110,
		"1k": 1000, "2048Ki": 2 << 20}
	for text, want := range cases {
		if got := parseQuantity(text); math.Abs(got-want) > 1e-9*want {
			t.Errorf("parseQuantity(%q) = %v, want %v", text, got, want)
		}
	}
	if !math.IsNaN(parseQuantity("lots")) {
		t.Errorf("parseQuantity(lots) is a number")
	}
}

// The shape simcluster --print writes (sigs.k8s.io/yaml), two nodes.
const printedNodes = `apiVersion: v1
kind: Node
metadata:
  labels:
    node.kubernetes.io/instance-type: c5.xlarge
  name: ip-10-0-0-1.ec2.internal
status:
  allocatable:
    cpu: 3920m
    memory: 6735Mi
    pods: "58"
  capacity:
    cpu: "4"
---
apiVersion: v1
kind: Node
metadata:
  labels:
    node.kubernetes.io/instance-type: g6e.xlarge
status:
  allocatable:
    cpu: 3920m
    memory: 29000Mi
    nvidia.com/gpu: "1"
    pods: "58"
`

func TestPodsPerNodeFromPrintedNodes(t *testing.T) {
	nodes := parseAllocatable(printedNodes)
	placements := map[string]KindPlacement{
		"cpu": {InstanceType: "c5.xlarge"},
		"gpu": {InstanceType: "g6e.xlarge", AcceleratorCount: 1, AcceleratorsPerInstance: 1},
	}
	if got := podsPerNode(nodes["c5.xlarge"], placements, "c5.xlarge"); got != 39 {
		t.Errorf("c5.xlarge holds %v pods of 100m, want 39 (3.92 CPUs)", got)
	}
	if got := podsPerNode(nodes["g6e.xlarge"], placements, "g6e.xlarge"); got != 1 {
		t.Errorf("g6e.xlarge holds %v one-GPU pods, want 1", got)
	}
	if nodes["c5.xlarge"]["capacity"] != 0 || len(nodes["c5.xlarge"]) != 3 {
		t.Errorf("read more than allocatable: %v", nodes["c5.xlarge"])
	}
}
