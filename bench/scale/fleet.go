package main

// The fleet cluster mode runs on: one on-demand managed node group per
// instance type the mix is placed on, each with enough nodes for its pods.
// How many bench pods a node holds comes from the node simcluster would
// create (its allocatable pods, CPU and memory, and devices), not from a
// table here.

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// What each bench pod requests (deploymentManifest).
const (
	podCPUCores = 0.1
	podMemory   = 64 << 20
)

// fleetHeadroom: nodes beyond the exact need, so that a count rounded down
// or a pod still being deleted never leaves a placed pod Pending.
const fleetHeadroom = 1.05

// Allocatable is a node's, by resource name, in cores, bytes and counts.
type Allocatable map[string]float64

// FleetInputs: what sizing needs besides the size.
type FleetInputs struct {
	Simcluster string // the binary (scripts/setup builds it)
	Catalog    string // config/catalog.yaml
	Dir        string // scratch
}

// fleetPools writes the pool file for `size` workloads of the mix. The
// Deployments' first pods (no placement yet: any untainted node, so the
// CPU pools) are counted on the CPU pools too, by share, since a rollout
// keeps the old pod until the new one runs.
func fleetPools(inputs FleetInputs, size int, placements map[string]KindPlacement) (string, error) {
	pods, cpuNew := fleetDemand(size, placements)
	types := make([]string, 0, len(pods))
	for instanceType := range pods {
		types = append(types, instanceType)
	}
	sort.Strings(types)
	nodes, err := nodeAllocatable(inputs, types)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "# The scale benchmark's cluster mode (bench/run-scale --cluster, docs/benchmarks.md)\n"+
		"# for %d workloads of its mix: one on-demand managed node group per instance type\n"+
		"# the operator places the mix on, %.0f%% over the pods each type must hold.\n"+
		"# Generated: bench-scale fleet --size %d (the format: default.yaml).\npools:\n",
		size, (fleetHeadroom-1)*100, size)
	for _, instanceType := range types {
		need, perNode := pods[instanceType], podsPerNode(nodes[instanceType], placements, instanceType)
		if perNode < 1 {
			return "", fmt.Errorf("a %s node holds no bench pod: %v", instanceType, nodes[instanceType])
		}
		if isCPUType(placements, instanceType) && cpuNew > 0 {
			need += float64(size) * pods[instanceType] / cpuNew // the first pods, by share
		}
		count := int(math.Ceil(need*fleetHeadroom/perNode)) + 1
		fmt.Fprintf(&out, "  - name: bench-%s # %.0f pods, %.0f a node\n    instanceType: %s\n    nodes: %d\n"+
			"    provisioner: managedNodeGroup\n", strings.ReplaceAll(instanceType, ".", "-"), need, perNode,
			instanceType, count)
	}
	return out.String(), nil
}

// fleetDemand: placed pods per instance type, and those on the CPU tier.
func fleetDemand(size int, placements map[string]KindPlacement) (map[string]float64, float64) {
	pods := map[string]float64{}
	cpuNew := 0.0
	for i := 0; i < size; i++ {
		placement := placements[clusterMix[mixKind(i)].Name]
		pods[placement.InstanceType] += benchReplicas
		if placement.AcceleratorCount == 0 {
			cpuNew += benchReplicas
		}
	}
	return pods, cpuNew
}

func isCPUType(placements map[string]KindPlacement, instanceType string) bool {
	for _, placement := range placements {
		if placement.InstanceType == instanceType && placement.AcceleratorCount == 0 {
			return true
		}
	}
	return false
}

// podsPerNode: bench pods a node holds by pods, CPU, memory and, for the
// kinds placed there with devices, devices.
func podsPerNode(node Allocatable, placements map[string]KindPlacement, instanceType string) float64 {
	fit := math.Min(node["pods"], math.Min(math.Floor(node["cpu"]/podCPUCores+1e-9), math.Floor(node["memory"]/podMemory)))
	for _, placement := range placements {
		if placement.InstanceType == instanceType && placement.AcceleratorCount > 0 {
			devices := float64(placement.AcceleratorsPerInstance / placement.AcceleratorCount)
			fit = math.Min(fit, devices)
		}
	}
	return fit
}

// nodeAllocatable asks simcluster for one node of each type (--print) and
// reads each node's allocatable.
func nodeAllocatable(inputs FleetInputs, types []string) (map[string]Allocatable, error) {
	var pools strings.Builder
	pools.WriteString("pools:\n")
	for _, instanceType := range types {
		fmt.Fprintf(&pools, "  - name: probe-%s\n    instanceType: %s\n    nodes: 1\n    provisioner: managedNodeGroup\n",
			strings.ReplaceAll(instanceType, ".", "-"), instanceType)
	}
	file := filepath.Join(inputs.Dir, "probe-pools.yaml")
	if err := os.WriteFile(file, []byte(pools.String()), 0o644); err != nil {
		return nil, err
	}
	out, err := exec.Command(inputs.Simcluster, "--catalog", inputs.Catalog, "--pools", file, "--print").Output()
	if err != nil {
		return nil, fmt.Errorf("simcluster --print: %v", err)
	}
	nodes := parseAllocatable(string(out))
	for _, instanceType := range types {
		if _, ok := nodes[instanceType]; !ok {
			return nil, fmt.Errorf("simcluster --print: no node of type %s", instanceType)
		}
	}
	return nodes, nil
}

// parseAllocatable reads, from simcluster's YAML (one object a document),
// each Node's instance-type label and its status.allocatable block.
func parseAllocatable(text string) map[string]Allocatable {
	nodes := map[string]Allocatable{}
	for _, document := range strings.Split(text, "\n---") {
		instanceType, allocatable := "", Allocatable{}
		indent := -1 // of allocatable's entries, while inside it
		scanner := bufio.NewScanner(strings.NewReader(document))
		for scanner.Scan() {
			line := scanner.Text()
			trimmed := strings.TrimSpace(line)
			depth := len(line) - len(strings.TrimLeft(line, " "))
			key, value, _ := strings.Cut(trimmed, ":")
			value = strings.Trim(strings.TrimSpace(value), `"'`)
			switch {
			case key == "node.kubernetes.io/instance-type":
				instanceType = value
			case key == "allocatable":
				indent = depth
			case indent >= 0 && depth > indent:
				allocatable[key] = parseQuantity(value)
			default:
				indent = -1
			}
		}
		if instanceType != "" && len(allocatable) > 0 {
			nodes[instanceType] = allocatable
		}
	}
	return nodes
}

// parseQuantity reads the Kubernetes quantities simcluster writes: a
// number with m, k, Ki, Mi, Gi or Ti, or none; NaN for anything else.
func parseQuantity(text string) float64 {
	suffixes := []struct {
		suffix string
		scale  float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"m", 1e-3}, {"k", 1e3}}
	for _, s := range suffixes {
		if number, ok := strings.CutSuffix(text, s.suffix); ok {
			value, err := strconv.ParseFloat(number, 64)
			if err != nil {
				return math.NaN()
			}
			return value * s.scale
		}
	}
	value, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return math.NaN()
	}
	return value
}
