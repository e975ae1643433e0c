package main

// One fresh control plane per measured run, started by the project's own
// scripts/controlplane, with the audit log limited to the reactors' users.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	benchNamespace    = "bench"
	operatorUser      = "system:serviceaccount:gpu-placement-system:gpu-placement-operator"
	floorUser         = "system:serviceaccount:bench:floor"
	workloadsPath     = "/apis/gpuplacement.io/v1alpha1/namespaces/" + benchNamespace + "/gpuworkloads"
	deploymentsPath   = "/apis/apps/v1/namespaces/" + benchNamespace + "/deployments"
	policiesPath      = "/apis/gpuplacement.io/v1alpha1/placementpolicies"
	floorRBACManifest = `apiVersion: v1
kind: ServiceAccount
metadata: {name: floor, namespace: bench}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bench-floor}
rules:
- apiGroups: [gpuplacement.io]
  resources: [gpuworkloads]
  verbs: [list, watch]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [patch]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bench-floor}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: bench-floor}
subjects: [{kind: ServiceAccount, name: floor, namespace: bench}]
`
)

type ControlPlane struct {
	repo   string
	dir    string
	env    []string // PATH with the pinned kubectl, KUBECONFIG
	creds  Credentials
	client *Client
	// kube-apiserver and etcd, whose CPU time the figures include.
	serverPids []int
	// CPU seconds of kube-apiserver processes restarted away (RestartAPIServer).
	restartedCPU float64
	// Cluster mode: kube-scheduler, kube-controller-manager and kwok, whose
	// CPU is reported apart from the API server's.
	clusterPids map[string]int
}

var clusterProcesses = []string{"kube-scheduler", "kube-controller-manager", "kwok"}

// apiServerExtraFlags go to every kube-apiserver the harness starts (writecost
// --profile sets --profiling=true; scripts/controlplane turns it off).
var apiServerExtraFlags []string

// startControlPlane starts kube-apiserver and etcd in dir; with pools (a
// pool file) a simulated cluster too: kube-scheduler,
// kube-controller-manager, kwok and the pool file's nodes, and with
// karpenter Karpenter's kwok provider, launching the pool file's NodePools;
// clusterFlags are scripts/controlplane's (--no-rollouts).
func startControlPlane(repo, dir string, stopWithUs bool, pools string, karpenter bool,
	clusterFlags ...string) (*ControlPlane, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	policyFile := filepath.Join(filepath.Dir(dir), "audit-policy.yaml")
	if err := os.WriteFile(policyFile, []byte(fmt.Sprintf(auditPolicy, operatorUser, floorUser, controllerRuntimeUser)), 0o644); err != nil {
		return nil, err
	}
	script := filepath.Join(repo, "scripts", "controlplane")
	args := []string{"start", dir}
	if stopWithUs {
		args = append(args, "--owner-pid", strconv.Itoa(os.Getpid()))
	}
	if pools != "" {
		args = append(args, "--cluster", "--pools", pools)
		if karpenter {
			args = append(args, "--karpenter")
		}
		args = append(args, clusterFlags...)
	}
	args = append(args, "--", "--audit-policy-file", policyFile, "--audit-log-path",
		filepath.Join(dir, "logs", "audit.log"), "--audit-log-maxsize", "0", "--audit-log-mode", "batch",
		"--audit-log-batch-max-wait", "1s")
	args = append(args, apiServerExtraFlags...)
	start := exec.Command(script, args...)
	if output, err := start.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %v\n%s", err, output)
	}
	plane := &ControlPlane{repo: repo, dir: dir}
	envOutput, err := exec.Command(script, "env", dir).Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/controlplane env: %v", err)
	}
	plane.env = os.Environ()
	for _, line := range strings.Split(string(envOutput), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "export ")
		if name, value, ok := strings.Cut(line, "="); ok {
			value = strings.Trim(value, `"`)
			value = strings.ReplaceAll(value, "$PATH", os.Getenv("PATH"))
			plane.env = append(plane.env, name+"="+value)
		}
	}
	server, err := kubeconfigServer(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	pki := filepath.Join(dir, "pki")
	plane.creds = Credentials{Server: server, CAFile: filepath.Join(pki, "ca.crt"),
		CertFile: filepath.Join(pki, "admin.crt"), KeyFile: filepath.Join(pki, "admin.key")}
	if plane.client, err = NewClient(plane.creds); err != nil {
		return nil, err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		pid, err := readPid(dir, name)
		if err != nil {
			return nil, err
		}
		plane.serverPids = append(plane.serverPids, pid)
	}
	if pools != "" {
		plane.clusterPids = map[string]int{}
		processes := clusterProcesses
		if karpenter {
			processes = append(append([]string(nil), processes...), "karpenter")
		}
		for _, name := range processes {
			if plane.clusterPids[name], err = readPid(dir, name); err != nil {
				return nil, err
			}
		}
	}
	return plane, nil
}

// StartKarpenter starts the Karpenter a control plane started with
// --karpenter-later left out.
func (p *ControlPlane) StartKarpenter() error {
	script := filepath.Join(p.repo, "scripts", "controlplane")
	if output, err := exec.Command(script, "start-karpenter", p.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("starting Karpenter: %v\n%s", err, output)
	}
	pid, err := readPid(p.dir, "karpenter")
	if err != nil {
		return err
	}
	p.clusterPids["karpenter"] = pid
	return nil
}

func readPid(dir, name string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, name+".pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("%s.pid: %v", name, err)
	}
	return pid, nil
}

// ClusterCPUSeconds: each simulated-cluster process's CPU time so far.
func (p *ControlPlane) ClusterCPUSeconds() map[string]float64 {
	seconds := map[string]float64{}
	for name, pid := range p.clusterPids {
		if stats, ok := readProc(pid); ok {
			seconds[name] = stats.CPUSeconds
		}
	}
	return seconds
}

// capacityLabel finds the label every node tells spot from on-demand by:
// Karpenter's (the operator's default) or managed node groups'; "" when
// neither is on every node (then the policy writes no capacity selector).
func (p *ControlPlane) capacityLabel() (map[string]string, error) {
	nodes, _, err := p.client.ListAll("/api/v1/nodes")
	if err != nil {
		return nil, err
	}
	schemes := []map[string]string{
		{"key": "karpenter.sh/capacity-type", "onDemand": "on-demand", "spot": "spot"},
		{"key": "eks.amazonaws.com/capacityType", "onDemand": "ON_DEMAND", "spot": "SPOT"},
	}
	for _, scheme := range schemes {
		everyNode := len(nodes) > 0
		for _, node := range nodes {
			if _, ok := node.Metadata.Labels[scheme["key"]]; !ok {
				everyNode = false
				break
			}
		}
		if everyNode {
			return scheme, nil
		}
	}
	return map[string]string{"key": ""}, nil
}

func kubeconfigServer(path string) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(scanner.Text()), "server:"); ok {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("%s: no server", path)
}

func (p *ControlPlane) Stop() {
	exec.Command(filepath.Join(p.repo, "scripts", "controlplane"), "stop", p.dir).Run()
}

func (p *ControlPlane) kubectl(stdin string, args ...string) (string, error) {
	command := exec.Command("kubectl", args...)
	command.Env = p.env
	command.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	command.Stdout, command.Stderr = &out, &errOut
	// exec.Command resolved kubectl on our PATH; use the pinned one.
	for _, entry := range p.env {
		if path, ok := strings.CutPrefix(entry, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				if candidate := filepath.Join(dir, "kubectl"); isExecutable(candidate) {
					command.Path = candidate
					break
				}
			}
		}
	}
	if err := command.Run(); err != nil {
		return "", fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode()&0o111 != 0
}

// Install sets up the CRDs, the bench namespace and both reactors' identities.
func (p *ControlPlane) Install() error {
	steps := [][]string{
		{"apply", "-f", filepath.Join(p.repo, "crds")},
		{"wait", "--for", "condition=established", "--timeout=60s", "crd/gpuworkloads.gpuplacement.io",
			"crd/placementpolicies.gpuplacement.io"},
		{"create", "namespace", benchNamespace},
		{"apply", "-f", filepath.Join(p.repo, "config", "rbac")},
	}
	for _, step := range steps {
		if _, err := p.kubectl("", step...); err != nil {
			return err
		}
	}
	if _, err := p.kubectl(floorRBACManifest, "apply", "-f", "-"); err != nil {
		return err
	}
	_, err := p.kubectl(controllerRuntimeRBACManifest, "apply", "-f", "-")
	return err
}

func (p *ControlPlane) token(namespace, serviceAccount string) (string, error) {
	out, err := p.kubectl("", "create", "token", serviceAccount, "-n", namespace, "--duration", "12h")
	return strings.TrimSpace(out), err
}

// OperatorKubeconfig writes a kubeconfig with the operator's token.
func (p *ControlPlane) OperatorKubeconfig() (string, error) {
	return p.Kubeconfig("gpu-placement-system", "gpu-placement-operator", "operator.kubeconfig")
}

// Kubeconfig writes DIR/file, a kubeconfig with a service account's token.
func (p *ControlPlane) Kubeconfig(namespace, serviceAccount, file string) (string, error) {
	token, err := p.token(namespace, serviceAccount)
	if err != nil {
		return "", err
	}
	path := filepath.Join(p.dir, file)
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: bench, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: operator, user: {token: %q}}]
contexts: [{name: bench, context: {cluster: bench, user: operator}}]
current-context: bench
`, p.creds.Server, p.creds.CAFile, token)
	return path, os.WriteFile(path, []byte(config), 0o600)
}

// FloorCredentials writes the floor's credentials file.
func (p *ControlPlane) FloorCredentials() (string, error) {
	token, err := p.token(benchNamespace, "floor")
	if err != nil {
		return "", err
	}
	path := filepath.Join(p.dir, "floor-credentials.json")
	data := fmt.Sprintf(`{"server": %q, "caFile": %q, "token": %q}`, p.creds.Server, p.creds.CAFile, token)
	return path, os.WriteFile(path, []byte(data), 0o600)
}

// ServerCPUSeconds is the CPU time kube-apiserver and etcd have used so far.
func (p *ControlPlane) ServerCPUSeconds() (float64, error) {
	apiserver, etcd, err := p.CPUSeconds()
	return apiserver + etcd, err
}

// CPUSeconds is the CPU time kube-apiserver (those restarted away
// included) and etcd have used so far, each.
func (p *ControlPlane) CPUSeconds() (apiserver, etcd float64, err error) {
	var seconds [2]float64
	for i, pid := range p.serverPids {
		stats, ok := readProc(pid)
		if !ok {
			return 0, 0, fmt.Errorf("the control plane process %d is gone", pid)
		}
		seconds[i] = stats.CPUSeconds
	}
	return seconds[0] + p.restartedCPU, seconds[1], nil
}

// RestartAPIServer stops kube-apiserver and starts it again on the same
// port (scripts/controlplane restart-apiserver), etcd untouched: every
// watch ends, every connection breaks. The old process's CPU time, read
// just before it is stopped, stays in CPUSeconds (what its shutdown used
// after that is not counted).
func (p *ControlPlane) RestartAPIServer() error {
	before, _ := readProc(p.serverPids[0])
	script := filepath.Join(p.repo, "scripts", "controlplane")
	if output, err := exec.Command(script, "restart-apiserver", p.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("restarting kube-apiserver: %v\n%s", err, output)
	}
	data, err := os.ReadFile(filepath.Join(p.dir, "kube-apiserver.pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return fmt.Errorf("kube-apiserver.pid: %v", err)
	}
	p.restartedCPU += before.CPUSeconds
	p.serverPids[0] = pid
	return nil
}

// Audit reads the audit log once the batch writer has flushed.
func (p *ControlPlane) Audit() ([]Request, error) {
	time.Sleep(1500 * time.Millisecond)
	return readAudit(filepath.Join(p.dir, "logs", "audit.log"))
}
