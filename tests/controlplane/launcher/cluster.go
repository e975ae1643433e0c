package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const nodesReadyTimeout = 300 * time.Second

// kube-controller-manager's controllers: only what Deployments,
// StatefulSets, Jobs, namespaces and service accounts need, pod garbage
// collection for pods left on deleted nodes, the ResourceClaim controller
// (a pod's claims made from its ResourceClaimTemplates, Dynamic Resource
// Allocation), and the node lifecycle
// controller, which lifts the node.kubernetes.io/not-ready taint the API
// server's TaintNodesByCondition admission puts on every new node once kwok
// has made it Ready, as on a real cluster. Its grace period is an hour
// because kwok refreshes a node's status only every 10 to 20 minutes (see
// kwok-stages) and keeps no leases; a thousand idle nodes then cost nothing.
const (
	controllers = "deployment-controller,replicaset-controller,statefulset-controller," +
		"garbage-collector-controller,namespace-controller,serviceaccount-controller," +
		"serviceaccount-token-controller,pod-garbage-collector-controller,job-controller," +
		"resourceclaim-controller,node-lifecycle-controller"
	controllersNoRollouts = "garbage-collector-controller,namespace-controller," +
		"serviceaccount-controller,serviceaccount-token-controller," +
		"pod-garbage-collector-controller,node-lifecycle-controller"
)

// Nodes kwok manages carry this annotation (simcluster puts it on every
// node it creates); any other node is left alone.
const kwokNodeSelector = "kwok.x-k8s.io/node=fake"

// startCluster starts kube-scheduler, kube-controller-manager and kwok
// around the running API server, creates the pool file's nodes and waits
// for them to be Ready; then Karpenter, unless it is deferred, and the
// kinds' controllers.
func startCluster(dir string, o startOptions, t tools) error {
	pki := filepath.Join(dir, "pki")
	apiPort, err := apiServerPort(dir)
	if err != nil {
		return err
	}
	if err := generateClusterPKI(pki); err != nil {
		return fmt.Errorf("cannot make the components' certificates in %s: %v", pki, err)
	}
	for _, name := range []string{"kube-scheduler", "kube-controller-manager"} {
		if err := writeKubeconfig(pki, apiPort, name, filepath.Join(dir, name+".kubeconfig")); err != nil {
			return err
		}
	}
	if err := startScheduler(dir, pki, t); err != nil {
		return err
	}
	if err := startControllerManager(dir, pki, o.noRollouts, t); err != nil {
		return err
	}
	if err := startKwok(dir, t); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.pools"), []byte(o.pools+"\n"), 0o644); err != nil {
		return err
	}
	nodes := []string{"--catalog", t.catalog(), "--pools", o.pools,
		"--kubeconfig", filepath.Join(dir, "kubeconfig"), "--kubelet-version", t.k8sVersion,
		"--wait-ready", nodesReadyTimeout.String()}
	if o.karpenter {
		nodes = append(nodes, "--karpenter")
	}
	if err := runLogged(dir, "simcluster", t.simcluster(), nodes...); err != nil {
		return err
	}
	if o.karpenter && !o.karpenterLater {
		if err := startKarpenter(dir, o.pools, o.prices, t); err != nil {
			return err
		}
	}
	if o.kinds != nil {
		return startKinds(dir, o.kinds, t)
	}
	return nil
}

// Client QPS well above the defaults (scheduler 50, controller-manager 20):
// benchmarks create Deployments by the thousand on this one machine.
func startScheduler(dir, pki string, t tools) error {
	kubeconfig := filepath.Join(dir, "kube-scheduler.kubeconfig")
	config := filepath.Join(dir, "kube-scheduler.yaml")
	text := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`, kubeconfig)
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		return err
	}
	return startServing(dir, "kube-scheduler", anyTLSHealthz, filepath.Join(t.clusterBin, "kube-scheduler"),
		"--config", config, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--bind-address", "127.0.0.1",
		"--secure-port", "@PORT@", "--cert-dir", filepath.Join(pki, "kube-scheduler-serving"))
}

// Each controller under its own service account, as kubeadm runs it, so
// the bootstrap per-controller roles apply; sa.key signs the legacy token
// secrets and ca.crt goes into them.
func startControllerManager(dir, pki string, noRollouts bool, t tools) error {
	kubeconfig := filepath.Join(dir, "kube-controller-manager.kubeconfig")
	list := controllers
	if noRollouts {
		list = controllersNoRollouts
	}
	return startServing(dir, "kube-controller-manager", anyTLSHealthz,
		filepath.Join(t.clusterBin, "kube-controller-manager"),
		"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig, "--bind-address", "127.0.0.1",
		"--secure-port", "@PORT@", "--cert-dir", filepath.Join(pki, "kube-controller-manager-serving"),
		"--leader-elect=false", "--use-service-account-credentials=true",
		"--service-account-private-key-file", filepath.Join(pki, "sa.key"),
		"--root-ca-file", filepath.Join(pki, "ca.crt"),
		"--controllers", list, "--node-monitor-grace-period", "1h",
		"--kube-api-qps", "500", "--kube-api-burst", "1000")
}

// kwok's stages come from the kwok module itself (kwok-stages), so they
// always match the kwok binary. No node leases: nothing reads them here.
// kwok's own server (plain HTTP) answers /healthz once its controllers have
// started: a readiness to wait on. Its process being alive was not: that
// check failed starts on 2026-11-23 and 11-25, and a CI run on 11-26 with
// nothing in kwok's log.
func startKwok(dir string, t tools) error {
	stages, err := exec.Command(filepath.Join(t.kwokBin, "kwok-stages")).Output()
	if err != nil {
		return fmt.Errorf("kwok-stages failed: %v", err)
	}
	config := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(config, stages, 0o644); err != nil {
		return err
	}
	return startServing(dir, "kwok", plainHealthz, filepath.Join(t.kwokBin, "kwok"),
		"--kubeconfig", filepath.Join(dir, "kubeconfig"), "--config", config,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector", kwokNodeSelector,
		"--cidr", "10.64.0.0/10", "--node-lease-duration-seconds", "0",
		"--server-address", "127.0.0.1:@PORT@")
}

func anyTLSHealthz(port int) bool {
	return httpOK(anyTLS, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
}

func plainHealthz(port int) bool {
	return httpOK(plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
}

// startServing starts a component serving a health endpoint on a port
// picked here (@PORT@ in its arguments) and waits for probe to answer there.
// A port taken meanwhile, say as some client's ephemeral port, which
// pickPorts cannot see, means another try elsewhere; so does a process that
// ended at start for a reason its log does not give (once seen of kwok in
// CI, 2026-11-26).
func startServing(dir, name string, probe func(port int) bool, command ...string) error {
	for attempt := 1; ; attempt++ {
		port := pickPorts(1)[0]
		args := make([]string, len(command))
		for i, arg := range command {
			args[i] = strings.ReplaceAll(arg, "@PORT@", strconv.Itoa(port))
		}
		if err := startComponent(dir, name, nil, args...); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".port"), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
			return err
		}
		err := waitFor(name+" /healthz", readyTimeout, dir, name, func() bool { return probe(port) })
		if err == nil {
			return nil
		}
		if attempt == 3 {
			return fmt.Errorf("%s did not start", name)
		}
		if _, running := livePid(dir, name); running && !logSays(dir, name, "address already in use") {
			// Running but not ready within the timeout: another try would
			// not do better.
			return fmt.Errorf("%s is not ready", name)
		}
		stopOne(dir, name)
		logf("retrying %s on another port", name)
	}
}

// startController starts a controller manager on nports ports picked here
// (ports[1] its health port, written to DIR/NAME.port), its command line
// made of them by command, and waits for ready; another two tries on other
// ports when one was taken meanwhile.
func startController(dir, name string, env []string, nports int, command func(ports []int) ([]string, error),
	ready func(ports []int) bool) error {
	for attempt := 1; ; attempt++ {
		ports := pickPorts(nports)
		args, err := command(ports)
		if err != nil {
			return err
		}
		if err := startComponent(dir, name, env, args...); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".port"), []byte(strconv.Itoa(ports[1])+"\n"), 0o644); err != nil {
			return err
		}
		if waitFor(name+" /readyz", readyTimeout, dir, name, func() bool { return ready(ports) }) == nil {
			// Ready, and still running a moment later: a controller manager
			// binds its metrics port beside its health port, and exits when
			// that one was taken.
			time.Sleep(time.Second)
			if _, running := livePid(dir, name); running {
				return nil
			}
		}
		if attempt == 3 || !logSays(dir, name, "address already in use") {
			return fmt.Errorf("%s did not start", name)
		}
		stopOne(dir, name)
		logf("retrying %s on other ports", name)
	}
}

func logSays(dir, name, text string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "logs", name+".log"))
	return err == nil && strings.Contains(string(data), text)
}

// runLogged runs a program to its end, its output appended to
// DIR/logs/NAME.log; on failure it shows the log's last lines.
func runLogged(dir, name, program string, args ...string) error {
	logFile, err := os.OpenFile(filepath.Join(dir, "logs", name+".log"),
		os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(program, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Run(); err != nil {
		path := filepath.Join(dir, "logs", name+".log")
		logf("%s failed (%v); last lines of %s:", name, err, path)
		for _, line := range lastLines(path, 20) {
			fmt.Fprintln(os.Stderr, line)
		}
		return fmt.Errorf("%s failed", name)
	}
	return nil
}

// runAttached runs a tool with this process's output: what it prints is
// the command's answer.
func runAttached(program string, args ...string) error {
	cmd := exec.Command(program, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fail("%s: %v", filepath.Base(program), err)
	}
	return nil
}
