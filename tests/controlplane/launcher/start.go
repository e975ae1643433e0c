package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// startOptions: what start was asked for, checked against each other.
type startOptions struct {
	dir            string
	owner          int
	audit          bool
	cluster        bool
	pools          string
	karpenter      bool
	karpenterLater bool
	noRollouts     bool
	prices         string
	kinds          []string // the kinds' controllers to run (kinds.go)
	apiBin         string   // kube-apiserver and kubectl of the line asked for
	version        string
	apiServerFlags []string
}

// parseStart reads start's arguments in any order; everything after "--"
// goes to kube-apiserver.
func parseStart(args []string, t tools) (startOptions, error) {
	o := startOptions{apiBin: t.k8sBin, version: t.k8sVersion}
	kubernetes := ""
	value := func(i int, what string) (string, error) {
		if i+1 >= len(args) || args[i+1] == "" {
			return "", fail("%s needs %s", args[i], what)
		}
		return args[i+1], nil
	}
	for i := 0; i < len(args); i++ {
		var err error
		switch arg := args[i]; arg {
		case "--owner-pid":
			var pid string
			if pid, err = value(i, "a pid"); err == nil {
				if o.owner, err = strconv.Atoi(pid); err != nil || o.owner <= 0 {
					return o, fail("--owner-pid: %q is not a pid", pid)
				}
			}
			i++
		case "--audit":
			o.audit = true
		case "--cluster":
			o.cluster = true
		case "--pools":
			o.pools, err = value(i, "a file")
			i++
		case "--karpenter":
			o.karpenter = true
		case "--karpenter-later":
			o.karpenterLater = true
		case "--no-rollouts":
			o.noRollouts = true
		case "--prices":
			o.prices, err = value(i, "a PlacementPolicy manifest")
			i++
		case "--kubernetes":
			kubernetes, err = value(i, "a version")
			i++
		case "--kinds":
			var list string
			if list, err = value(i, "a list of kinds ("+strings.Join(knownKinds, ",")+")"); err == nil {
				o.kinds, err = parseKinds(list)
			}
			i++
		case "--":
			o.apiServerFlags = append([]string(nil), args[i+1:]...)
			i = len(args)
		default:
			if strings.HasPrefix(arg, "-") {
				return o, fail("unknown option %s", arg)
			}
			if o.dir != "" {
				return o, errUsage
			}
			o.dir = arg
		}
		if err != nil {
			return o, err
		}
	}
	if o.dir == "" {
		return o, errUsage
	}
	switch kubernetes {
	case "":
	case "1.34":
		if o.cluster {
			return o, fail("--kubernetes 1.34 starts the control plane alone, not --cluster")
		}
		o.apiBin, o.version = t.k8sCompatBin, t.k8sCompatVersion
	default:
		return o, fail("--kubernetes: %s is not a line this project tests (1.34; default %s)",
			kubernetes, t.k8sVersion)
	}
	switch {
	case o.karpenter && !o.cluster:
		return o, fail("--karpenter runs Karpenter in the simulated cluster: add --cluster")
	case o.karpenterLater && !o.karpenter:
		return o, fail("--karpenter-later defers Karpenter: add --karpenter")
	case o.karpenterLater && o.prices != "":
		return o, fail("--karpenter-later starts Karpenter at the catalog's prices: no --prices")
	case o.noRollouts && !o.cluster:
		return o, fail("--no-rollouts trims the simulated cluster's controllers: add --cluster")
	case o.prices != "" && !o.karpenter:
		return o, fail("--prices sets the prices Karpenter launches nodes at: add --karpenter")
	case o.pools != "" && !o.cluster:
		return o, fail("--pools names the simulated cluster's pool file: add --cluster")
	case o.kinds != nil && !o.cluster:
		return o, fail("--kinds runs controllers in the simulated cluster: add --cluster")
	case slices.Contains(o.kinds, "lws") && o.noRollouts:
		return o, fail("--kinds lws needs the StatefulSet controller that --no-rollouts leaves out")
	case slices.Contains(o.kinds, "jobset") && o.noRollouts:
		return o, fail("--kinds jobset needs the Job controller that --no-rollouts leaves out")
	}
	if o.pools == "" && o.cluster {
		o.pools = filepath.Join(t.repoRoot, "config", "sim", "default.yaml")
		if o.karpenter {
			o.pools = filepath.Join(t.repoRoot, "config", "sim", "karpenter-launch.yaml")
		}
	}
	return o, nil
}

func start(o startOptions, t tools) error {
	if err := t.requireBinaries(o.apiBin, o.cluster, o.karpenter, o.kinds); err != nil {
		return err
	}
	var err error
	if o.prices != "" {
		if _, statErr := os.Stat(o.prices); statErr != nil {
			return fail("--prices: %s does not exist", o.prices)
		}
		if o.prices, err = filepath.Abs(o.prices); err != nil {
			return err
		}
	}
	if o.cluster {
		if _, statErr := os.Stat(o.pools); statErr != nil {
			return fail("pool file %s does not exist", o.pools)
		}
		if o.pools, err = filepath.Abs(o.pools); err != nil {
			return err
		}
		// A bad pool file fails here, in a blink, not after the control
		// plane is up.
		check := exec.Command(t.simcluster(), "--catalog", t.catalog(), "--pools", o.pools, "--print")
		check.Stderr = os.Stderr
		if check.Run() != nil {
			return fail("pool file %s is not valid", o.pools)
		}
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if _, ok := livePid(dir, "kube-apiserver"); ok {
		return fail("a control plane is already running in %s: run scripts/controlplane stop %s first", dir, dir)
	}
	if _, ok := livePid(dir, "etcd"); ok {
		return fail("a control plane is already running in %s: run scripts/controlplane stop %s first", dir, dir)
	}
	began := time.Now()
	if err := clearPrevious(dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver.bin"), []byte(o.apiBin+"\n"), 0o644); err != nil {
		return err
	}
	if err := generatePKI(filepath.Join(dir, "pki")); err != nil {
		return fail("cannot make the certificates in %s/pki: %v", dir, err)
	}
	extra := o.apiServerFlags
	if o.audit {
		if extra, err = withAuditLog(dir, extra); err != nil {
			return err
		}
	}
	apiPort, err := startControlPlaneProcesses(dir, t.etcdBin, extra)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(filepath.Join(dir, "pki"), apiPort, "admin", filepath.Join(dir, "kubeconfig")); err != nil {
		return err
	}
	endpoint := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	if err := os.WriteFile(filepath.Join(dir, "endpoint"), []byte(endpoint+"\n"), 0o644); err != nil {
		return err
	}
	if o.owner != 0 {
		if err := startWatchdog(dir, o.owner); err != nil {
			return err
		}
	}
	if o.cluster {
		// After the watchdog, so an owner that dies while the nodes come up
		// still takes everything down with it.
		if err := startCluster(dir, o, t); err != nil {
			stopAll(dir)
			return fail("the simulated cluster did not start (%v); logs are in %s/logs", err, dir)
		}
		logf("simulated cluster ready in %d s: %d nodes from %s", seconds(began), countNodes(dir, t), o.pools)
	}
	logf("ready in %d s: %s (kube-apiserver %s, etcd %s); KUBECONFIG=%s/kubeconfig",
		seconds(began), endpoint, o.version, t.etcdVersion, dir)
	return nil
}

func seconds(since time.Time) int { return int(time.Since(since).Seconds()) }

// clearPrevious removes what an earlier start in dir left: data, keys, logs,
// pid, port and argument files.
func clearPrevious(dir string) error {
	names := []string{"etcd", "pki", "logs", "kubeconfig", "endpoint", "cluster.pools", "cluster.kinds",
		"karpenter-instance-types.json", "audit-policy.yaml"}
	for _, pattern := range []string{"*.pid", "kube-apiserver.*", "kube-scheduler.*",
		"kube-controller-manager.*", "kwok.*", "karpenter.*", "karpenter-prices.*", "kuberay.*", "lws.*", "jobset.*",
		"trainer.*", "kueue.*"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, match := range matches {
			names = append(names, filepath.Base(match))
		}
	}
	for _, name := range names {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
}

// withAuditLog: metadata for every request; a pod's creation with its body,
// so a test can see what each pod was created from (a Job's placement).
func withAuditLog(dir string, extra []string) ([]string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	text := `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [create]
  resources: [{group: "", resources: [pods]}]
- level: Metadata
`
	if err := os.WriteFile(policy, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return append([]string{"--audit-policy-file", policy, "--audit-log-path",
		filepath.Join(dir, "logs", "audit.log"), "--audit-log-maxsize", "0"}, extra...), nil
}

// startWatchdog: a process of its own session that outlives nothing it
// should not. It stops the control plane once the owner has gone, whether
// it exited, aborted or was killed.
func startWatchdog(dir string, owner int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return startComponent(dir, "watchdog", nil, self, "watchdog", strconv.Itoa(owner), dir)
}

func watchdog(args []string) error {
	if len(args) != 2 {
		return errUsage
	}
	owner, err := strconv.Atoi(args[0])
	if err != nil {
		return errUsage
	}
	for syscall.Kill(owner, 0) == nil {
		time.Sleep(time.Second)
	}
	return stop(args[1])
}

func countNodes(dir string, t tools) int {
	out, err := exec.Command(filepath.Join(t.k8sBin, "kubectl"), "--kubeconfig",
		filepath.Join(dir, "kubeconfig"), "get", "nodes", "-o", "name").Output()
	if err != nil {
		return 0
	}
	return strings.Count(string(out), "\n")
}
