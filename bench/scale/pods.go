package main

// Cluster mode's watch of the bench namespace's pods: for each workload,
// when the pods of its placed template (those with a node selector; the
// Deployment's first pods have none) are all Running, and for pods still
// Pending, the scheduler's word on why. Each pod maps back to its workload
// by a label the harness puts on the Deployment's pod template. Kept per
// pod: a few bytes and an interned message, so 20,000 pods cost little.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	workloadLabel = "bench.gpuplacement.io/workload"
	benchReplicas = 1 // each Deployment's replicas
	podsPath      = "/api/v1/namespaces/" + benchNamespace + "/pods"
)

type podState struct {
	workload int
	placed   bool   // its template carries the placement (a node selector)
	running  bool   // phase Running
	node     string // where the scheduler bound it
	message  string // PodScheduled=False: the scheduler's message (interned)
}

type PodWatch struct {
	mu        sync.Mutex
	pods      map[string]*podState
	running   []int       // per workload: its placed pods Running
	runningAt []time.Time // per workload: when they first all were
	unplaced  int         // Running pods without a placement (the first pods)
	messages  map[string]string
	cancel    context.CancelFunc
	errs      chan error
}

// The part of a pod's spec and status the watch reads.
type podSpec struct {
	NodeSelector map[string]string `json:"nodeSelector"`
	NodeName     string            `json:"nodeName"`
}

type podStatus struct {
	Phase      string `json:"phase"`
	Conditions []struct {
		Type    string `json:"type"`
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"conditions"`
}

func watchPods(client *Client, size int) (*PodWatch, error) {
	watch := &PodWatch{pods: map[string]*podState{}, running: make([]int, size),
		runningAt: make([]time.Time, size), messages: map[string]string{}, errs: make(chan error, 1)}
	items, resourceVersion, err := client.ListAll(podsPath)
	if err != nil {
		return nil, err
	}
	watch.relist(items, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	watch.cancel = cancel
	go func() {
		watch.errs <- client.Follow(ctx, podsPath, resourceVersion, watch.observe, watch.relist,
			func(err error) { logf("the harness's pod watch ended (%v): reopening it", err) })
	}()
	return watch, nil
}

func (w *PodWatch) relist(items []Object, at time.Time) {
	for _, item := range items {
		w.observe(WatchEvent{Type: "MODIFIED", Object: item}, at)
	}
}

func (w *PodWatch) Stop() { w.cancel() }

func (w *PodWatch) observe(event WatchEvent, at time.Time) {
	var spec podSpec
	var status podStatus
	if !decodeIfAny(event.Object.Spec, &spec) || !decodeIfAny(event.Object.Status, &status) {
		return
	}
	name := event.Object.Metadata.Name
	index, ok := workloadIndex(event.Object.Metadata.Labels[workloadLabel])
	if !ok || index >= len(w.running) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, seen := w.pods[name]; seen {
		w.count(old, -1)
	}
	if event.Type == "DELETED" {
		delete(w.pods, name)
		return
	}
	state := &podState{workload: index, placed: len(spec.NodeSelector) > 0,
		running: status.Phase == "Running", node: w.intern(spec.NodeName)}
	for _, condition := range status.Conditions {
		if condition.Type == "PodScheduled" && condition.Status == "False" {
			state.message = w.intern(condition.Message)
		}
	}
	w.pods[name] = state
	w.count(state, +1)
	if state.placed && w.running[index] >= benchReplicas && w.runningAt[index].IsZero() {
		w.runningAt[index] = at
	}
}

func (w *PodWatch) count(state *podState, delta int) {
	switch {
	case !state.running:
	case state.placed:
		w.running[state.workload] += delta
	default:
		w.unplaced += delta
	}
}

// intern keeps one copy of each scheduler message and node name:
// thousands of pods share a handful of messages and a node each.
func (w *PodWatch) intern(message string) string {
	if kept, ok := w.messages[message]; ok {
		return kept
	}
	w.messages[message] = message
	return message
}

func decodeIfAny(raw json.RawMessage, out any) bool {
	return len(raw) == 0 || json.Unmarshal(raw, out) == nil
}

func workloadIndex(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "w-")
	if !ok {
		return 0, false
	}
	index, err := strconv.Atoi(digits)
	return index, err == nil
}

// RunningAt copies when each workload's placed pods first were all Running.
func (w *PodWatch) RunningAt() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.runningAt...)
}

// UnplacedRunning counts the Running pods that carry no placement.
func (w *PodWatch) UnplacedRunning() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unplaced
}

// Err is the watch's end, if it has ended.
func (w *PodWatch) Err() error {
	select {
	case err := <-w.errs:
		return fmt.Errorf("the pod watch ended: %v", err)
	default:
		return nil
	}
}

// whyNotRunning says, for each workload in `which`, why its placed pods
// are not all Running: the scheduler's message for a Pending pod, or the
// state it is in; counted by reason.
func (w *PodWatch) whyNotRunning(which []int, placed func(int) bool) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	byWorkload := map[int][]*podState{}
	for _, state := range w.pods {
		if state.placed {
			byWorkload[state.workload] = append(byWorkload[state.workload], state)
		}
	}
	reasons := map[string]int{}
	for _, index := range which {
		reasons[reasonFor(byWorkload[index], placed(index))]++
	}
	return reasons
}

func reasonFor(pods []*podState, placed bool) string {
	if !placed {
		return "the Deployment was not placed"
	}
	if len(pods) == 0 {
		return "no pod with the placement yet (the rollout has not created it)"
	}
	sort.Slice(pods, func(a, b int) bool { return pods[a].message > pods[b].message })
	for _, pod := range pods {
		switch {
		case pod.running:
		case pod.message != "":
			return "Pending: " + pod.message
		case pod.node == "":
			return "Pending, not yet scheduled"
		default:
			return "bound to a node, not Running yet"
		}
	}
	return "Running, fewer than the replicas"
}
