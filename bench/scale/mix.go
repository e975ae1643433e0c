package main

// Cluster mode's workload mix and the fleet it runs on. With real pods,
// every placement must find hardware: 10,000 one-GPU pods would need
// 10,000 GPUs, so most workloads are small models the operator puts on
// the CPU tier, and a share needs an accelerator.
// The fleet is derived from the mix: what `gpu-placement recommend` places
// each kind on, and how many of each kind a size creates.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// clusterMix: 95% small models the operator puts on the CPU tier, 5% on
// one accelerator each (the bare mode's kinds A and B, and one allowed
// only Inferentia). Each accelerated pod takes a node of its own, so the
// accelerated share sets most of the fleet's size: 5% of 10,000 is about
// 530 nodes, and the CPU pods (placed ones and the Deployments' first
// ones, 100m each) about 530 more.
var clusterMix = []WorkloadKind{
	{"small-inference", 48, map[string]any{"workload": map[string]any{"kind": "Inference"},
		"model": model("350M", "fp32"), "objective": "CostOptimized"}},
	// Balanced alone buys a 125M model an Inferentia2 for its performance
	// per dollar; the tier constraint keeps the mix's CPU share.
	{"tiny-inference", 47, map[string]any{"workload": map[string]any{"kind": "Inference"},
		"model": model("125M", "fp32"), "objective": "Balanced",
		"constraints": map[string]any{"tiers": []string{"CPU"}}}},
	{"inference-7b", 2, map[string]any{"workload": map[string]any{"kind": "Inference", "latencyTargetMs": 100},
		"model": model("7B", "fp16"), "objective": "CostOptimized"}},
	{"finetune-13b", 2, map[string]any{"workload": map[string]any{"kind": "FineTuning"},
		"model": model("13B", "bf16"), "objective": "Balanced"}},
	{"inferentia-8b", 1, map[string]any{"workload": map[string]any{"kind": "Inference", "latencyTargetMs": 200},
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
