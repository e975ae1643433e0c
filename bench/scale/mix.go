package main

// Cluster mode's workload mix and the fleet it runs on. With real pods,
// every placement must find hardware: 10,000 one-GPU pods would need
// 10,000 GPUs, so most workloads are small models the operator puts on
// the CPU tier, and a share needs an accelerator (NVIDIA and Inferentia).
// The fleet is derived from the mix: what `gpu-placement recommend` places
// each kind on, and how many of each kind a size creates.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The label on each GpuWorkload naming its kind: the floor looks its
// patch up by it (a table, not a decision).
const kindLabel = "bench.gpuplacement.io/kind"

// WorkloadKind is one intent of the mix; Share is per 100 workloads.
type WorkloadKind struct {
	Name  string
	Share int
	Spec  map[string]any // workload, model, objective, constraints
}

func model(parameters, precision string) map[string]any {
	return map[string]any{"parameters": parameters, "precision": precision, "framework": "PyTorch",
		"architecture": "Transformer"}
}

// clusterMix: 92% CPU tier (two kinds, so two CPU instance types), 8% on
// one accelerator each. The two GPU kinds are the bare mode's kinds A and B.
var clusterMix = []WorkloadKind{
	{"small-inference", 46, map[string]any{"workload": map[string]any{"kind": "Inference"},
		"model": model("350M", "fp32"), "objective": "CostOptimized"}},
	{"tiny-inference", 46, map[string]any{"workload": map[string]any{"kind": "Inference"},
		"model": model("125M", "fp32"), "objective": "Balanced"}},
	{"inference-7b", 3, map[string]any{"workload": map[string]any{"kind": "Inference", "latencyTargetMs": 100},
		"model": model("7B", "fp16"), "objective": "CostOptimized"}},
	{"finetune-13b", 3, map[string]any{"workload": map[string]any{"kind": "FineTuning"},
		"model": model("13B", "bf16"), "objective": "Balanced"}},
	{"inferentia-8b", 2, map[string]any{"workload": map[string]any{"kind": "Inference", "latencyTargetMs": 200},
		"model": model("8B", "fp16"), "objective": "CostOptimized",
		"constraints": map[string]any{"tiers": []string{"Inferentia"}}}},
}

// mixKind spreads the kinds over the sequence (37 is prime to 100), so
// that any stretch of creations, not only whole hundreds, has the mix.
func mixKind(i int) int {
	slot := (i * 37) % 100
	for k, kind := range clusterMix {
		if slot < kind.Share {
			return k
		}
		slot -= kind.Share
	}
	panic("clusterMix shares do not add up to 100")
}

func clusterWorkloadManifest(i int) map[string]any {
	kind := clusterMix[mixKind(i)]
	spec := map[string]any{"targetRef": map[string]string{"kind": "Deployment", "name": deploymentName(i)}}
	for key, value := range kind.Spec {
		spec[key] = value
	}
	return map[string]any{
		"apiVersion": "gpuplacement.io/v1alpha1", "kind": "GpuWorkload",
		"metadata": map[string]any{"name": deploymentName(i), "namespace": benchNamespace,
			"labels": map[string]string{kindLabel: kind.Name}},
		"spec": spec,
	}
}

// KindPlacement is the operator's answer for one kind, offline.
type KindPlacement struct {
	InstanceType            string
	AcceleratorCount        int
	AcceleratorsPerInstance int
	Scheduling              json.RawMessage // nodeSelector, tolerations, resources
}

// recommendKinds asks `gpu-placement recommend` where each kind goes under
// the policy: the fleet's types and the floor's patches.
func recommendKinds(operator, dir string, policy map[string]any) (map[string]KindPlacement, error) {
	policyFile := filepath.Join(dir, "mix-policy.json")
	if err := writeJSON(policyFile, policy); err != nil {
		return nil, err
	}
	answers := map[string]KindPlacement{}
	for k, kind := range clusterMix {
		first := k // any index of this kind will do
		for mixKind(first) != k {
			first++
		}
		file := filepath.Join(dir, "mix-"+kind.Name+".json")
		if err := writeJSON(file, clusterWorkloadManifest(first)); err != nil {
			return nil, err
		}
		out, err := exec.Command(operator, "recommend", "-f", file, "--policy", policyFile, "-o", "json").Output()
		if err != nil {
			return nil, fmt.Errorf("gpu-placement recommend (%s): %v", kind.Name, err)
		}
		var answer struct {
			Placement struct {
				InstanceType            string `json:"instanceType"`
				AcceleratorCount        int    `json:"acceleratorCount"`
				AcceleratorsPerInstance int    `json:"acceleratorsPerInstance"`
			} `json:"placement"`
			Scheduling json.RawMessage `json:"scheduling"`
		}
		if err := json.Unmarshal(out, &answer); err != nil || answer.Placement.InstanceType == "" {
			return nil, fmt.Errorf("gpu-placement recommend (%s): no placement in %s", kind.Name, out)
		}
		answers[kind.Name] = KindPlacement{answer.Placement.InstanceType, answer.Placement.AcceleratorCount,
			answer.Placement.AcceleratorsPerInstance, answer.Scheduling}
	}
	return answers, nil
}

func writeJSON(path string, object any) error {
	data, err := json.Marshal(object)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// cpuPodsPerNode is the fewest pods an EKS managed-node-group node below
// 30 vCPUs takes (the AMI caps max pods at 110); larger CPU types take
// more (c5.9xlarge 234), which only adds headroom.
const cpuPodsPerNode = 110

// fleetHeadroom: nodes beyond the exact need, so that a pod still being
// deleted or a count rounded down never leaves a placed pod Pending.
const fleetHeadroom = 1.05

// fleetPools sizes one on-demand managed node group per instance type the
// mix is placed on, for `size` workloads. The Deployments' first pods (no
// placement yet: any untainted node, i.e. the CPU nodes) are counted on
// the CPU pools too, since a rollout keeps the old pod until the new one
// runs.
func fleetPools(size int, placements map[string]KindPlacement) string {
	pods := map[string]float64{}    // new pods per instance type
	perNode := map[string]float64{} // pods per node
	cpuNew := 0.0
	for i := 0; i < size; i++ {
		kind := clusterMix[mixKind(i)]
		placement := placements[kind.Name]
		pods[placement.InstanceType]++
		if placement.AcceleratorCount == 0 {
			perNode[placement.InstanceType] = cpuPodsPerNode
			cpuNew++
		} else {
			perNode[placement.InstanceType] = float64(placement.AcceleratorsPerInstance / placement.AcceleratorCount)
		}
	}
	types := make([]string, 0, len(pods))
	for instanceType := range pods {
		types = append(types, instanceType)
	}
	sort.Strings(types)
	var out strings.Builder
	fmt.Fprintf(&out, "# The scale benchmark's cluster mode (bench/run-scale --cluster, docs/benchmarks.md)\n"+
		"# for %d workloads of its mix: one on-demand managed node group per instance type\n"+
		"# the operator places the mix on, %.0f%% over the pods each type must hold.\n"+
		"# Generated: bench-scale fleet --size %d (the format: default.yaml).\npools:\n",
		size, (fleetHeadroom-1)*100, size)
	for _, instanceType := range types {
		need := pods[instanceType]
		if perNode[instanceType] == cpuPodsPerNode && cpuNew > 0 {
			need += float64(size) * pods[instanceType] / cpuNew // the first pods, by share
		}
		nodes := int(math.Ceil(need*fleetHeadroom/perNode[instanceType])) + 1
		fmt.Fprintf(&out, "  - name: bench-%s\n    instanceType: %s\n    nodes: %d\n    provisioner: managedNodeGroup\n",
			strings.ReplaceAll(instanceType, ".", "-"), instanceType, nodes)
	}
	return out.String()
}

// floorPatches: the Deployment patch the operator would write for each
// kind, from recommend's scheduling, for the floor to apply by label.
func floorPatches(placements map[string]KindPlacement) (map[string]any, error) {
	patches := map[string]any{}
	for name, placement := range placements {
		var scheduling struct {
			NodeSelector map[string]string `json:"nodeSelector"`
			Tolerations  []map[string]any  `json:"tolerations"`
			Resources    map[string]any    `json:"resources"`
		}
		if err := json.Unmarshal(placement.Scheduling, &scheduling); err != nil {
			return nil, fmt.Errorf("recommend's scheduling for %s: %v", name, err)
		}
		podSpec := map[string]any{"nodeSelector": scheduling.NodeSelector}
		if len(scheduling.Tolerations) > 0 {
			podSpec["tolerations"] = scheduling.Tolerations
		}
		if placement.AcceleratorCount > 0 {
			podSpec["containers"] = []map[string]any{{"name": "server", "resources": scheduling.Resources}}
		}
		patches[name] = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec}}}
	}
	return patches, nil
}
