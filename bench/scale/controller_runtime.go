package main

// The controller-runtime reactor (bench/scale/crreactor, its own module):
// the operator's job written as a kubebuilder user would, with a fixed
// answer. It runs under its own service account, with the permissions a
// kubebuilder project's RBAC markers would give it, and serves
// controller-runtime's metrics and /readyz like the operator, so the
// harness waits for it and measures it the same way.

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

const (
	controllerRuntimeUser         = "system:serviceaccount:bench:controller-runtime"
	controllerRuntimeRBACManifest = `apiVersion: v1
kind: ServiceAccount
metadata: {name: controller-runtime, namespace: bench}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: bench-controller-runtime}
rules:
- apiGroups: [gpuplacement.io]
  resources: [gpuworkloads]
  verbs: [get, list, watch, update, patch]
- apiGroups: [gpuplacement.io]
  resources: [gpuworkloads/status]
  verbs: [get, update, patch]
- apiGroups: [gpuplacement.io]
  resources: [gpuworkloads/finalizers]
  verbs: [update]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, patch]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bench-controller-runtime}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: bench-controller-runtime}
subjects: [{kind: ServiceAccount, name: controller-runtime, namespace: bench}]
`
)

// startControllerRuntime starts the reactor with its own kubeconfig and
// waits for /readyz (its caches synced); returns it and the seconds that took.
func startControllerRuntime(settings Settings, plane *ControlPlane, logPath string) (*Reactor, float64, error) {
	if settings.ControllerRuntime == "" {
		return nil, 0, fmt.Errorf("no controller-runtime reactor binary: pass --controller-runtime BIN (bench/run-scale builds it)")
	}
	kubeconfig, err := plane.Kubeconfig(benchNamespace, "controller-runtime", "controller-runtime.kubeconfig")
	if err != nil {
		return nil, 0, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	reactor := &Reactor{metricsPort: freePort(), healthPort: freePort()}
	args := append([]string{"--kubeconfig", kubeconfig,
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", reactor.metricsPort),
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", reactor.healthPort)},
		settings.ControllerRuntimeFlags...)
	reactor.command = exec.Command(settings.ControllerRuntime, args...)
	reactor.command.Stdout, reactor.command.Stderr = logFile, logFile
	if err := reactor.begin(); err != nil {
		return nil, 0, err
	}
	ready, err := reactor.waitReady(2 * time.Minute)
	if err != nil {
		reactor.stop()
		return nil, 0, fmt.Errorf("the controller-runtime reactor: %v (see %s)", err, logPath)
	}
	return reactor, ready, nil
}
