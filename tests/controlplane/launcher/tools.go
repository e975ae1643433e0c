package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// tools: where the pinned binaries are and which versions they are, as
// scripts/lib/common.sh computes them from the wrapper modules' go.mod
// files; scripts/controlplane exports them under these names.
type tools struct {
	repoRoot                                  string
	k8sBin, k8sCompatBin, etcdBin             string
	helmBin, kubeScoreBin                     string
	clusterBin, kwokBin, karpenterBin         string
	simclusterBin, kuberayBin, lwsBin         string
	jobsetBin, trainerBin, kueueBin           string
	k8sVersion, k8sCompatVersion, etcdVersion string
}

func toolsFromEnvironment() (tools, error) {
	var missing []string
	get := func(name string) string {
		value := os.Getenv(name)
		if value == "" {
			missing = append(missing, name)
		}
		return value
	}
	t := tools{
		repoRoot:         get("REPO_ROOT"),
		k8sBin:           get("K8S_BIN"),
		k8sCompatBin:     get("K8S_COMPAT_BIN"),
		etcdBin:          get("ETCD_BIN"),
		helmBin:          get("HELM_BIN"),
		kubeScoreBin:     get("KUBE_SCORE_BIN"),
		clusterBin:       get("CLUSTER_BIN"),
		kwokBin:          get("KWOK_BIN"),
		karpenterBin:     get("KARPENTER_BIN"),
		simclusterBin:    get("SIMCLUSTER_BIN"),
		kuberayBin:       get("KUBERAY_BIN"),
		lwsBin:           get("LWS_BIN"),
		jobsetBin:        get("JOBSET_BIN"),
		trainerBin:       get("TRAINER_BIN"),
		kueueBin:         get("KUEUE_BIN"),
		k8sVersion:       get("K8S_VERSION"),
		k8sCompatVersion: get("K8S_COMPAT_VERSION"),
		etcdVersion:      get("ETCD_VERSION"),
	}
	if len(missing) > 0 {
		return t, fail("%v not set: run this through scripts/controlplane", missing)
	}
	return t, nil
}

func (t tools) catalog() string { return filepath.Join(t.repoRoot, "config", "catalog.yaml") }

func (t tools) simcluster() string { return filepath.Join(t.simclusterBin, "simcluster") }

// requireBinaries: every binary the start needs is built, or the start
// fails before it makes anything; for each kind, its CRDs too.
func (t tools) requireBinaries(apiBin string, cluster, karpenter bool, kinds []string) error {
	bins := []string{filepath.Join(apiBin, "kube-apiserver"), filepath.Join(apiBin, "kubectl"),
		filepath.Join(t.etcdBin, "etcd")}
	if cluster {
		bins = append(bins, filepath.Join(t.clusterBin, "kube-scheduler"),
			filepath.Join(t.clusterBin, "kube-controller-manager"), filepath.Join(t.kwokBin, "kwok"),
			filepath.Join(t.kwokBin, "kwok-stages"), t.simcluster())
	}
	if karpenter {
		bins = append(bins, filepath.Join(t.karpenterBin, "karpenter"))
	}
	for _, kind := range kinds {
		bins = append(bins, t.kindBinary(kind))
		if crds, _ := filepath.Glob(filepath.Join(t.kindCRDs(kind), "*.yaml")); len(crds) == 0 {
			return fail("%s holds no CRDs: run scripts/setup first", t.kindCRDs(kind))
		}
	}
	for _, bin := range bins {
		if info, err := os.Stat(bin); err != nil || info.Mode()&0o111 == 0 {
			return fail("%s is missing: run scripts/setup first", bin)
		}
	}
	return nil
}

// printEnv: the exports that put the pinned kubectl (of the control plane's
// own line, given DIR), helm and kube-score on PATH, and KUBECONFIG.
func printEnv(args []string, t tools) {
	bin := t.k8sBin
	if len(args) == 1 {
		if data, err := os.ReadFile(filepath.Join(args[0], "kube-apiserver.bin")); err == nil {
			bin = string(trimLine(data))
		}
	}
	fmt.Printf("export PATH=\"%s:%s:%s:$PATH\"\n", bin, t.helmBin, t.kubeScoreBin)
	if len(args) == 1 {
		if _, err := os.Stat(filepath.Join(args[0], "kubeconfig")); err == nil {
			dir, _ := filepath.Abs(args[0])
			fmt.Printf("export KUBECONFIG=\"%s\"\n", filepath.Join(dir, "kubeconfig"))
		}
	}
}

func trimLine(data []byte) []byte {
	for len(data) > 0 && (data[len(data)-1] == '\n' || data[len(data)-1] == '\r') {
		data = data[:len(data)-1]
	}
	return data
}
