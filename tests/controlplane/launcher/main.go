// controlplane starts a real, local Kubernetes control plane (etcd and
// kube-apiserver) for tests, the demo and people, the way controller-
// runtime's envtest does; with --cluster, a simulated EKS cluster around it.
// People and programs call it through scripts/controlplane, which finds the
// pinned binaries (scripts/lib/common.sh is the one place that knows where
// they are) and passes them here in the environment (see tools.go).
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

const usage = `scripts/controlplane start DIR [--owner-pid PID] [--audit]
                           [--cluster [--pools FILE] [--karpenter [--prices POLICY]
                            [--karpenter-later]] [--no-rollouts] [--kinds KIND,...]]
                           [--kubernetes 1.34] [-- KUBE-APISERVER-FLAGS...]
    Fresh data under DIR, a new CA, serving and admin client certificates,
    RBAC and service-account tokens on; writes DIR/kubeconfig and returns
    once /readyz answers ok. With --owner-pid, a watchdog stops everything
    when that process exits, however it exits. With --audit, every request
    is logged (metadata; a pod's creation with its body) to
    DIR/logs/audit.log, for counting who read and wrote what. With
    --cluster, also kube-scheduler, kube-controller-manager and kwok, and
    the nodes of the pool file FILE (default config/sim/default.yaml)
    created by simcluster; returns once every node is Ready. With
    --karpenter too, Karpenter (its kwok provider, sigs.k8s.io/karpenter/kwok)
    launches nodes for pending pods from the pool file's NodePools (default
    config/sim/karpenter-launch.yaml), the catalog's types at its prices
    (DIR/karpenter-instance-types.json), or at the prices of the
    PlacementPolicy manifest POLICY's spec.prices where it sets them;
    returns once it is ready. Beside it, the offering prices and
    availability Karpenter's AWS provider publishes (its kwok provider does
    not), served from that file at the URL in DIR/karpenter-prices.url. With --karpenter-later too, the NodePools are
    created but Karpenter waits for start-karpenter DIR (a benchmark fills
    the cluster first). With --no-rollouts, kube-controller-manager runs
    without the Deployment, ReplicaSet, StatefulSet and Job controllers:
    workloads are objects that never roll out, and pods are created bound to
    their nodes (the scale benchmark's way to fill a large cluster cheaply).
    With --kinds, the real controllers of those kinds, each with its CRDs
    (Established before it starts), as processes of this machine beside the
    cluster: kuberay, KubeRay's operator (RayCluster, RayService, RayJob;
    no webhook); lws, the LeaderWorkerSet controller, and jobset, the JobSet
    controller (their webhooks served on 127.0.0.1, registered by URL; not
    with --no-rollouts: they make StatefulSets and Jobs), and trainer,
    Kubeflow Trainer v2's controller manager (TrainJob; with jobset; its
    webhooks reached through an ExternalName Service, its runtimes
    applied), and kueue, Kueue's controller manager (ClusterQueue,
    LocalQueue, ResourceFlavor, Workload; it queues Jobs, and the JobSets,
    RayJobs, RayClusters, LeaderWorkerSets and TrainJobs of the kinds
    started with it; its webhooks reached the Trainer's way). Their logs
    are DIR/logs/KIND.log.
    With --kubernetes 1.34, the kube-apiserver of the previous supported line
    (tests/controlplane/k8s-1.34) instead of the pinned release; not with
    --cluster.
scripts/controlplane stop DIR
    Stops every process it started (and the watchdog); safe to run twice or
    after whatever started them crashed.
scripts/controlplane env [DIR]
    Prints the exports that put the pinned kubectl, helm and kube-score on
    PATH (and KUBECONFIG, given DIR).
scripts/controlplane status DIR
scripts/controlplane restart-apiserver DIR
    Restarts kube-apiserver on the same port; etcd keeps the data.
scripts/controlplane start-karpenter DIR
    Starts the Karpenter that start --karpenter-later left out.
scripts/controlplane start-kinds DIR KIND,...
    Starts the controllers of start --kinds in a simulated cluster already
    running without them (the demo's, once scripts/setup --kinds has built
    them): their CRDs, Established, then the controllers.
scripts/controlplane restart-kinds DIR
    Starts the controllers of start --kinds again (their CRDs stay).
scripts/controlplane restart-karpenter DIR
    Starts Karpenter again on DIR/karpenter-instance-types.json as it is
    now (a test changed an offering's price or availability there).
scripts/controlplane node-prices DIR
    Prints what each node Karpenter launched costs as Karpenter weighs it:
    its launch price with the NodeOverlays Karpenter accepted, as JSON.
`

// failure ends the command with a message; main prints it and exits 1.
type failure struct{ message string }

func (f failure) Error() string { return f.message }

func fail(format string, args ...any) error { return failure{fmt.Sprintf(format, args...)} }

// errUsage: the arguments do not make a command; exit 2 with the usage.
var errUsage = fmt.Errorf("usage")

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[controlplane] "+format+"\n", args...)
}

func main() {
	err := run(os.Args[1:])
	switch {
	case err == nil:
	case err == errUsage:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	default:
		logf("error: %v", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errUsage
	}
	command, rest := args[0], args[1:]
	if command == "watchdog" { // started by start --owner-pid, needs no tools
		return watchdog(rest)
	}
	t, err := toolsFromEnvironment()
	if err != nil {
		return err
	}
	switch command {
	case "start":
		o, err := parseStart(rest, t)
		if err != nil {
			return err
		}
		return start(o, t)
	case "stop":
		dir, err := oneDir(rest)
		if err != nil {
			return err
		}
		return stop(dir)
	case "env":
		if len(rest) > 1 {
			return errUsage
		}
		printEnv(rest, t)
		return nil
	case "start-kinds":
		if len(rest) != 2 {
			return errUsage
		}
		dir, err := existingDir(rest[:1])
		if err != nil {
			return err
		}
		kinds, err := parseKinds(rest[1])
		if err != nil {
			return err
		}
		return startKindsLater(dir, kinds, t)
	}
	// The commands on the directory of a running control plane.
	onDir := map[string]func(dir string) error{
		"status":            status,
		"restart-apiserver": restartAPIServer,
		"start-karpenter":   func(dir string) error { return startKarpenterLater(dir, t) },
		"restart-karpenter": func(dir string) error { return restartKarpenter(dir, t) },
		"restart-kinds":     func(dir string) error { return restartKinds(dir, t) },
		"node-prices": func(dir string) error {
			return runAttached(t.simcluster(), "--node-prices", "--kubeconfig", filepath.Join(dir, "kubeconfig"))
		},
	}
	if command, ok := onDir[command]; ok {
		dir, err := existingDir(rest)
		if err != nil {
			return err
		}
		return command(dir)
	}
	return errUsage
}

func oneDir(args []string) (string, error) {
	if len(args) != 1 {
		return "", errUsage
	}
	return args[0], nil
}

// existingDir: the one argument, a directory that exists, made absolute
// (a process is known as one of DIR's by DIR on its command line).
func existingDir(args []string) (string, error) {
	dir, err := oneDir(args)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", fail("%s is not a directory", dir)
	}
	return filepath.Abs(dir)
}
