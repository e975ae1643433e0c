package main

// The objects of a run: N Deployments, N GpuWorkloads of two kinds (so a
// price change moves half of them), the bench's PlacementPolicy, and an
// independent watch that timestamps every Deployment change.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

func deploymentName(i int) string { return fmt.Sprintf("w-%05d", i) }

func deploymentManifest(name string) map[string]any {
	labels := map[string]string{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": benchNamespace},
		"spec": map[string]any{
			"replicas": benchReplicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []map[string]any{{
					"name": "server", "image": "registry.k8s.io/pause:3.10",
					"resources": map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "64Mi"}},
				}}},
			},
		},
	}
}

// clusterDeploymentManifest: the same Deployment, its pods labelled with
// their workload so that the harness's one pod watch maps each back.
func clusterDeploymentManifest(name string) map[string]any {
	manifest := deploymentManifest(name)
	template := manifest["spec"].(map[string]any)["template"].(map[string]any)
	template["metadata"] = map[string]any{"labels": map[string]string{"app": name, workloadLabel: name}}
	return manifest
}

// Even workloads are kind A (small inference: moves when its instance type
// gets dearer); odd ones kind B (fine-tuning: stays).
func workloadSpec(i int) map[string]any {
	spec := map[string]any{"targetRef": map[string]string{"kind": "Deployment", "name": deploymentName(i)}}
	if i%2 == 0 {
		spec["workload"] = map[string]any{"kind": "Inference", "latencyTargetMs": 100}
		spec["model"] = map[string]any{"parameters": "7B", "precision": "fp16", "framework": "PyTorch",
			"architecture": "Transformer"}
		spec["objective"] = "CostOptimized"
	} else {
		spec["workload"] = map[string]any{"kind": "FineTuning"}
		spec["model"] = map[string]any{"parameters": "13B", "precision": "bf16", "framework": "PyTorch",
			"architecture": "Transformer"}
		spec["objective"] = "Balanced"
	}
	return spec
}

func workloadManifest(i int) map[string]any {
	return map[string]any{
		"apiVersion": "gpuplacement.io/v1alpha1", "kind": "GpuWorkload",
		"metadata": map[string]any{"name": deploymentName(i), "namespace": benchNamespace},
		"spec":     workloadSpec(i),
	}
}

func policyManifest(prices []map[string]string) map[string]any {
	if prices == nil {
		prices = []map[string]string{}
	}
	return map[string]any{
		"apiVersion": "gpuplacement.io/v1alpha1", "kind": "PlacementPolicy",
		"metadata": map[string]any{"name": "default"},
		"spec": map[string]any{
			"prices": prices,
			// No kube-controller-manager runs: during re-placement the
			// harness completes each rollout it sees (rolloutCompleter), so
			// moves are paced by the operator at the policy's highest limit.
			"replacement": map[string]any{"minSavingsPercent": 10, "cooldown": "0s",
				"maxConcurrentRollouts": 1000},
		},
	}
}

// expectedInstanceType asks the operator's own CLI where workload i goes
// under a policy: the ground truth for which workloads must move.
func expectedInstanceType(operator, dir string, i int, policy map[string]any) (string, error) {
	workloadFile := filepath.Join(dir, fmt.Sprintf("expected-workload-%d.json", i%2))
	policyFile := filepath.Join(dir, "expected-policy.json")
	for file, object := range map[string]any{workloadFile: workloadManifest(i), policyFile: policy} {
		data, _ := json.Marshal(object)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return "", err
		}
	}
	out, err := exec.Command(operator, "recommend", "-f", workloadFile, "--policy", policyFile, "-o", "json").Output()
	if err != nil {
		return "", fmt.Errorf("gpu-placement recommend: %v", err)
	}
	var answer struct {
		Placement struct {
			InstanceType string `json:"instanceType"`
		} `json:"placement"`
	}
	if err := json.Unmarshal(out, &answer); err != nil || answer.Placement.InstanceType == "" {
		return "", fmt.Errorf("gpu-placement recommend: no placement in %s", out)
	}
	return answer.Placement.InstanceType, nil
}

// createAll creates objects with a few connections in parallel, as fast as
// the server takes them (set-up, not measured).
func createAll(client *Client, path string, n int, manifest func(int) map[string]any) error {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := client.Create(path, manifest(i)); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// createAtRate creates N GpuWorkloads (manifest(i)) at most `rate` per
// second and returns when each request was sent. midway, when not nil, runs once
// half-way, between two creations (the schedule resumes after it); a
// creation that fails on the way (the server restarting) is sent again.
func createAtRate(client *Client, n int, rate float64, manifest func(int) map[string]any,
	midway func()) ([]time.Time, error) {
	sent := make([]time.Time, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int, 64)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sent[i] = time.Now()
				if err := createWithRetries(client, workloadsPath, manifest(i)); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if midway != nil && i == n/2 {
			began := time.Now()
			midway()
			start = start.Add(time.Since(began))
		}
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return sent, firstErr
}

// createWithRetries retries a creation that did not reach the server or
// that it could not serve, for up to 30 s; 409 on a retry means an
// earlier try got through.
func createWithRetries(client *Client, path string, body any) error {
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; ; attempt++ {
		err := client.Create(path, body)
		var apiErr *APIError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict && attempt > 0:
			return nil
		case errors.As(err, &apiErr) && apiErr.Code < 500 && apiErr.Code != http.StatusTooManyRequests:
			return err
		case time.Now().After(deadline):
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// DeploymentWatch follows the bench namespace's Deployments and records,
// per Deployment, its resourceVersion, the instance type its node selector
// names, and when that last changed.
type DeploymentWatch struct {
	// Called (outside the lock) for a Deployment whose spec generation its
	// status has not observed: a rollout a Deployment controller would run.
	OnRollout func(name string, generation int64)
	mu        sync.Mutex
	state     map[string]*deploymentState
	cancel    context.CancelFunc
	errs      chan error
}

type deploymentState struct {
	resourceVersion string
	instanceType    string
	placedAt        time.Time // first time it carried a node selector
	changedAt       time.Time // last time the instance type changed
	// Its status says the current template is rolled out: observed, every
	// replica updated and available, none of an older one left.
	rolledOut bool
}

type deploymentSpec struct {
	Template struct {
		Spec struct {
			NodeSelector map[string]string `json:"nodeSelector"`
		} `json:"spec"`
	} `json:"template"`
}

// selectedInstanceType: the instance type the template selects or, where
// the operator selects a device rather than a type (Karpenter's and EKS
// Auto Mode's device labels, so that any type with the device may launch),
// the device; "" when the template selects neither (not placed).
func selectedInstanceType(raw json.RawMessage) string {
	var spec deploymentSpec
	if json.Unmarshal(raw, &spec) != nil {
		return ""
	}
	selector := spec.Template.Spec.NodeSelector
	if instanceType := selector["node.kubernetes.io/instance-type"]; instanceType != "" {
		return instanceType
	}
	for _, device := range [][2]string{
		{"karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count"},
		{"karpenter.k8s.aws/instance-accelerator-name", "karpenter.k8s.aws/instance-accelerator-count"},
		{"eks.amazonaws.com/instance-gpu-name", "eks.amazonaws.com/instance-gpu-count"},
	} {
		if name := selector[device[0]]; name != "" {
			return name + " x" + selector[device[1]]
		}
	}
	return ""
}

func watchDeployments(client *Client) (*DeploymentWatch, error) {
	items, resourceVersion, err := client.ListAll(deploymentsPath)
	if err != nil {
		return nil, err
	}
	watch := &DeploymentWatch{state: map[string]*deploymentState{}, errs: make(chan error, 1)}
	listed := time.Now()
	for _, item := range items {
		state := &deploymentState{resourceVersion: item.Metadata.ResourceVersion,
			instanceType: selectedInstanceType(item.Spec)}
		if state.instanceType != "" {
			state.placedAt = listed // placed before the watch began (a watch started again)
		}
		watch.state[item.Metadata.Name] = state
	}
	ctx, cancel := context.WithCancel(context.Background())
	watch.cancel = cancel
	go func() {
		watch.errs <- client.Follow(ctx, deploymentsPath, resourceVersion, watch.observe,
			func(items []Object, at time.Time) {
				for _, item := range items {
					watch.observe(WatchEvent{Type: "MODIFIED", Object: item}, at)
				}
			},
			func(err error) { logf("the harness's Deployment watch ended (%v): reopening it", err) })
	}()
	return watch, nil
}

func (w *DeploymentWatch) observe(event WatchEvent, at time.Time) {
	if event.Type != "ADDED" && event.Type != "MODIFIED" {
		return
	}
	instanceType := selectedInstanceType(event.Object.Spec)
	var status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
		Replicas           int   `json:"replicas"`
		UpdatedReplicas    int   `json:"updatedReplicas"`
		AvailableReplicas  int   `json:"availableReplicas"`
	}
	json.Unmarshal(event.Object.Status, &status)
	generation := event.Object.Metadata.Generation
	w.mu.Lock()
	onRollout := w.OnRollout
	defer func() {
		w.mu.Unlock()
		if onRollout != nil && status.ObservedGeneration < generation {
			onRollout(event.Object.Metadata.Name, generation)
		}
	}()
	state, ok := w.state[event.Object.Metadata.Name]
	if !ok {
		state = &deploymentState{}
		w.state[event.Object.Metadata.Name] = state
	}
	state.resourceVersion = event.Object.Metadata.ResourceVersion
	state.rolledOut = status.ObservedGeneration >= generation && status.Replicas == benchReplicas &&
		status.UpdatedReplicas == benchReplicas && status.AvailableReplicas == benchReplicas
	if instanceType != state.instanceType {
		state.instanceType = instanceType
		state.changedAt = at
	}
	if instanceType != "" && state.placedAt.IsZero() {
		state.placedAt = at
	}
}

func (w *DeploymentWatch) Stop() { w.cancel() }

func (w *DeploymentWatch) SetOnRollout(handler func(name string, generation int64)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.OnRollout = handler
}

// rolloutCompleter plays the Deployment controller for rollouts: it marks
// each new generation as rolled out (every replica updated and available).
type rolloutCompleter struct {
	mu      sync.Mutex
	stopped bool // add() after stop() drops the rollout: the watch may still call it
	work    chan rollout
	wg      sync.WaitGroup
}

type rollout struct {
	name       string
	generation int64
}

func startRolloutCompleter(client *Client) *rolloutCompleter {
	completer := &rolloutCompleter{work: make(chan rollout, 100000)}
	for w := 0; w < 8; w++ {
		completer.wg.Add(1)
		go func() {
			defer completer.wg.Done()
			for r := range completer.work {
				status := map[string]any{"status": map[string]any{"observedGeneration": r.generation,
					"replicas": benchReplicas, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}}
				if err := client.Patch(deploymentsPath+"/"+r.name+"/status", MergePatch, status); err != nil {
					logf("completing the rollout of %s: %v", r.name, err)
				}
			}
		}()
	}
	return completer
}

func (c *rolloutCompleter) add(name string, generation int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.work <- rollout{name, generation}
	}
}

func (c *rolloutCompleter) stop() {
	c.mu.Lock()
	c.stopped = true
	close(c.work)
	c.mu.Unlock()
	c.wg.Wait()
}

// Snapshot copies the state of every Deployment.
func (w *DeploymentWatch) Snapshot() map[string]deploymentState {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]deploymentState, len(w.state))
	for name, state := range w.state {
		out[name] = *state
	}
	return out
}

var errNotDone = errors.New("not done")

// WaitFor polls until done(snapshot) holds, the watch fails or the time is up.
func (w *DeploymentWatch) WaitFor(limit time.Duration, done func(map[string]deploymentState) bool) error {
	deadline := time.Now().Add(limit)
	for {
		if done(w.Snapshot()) {
			return nil
		}
		select {
		case err := <-w.errs:
			return fmt.Errorf("the Deployment watch ended: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v", errNotDone, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
