package main

// EKS mode: the operator at a large EKS cluster's size, with Karpenter
// beside it on the same cluster as the anchor (docs/benchmarks.md, "At EKS
// scale"). The cluster is built cheaply and honestly: kwok nodes from a
// pool file (config/sim/eks-5000.yaml), pods created already bound to them
// (spec.nodeName: no scheduler needed, kwok marks them Running), and the
// GpuWorkloads' Deployments as objects that never roll out
// (scripts/controlplane --no-rollouts). Then churn: pods created and
// deleted while new GpuWorkloads arrive; then, with the operator stopped,
// the floor's arrivals under the same churn (eksfloor.go).

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type EKSSettings struct {
	Repo, Operator, Pools, Out, Work string
	Pods                             int     // bound pods to fill the cluster with
	DeviceShare                      float64 // of them, the share holding one device
	Namespaces                       int     // the pods' namespaces
	Workloads                        int     // GpuWorkloads (and Deployments) before the operator starts
	ChurnRate                        float64 // pods created a second during churn, as many deleted
	ChurnLifetime                    time.Duration
	Churn                            time.Duration
	Arrivals                         int     // GpuWorkloads arriving during churn
	ArrivalRate                      float64 // a second
	Karpenter, Keep                  bool
	Floor                            bool          // then the floor's arrivals under the same churn (eksfloor.go)
	SampleEvery                      time.Duration // the soak's samples (memory, caches, queues)
}

// The operator's cluster-view histogram, by the work done: whole, or the
// nodes whose pods changed recounted.
const (
	viewFamily     = "gpu_placement_cluster_view_seconds"
	wholeViews     = `work="whole"`
	recountedViews = `work="recount"`
)

func parseEKS(args []string) (EKSSettings, error) {
	s := EKSSettings{}
	flags := flag.NewFlagSet("eks", flag.ContinueOnError)
	flags.StringVar(&s.Repo, "repo", "", "the repository (for scripts/controlplane, crds, config)")
	flags.StringVar(&s.Operator, "operator", "", "the gpu-placement binary")
	flags.StringVar(&s.Pools, "pools", "", "the pool file (default: config/sim/eks-5000.yaml)")
	flags.StringVar(&s.Out, "out", "", "where the figures go (default: build/bench-results)")
	flags.IntVar(&s.Pods, "pods", 100000, "pods created bound to the nodes before the operator starts")
	flags.Float64Var(&s.DeviceShare, "device-share", 0.05, "the share of those pods that hold a device")
	flags.IntVar(&s.Namespaces, "namespaces", 50, "namespaces the pods are spread over")
	flags.IntVar(&s.Workloads, "workloads", 20000, "GpuWorkloads and Deployments before the operator starts")
	flags.Float64Var(&s.ChurnRate, "churn-rate", 100, "pods created a second during churn (as many deleted)")
	flags.DurationVar(&s.ChurnLifetime, "churn-lifetime", 30*time.Second, "how long a churn pod lives")
	flags.DurationVar(&s.Churn, "churn", 10*time.Minute, "how long the churn lasts (a soak: 60m or more)")
	flags.IntVar(&s.Arrivals, "arrivals", 1000, "GpuWorkloads that arrive during churn")
	flags.Float64Var(&s.ArrivalRate, "arrival-rate", 10, "their rate, a second")
	flags.BoolVar(&s.Karpenter, "karpenter", true, "run Karpenter (kwok provider) beside the operator")
	flags.BoolVar(&s.Floor, "floor", true, "after the operator's churn, stop it and run the floor's arrivals under churn")
	flags.BoolVar(&s.Keep, "keep", false, "leave the control plane running afterwards")
	flags.DurationVar(&s.SampleEvery, "sample-every", time.Minute, "the soak's sampling period")
	if err := flags.Parse(args); err != nil {
		return s, err
	}
	if s.Repo == "" || s.Operator == "" {
		return s, fmt.Errorf("eks needs --repo and --operator")
	}
	if s.Pools == "" {
		s.Pools = filepath.Join(s.Repo, "config", "sim", "eks-5000.yaml")
	}
	if s.Out == "" {
		s.Out = filepath.Join(s.Repo, "build", "bench-results")
	}
	s.Work = filepath.Join(s.Out, "eks-work")
	if s.DeviceShare < 0 || s.DeviceShare > 1 || s.Namespaces < 1 || s.ChurnRate <= 0 || s.ArrivalRate <= 0 {
		return s, fmt.Errorf("eks: --device-share in [0, 1], --namespaces >= 1, rates > 0")
	}
	return s, nil
}

// ProcessFigures: one process over a phase.
type ProcessFigures struct {
	RSSMiB     float64 `json:"rssMiB"`     // at the phase's end
	PeakMiB    float64 `json:"peakMiB"`    // VmHWM
	CPUSeconds float64 `json:"cpuSeconds"` // in the phase
	CPUShare   float64 `json:"cpuShare"`   // of one core, over the phase
}

type SoakSample struct {
	Minute       float64 `json:"minute"` // since churn began
	OperatorMiB  float64 `json:"operatorMiB"`
	HeapInUseMiB float64 `json:"heapInUseMiB"`
	// What the rest of resident memory is: free chunks inside the heap,
	// blocks mapped on their own, anonymous and file-backed pages, threads.
	HeapFreeMiB   float64 `json:"heapFreeMiB"`
	HeapMappedMiB float64 `json:"heapMappedMiB"`
	AnonMiB       float64 `json:"anonMiB"`
	FileMiB       float64 `json:"fileMiB"`
	Threads       float64 `json:"threads"`
	KarpenterMiB  float64 `json:"karpenterMiB,omitempty"`
	Pods          float64 `json:"pods"` // in the operator's cache
	Nodes         float64 `json:"nodes"`
	Workloads     float64 `json:"workloads"`
	EventsWaiting float64 `json:"eventsWaiting"`
	QueueDepth    float64 `json:"queueDepth"`
}

type EKSReport struct {
	Machine    Machine     `json:"machine"`
	Date       string      `json:"date"`
	Settings   EKSSettings `json:"settings"`
	Nodes      int         `json:"nodes"`
	BoundPods  int         `json:"boundPods"`
	DevicePods int         `json:"devicePods"`
	FillSecs   float64     `json:"fillSeconds"` // creating the bound pods
	// From the first creation to every pod Running (kwok's pace).
	RunningSecs float64 `json:"runningSeconds"`
	// The operator's start: to /readyz (its own resources and targets
	// cached), to every Node and Pod cached, to every GpuWorkload placed.
	SecondsToReady  float64 `json:"secondsToReady"`
	SecondsToSynced float64 `json:"secondsToSynced"`
	SecondsToPlaced float64 `json:"secondsToPlaced"`
	// To the operator quiet: every status written after the placements
	// (0: not within 30 minutes).
	SecondsToQuiet  float64                   `json:"secondsToQuiet"`
	Placed          int                       `json:"placed"`
	Steady          map[string]ProcessFigures `json:"steady"` // after the start, settled
	ChurnFigures    map[string]ProcessFigures `json:"churn"`
	PodEvents       float64                   `json:"podEvents"` // the operator's pod watch, during churn
	PodEventsPerSec float64                   `json:"podEventsPerSecond"`
	// Operator CPU per pod event: all its CPU in churn over the pod events
	// (an upper bound: arrivals and node events are in it too).
	CPUMicrosPerPodEvent float64 `json:"cpuMicrosPerPodEvent"`
	// Whole computations of the cluster view (before 2026-11-27 14:30, every
	// computation: there were no recounts).
	ViewsPerSec float64 `json:"clusterViewsPerSecond"`
	// From the histogram's buckets: the bound of the bucket the quantile falls in.
	ViewP50Ms  float64 `json:"clusterViewP50Ms"`
	ViewP99Ms  float64 `json:"clusterViewP99Ms"`
	ViewMeanMs float64 `json:"clusterViewMeanMs"`
	// Recounts of the nodes whose pods changed, in place of a whole view.
	RecountsPerSec      float64       `json:"clusterViewRecountsPerSecond"`
	RecountP50Ms        float64       `json:"clusterViewRecountP50Ms"`
	RecountP99Ms        float64       `json:"clusterViewRecountP99Ms"`
	RecountMeanMs       float64       `json:"clusterViewRecountMeanMs"`
	Arrivals            Latency       `json:"arrivals"` // creation to placed, ms
	ArrivalsPlaced      int           `json:"arrivalsPlaced"`
	Requests            RequestCounts `json:"operatorRequests"` // during churn
	Soak                []SoakSample  `json:"soak"`
	SoakSlopeMiBPerHour float64       `json:"soakSlopeMiBPerHour"`
	SoakNoiseMiB        float64       `json:"soakNoiseMiB"` // residuals' standard deviation
	// The same fit of what malloc holds (heapHeld).
	SoakHeapHeldSlopeMiBPerHour float64     `json:"soakHeapHeldSlopeMiBPerHour"`
	SoakHeapHeldNoiseMiB        float64     `json:"soakHeapHeldNoiseMiB"`
	Floor                       *FloorChurn `json:"floor,omitempty"`
}

type eksNode struct {
	name        string
	milliCPU    int64
	memory      float64
	pods        int
	device      string // "nvidia.com/gpu", "aws.amazon.com/neuron" or ""
	devices     int
	usedCPU     int64
	usedPods    int
	usedDevices int
}

func runEKS(args []string) error {
	s, err := parseEKS(args)
	if err != nil {
		return err
	}
	report := EKSReport{Machine: describeMachine(), Date: time.Now().UTC().Format(time.RFC3339), Settings: s,
		Steady: map[string]ProcessFigures{}, ChurnFigures: map[string]ProcessFigures{}}
	os.RemoveAll(s.Work)
	logf("starting the control plane, kwok and %s's nodes", filepath.Base(s.Pools))
	// Karpenter starts once the cluster is full: it would read every one of
	// the 100,000 creations and kwok's updates, and on two cores slow the
	// filling down to a crawl.
	clusterFlags := []string{"--no-rollouts"}
	if s.Karpenter {
		clusterFlags = append(clusterFlags, "--karpenter", "--karpenter-later")
	}
	plane, err := startControlPlane(s.Repo, s.Work, !s.Keep, s.Pools, false, clusterFlags...)
	if err != nil {
		return err
	}
	if !s.Keep {
		defer plane.Stop()
	}
	if err := plane.Install(); err != nil {
		return err
	}
	nodes, err := listEKSNodes(plane.client)
	if err != nil {
		return err
	}
	report.Nodes = len(nodes)

	// ---- fill: bound pods ----------------------------------------------
	namespaces := make([]string, s.Namespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("team-%02d", i)
		if err := plane.client.Create("/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": namespaces[i]}}); err != nil {
			return err
		}
	}
	if err := waitServiceAccounts(plane.client, namespaces); err != nil {
		return err
	}
	pods := placeBoundPods(nodes, s.Pods, int(math.Round(float64(s.Pods)*s.DeviceShare)), namespaces)
	for _, pod := range pods {
		if pod.device != "" {
			report.DevicePods++
		}
	}
	report.BoundPods = len(pods)
	logf("creating %d pods bound to %d nodes (%d holding a device)", len(pods), len(nodes), report.DevicePods)
	began := time.Now()
	if err := createPods(plane.client, pods); err != nil {
		return err
	}
	report.FillSecs = round(time.Since(began).Seconds(), 1)
	logf("created in %.0f s; waiting for kwok to mark them Running", report.FillSecs)
	if err := waitNoPending(plane.client, 30*time.Minute); err != nil {
		return err
	}
	report.RunningSecs = round(time.Since(began).Seconds(), 1)
	if s.Karpenter {
		logf("all Running %.0f s after the first creation; starting Karpenter", report.RunningSecs)
		if err := plane.StartKarpenter(); err != nil {
			return err
		}
	}

	// ---- the GpuWorkloads and their Deployments ----------------------------
	capacity, err := plane.capacityLabel()
	if err != nil {
		return err
	}
	if err := plane.client.Create(policiesPath, clusterPolicyManifest(capacity)); err != nil {
		return err
	}
	total := s.Workloads + s.Arrivals
	logf("creating %d Deployments and %d GpuWorkloads", total, s.Workloads)
	if err := createAll(plane.client, deploymentsPath, total, func(i int) map[string]any {
		return deploymentManifest(deploymentName(i))
	}); err != nil {
		return err
	}
	if err := createAll(plane.client, workloadsPath, s.Workloads, workloadManifest); err != nil {
		return err
	}

	// ---- the operator's start ----------------------------------------------
	watch, err := watchDeployments(plane.client)
	if err != nil {
		return err
	}
	defer watch.Stop()
	kubeconfig, err := plane.OperatorKubeconfig()
	if err != nil {
		return err
	}
	reactor, err := startOperator(Settings{Operator: s.Operator}, kubeconfig, filepath.Join(s.Work, "operator.log"))
	if err != nil {
		return err
	}
	defer reactor.stop()
	operator := StartSampler(reactor.pid(), reactor.started, time.Second)
	var karpenter *Sampler
	if pid, ok := plane.clusterPids["karpenter"]; ok && s.Karpenter {
		karpenter = StartSampler(pid, reactor.started, time.Second)
	}
	if report.SecondsToReady, err = reactor.waitReady(10 * time.Minute); err != nil {
		return err
	}
	if report.SecondsToSynced, err = waitClusterSynced(reactor, report.Nodes, report.BoundPods,
		10*time.Minute); err != nil {
		return err
	}
	logf("operator ready %.1f s after start, its Node and Pod caches synced after %.1f s; waiting for %d placements",
		report.SecondsToReady, report.SecondsToSynced, s.Workloads)
	placedCount := func(state map[string]deploymentState, from, to int) int {
		n := 0
		for i := from; i < to; i++ {
			if !state[deploymentName(i)].placedAt.IsZero() {
				n++
			}
		}
		return n
	}
	_ = watch.WaitFor(20*time.Minute, func(state map[string]deploymentState) bool {
		return placedCount(state, 0, s.Workloads) == s.Workloads
	})
	state := watch.Snapshot()
	report.Placed = placedCount(state, 0, s.Workloads)
	last := reactor.started
	for i := 0; i < s.Workloads; i++ {
		if at := state[deploymentName(i)].placedAt; at.After(last) {
			last = at
		}
	}
	report.SecondsToPlaced = round(last.Sub(reactor.started).Seconds(), 1)
	logf("%d of %d placed, the last %.1f s after start; settling", report.Placed, s.Workloads,
		report.SecondsToPlaced)
	// After the Deployment patches, the statuses trail on a loaded server
	// (issue 27, item 6): how long until the operator is quiet is a figure,
	// and churn begins either way.
	settledAt, err := reactor.settle(30 * time.Minute)
	if err != nil {
		logf("the operator is still reconciling (statuses trailing): %v", err)
	} else {
		report.SecondsToQuiet = round(settledAt.Sub(reactor.started).Seconds(), 1)
	}
	phaseStart := map[string]ProcSample{"operator": operator.Now()}
	if karpenter != nil {
		phaseStart["karpenter"] = karpenter.Now()
	}
	report.Steady = phaseFigures(operator, karpenter, nil, 0)

	// ---- churn -------------------------------------------------------------
	podEvents := `gpu_placement_informer_events_total{resource="pods"}`
	eventsBefore, err := reactor.metric(podEvents)
	if err != nil {
		return err
	}
	viewsBefore, err := readHistograms(reactor, viewFamily, wholeViews, recountedViews)
	if err != nil {
		return err
	}
	logf("churn for %v: %.0f pods a second created and as many deleted; %d GpuWorkloads at %.0f/s",
		s.Churn, s.ChurnRate, s.Arrivals, s.ArrivalRate)
	churnBegan := time.Now()
	stopSoak := make(chan struct{})
	soakDone := make(chan []SoakSample)
	go func() { soakDone <- sampleSoak(reactor, operator, karpenter, churnBegan, s.SampleEvery, stopSoak) }()
	churnDone := make(chan churnResult)
	go func() {
		churnDone <- churnPods(plane.client, nodes, namespaces, "churn", s.ChurnRate, s.ChurnLifetime, s.Churn)
	}()
	sent, err := createAtRate(plane.client, s.Arrivals, s.ArrivalRate, func(i int) map[string]any {
		return workloadManifest(s.Workloads + i)
	}, nil)
	if err != nil {
		return fmt.Errorf("creating the arriving GpuWorkloads: %v", err)
	}
	churned := <-churnDone
	if churned.err != nil {
		return churned.err
	}
	churnEnded := time.Now()
	close(stopSoak)
	report.Soak = <-soakDone
	seconds := churnEnded.Sub(churnBegan).Seconds()
	report.ChurnFigures = phaseFigures(operator, karpenter, phaseStart, seconds)
	eventsAfter, err := reactor.metric(podEvents)
	if err != nil {
		return err
	}
	report.PodEvents = eventsAfter - eventsBefore
	report.PodEventsPerSec = round(report.PodEvents/seconds, 1)
	if report.PodEvents > 0 {
		report.CPUMicrosPerPodEvent = round(report.ChurnFigures["operator"].CPUSeconds*1e6/report.PodEvents, 1)
	}
	viewsAfter, err := readHistograms(reactor, viewFamily, wholeViews, recountedViews)
	if err != nil {
		return err
	}
	views := viewsAfter[0].minus(viewsBefore[0])
	report.ViewsPerSec = round(views.count/seconds, 2)
	if views.count > 0 { // none in a short churn that moved no node: no quantile to give
		report.ViewP50Ms, report.ViewP99Ms = views.quantileMs(0.5), views.quantileMs(0.99)
		report.ViewMeanMs = round(views.sum/views.count*1000, 3)
	}
	recounts := viewsAfter[1].minus(viewsBefore[1])
	report.RecountsPerSec = round(recounts.count/seconds, 2)
	if recounts.count > 0 {
		report.RecountP50Ms, report.RecountP99Ms = recounts.quantileMs(0.5), recounts.quantileMs(0.99)
		report.RecountMeanMs = round(recounts.sum/recounts.count*1000, 4)
	}
	report.Arrivals, report.ArrivalsPlaced = arrivalLatencies(watch, s.Workloads, sent)
	logf("churn done: %d pods created, %d deleted; %d of %d arrivals placed", churned.created, churned.deleted,
		report.ArrivalsPlaced, s.Arrivals)
	if requests, err := plane.Audit(); err == nil {
		report.Requests = countRequests(requests, operatorUser, churnBegan, churnEnded)
	} else {
		logf("reading the audit log: %v", err)
	}
	report.SoakSlopeMiBPerHour, report.SoakNoiseMiB = memorySlope(report.Soak)
	report.SoakHeapHeldSlopeMiBPerHour, report.SoakHeapHeldNoiseMiB = slopeOf(report.Soak, heapHeld)
	operator.Stop()
	if s.Floor {
		reactor.stop()
		// A failure here loses only the floor's figures, not the run's.
		if floor, err := floorUnderChurn(plane, s, nodes, namespaces, watch, s.Workloads+s.Arrivals); err != nil {
			logf("the floor under churn: %v", err)
		} else {
			if floor.Arrivals.P99 > 0 {
				floor.P99Ratio = round(report.Arrivals.P99/floor.Arrivals.P99, 2)
			}
			report.Floor = &floor
		}
	}
	if karpenter != nil {
		karpenter.Stop()
	}
	return writeEKS(s.Out, report)
}

// arrivalLatencies: creation to placed (ms) of the GpuWorkloads first,
// first+1, ... created at `sent`, from the Deployment watch; and how many
// were placed.
func arrivalLatencies(watch *DeploymentWatch, first int, sent []time.Time) (Latency, int) {
	state := watch.Snapshot()
	var latencies []float64
	for i := range sent {
		if at := state[deploymentName(first+i)].placedAt; !at.IsZero() {
			latencies = append(latencies, round(at.Sub(sent[i]).Seconds()*1000, 3))
		}
	}
	return summarize(latencies), len(latencies)
}

// waitClusterSynced: seconds from the operator's start until its caches
// hold every node and pod (a list lands in the cache whole, once complete).
func waitClusterSynced(reactor *Reactor, nodes, pods int, limit time.Duration) (float64, error) {
	deadline := time.Now().Add(limit)
	for {
		cachedNodes, errNodes := reactor.metric(`gpu_placement_informer_objects{resource="nodes"}`)
		cachedPods, errPods := reactor.metric(`gpu_placement_informer_objects{resource="pods"}`)
		if errNodes == nil && errPods == nil && cachedNodes >= float64(nodes) && cachedPods >= float64(pods) {
			return round(time.Since(reactor.started).Seconds(), 2), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the operator cached %.0f of %d nodes and %.0f of %d pods after %v (%v, %v)",
				cachedNodes, nodes, cachedPods, pods, limit, errNodes, errPods)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func listEKSNodes(client *Client) ([]*eksNode, error) {
	items, _, err := client.ListAll("/api/v1/nodes")
	if err != nil {
		return nil, err
	}
	var nodes []*eksNode
	for _, item := range items {
		var status struct {
			Allocatable map[string]string `json:"allocatable"`
		}
		if err := json.Unmarshal(item.Status, &status); err != nil {
			return nil, fmt.Errorf("node %s: %v", item.Metadata.Name, err)
		}
		node := &eksNode{name: item.Metadata.Name, milliCPU: int64(parseQuantity(status.Allocatable["cpu"]) * 1000),
			memory: parseQuantity(status.Allocatable["memory"])}
		fmt.Sscan(status.Allocatable["pods"], &node.pods)
		for _, device := range []string{"nvidia.com/gpu", "aws.amazon.com/neuron"} {
			if count := status.Allocatable[device]; count != "" && count != "0" {
				node.device = device
				fmt.Sscan(count, &node.devices)
			}
		}
		nodes = append(nodes, node)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].name < nodes[j].name })
	return nodes, nil
}

func waitServiceAccounts(client *Client, namespaces []string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for _, namespace := range namespaces {
		for {
			err := client.Do("GET", "/api/v1/namespaces/"+namespace+"/serviceaccounts/default", "", nil, nil)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("namespace %s has no default service account: %v", namespace, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

type boundPod struct {
	namespace, name, node, device string
	milliCPU                      int64
}

const (
	eksPodCPU       = 100  // millicores a CPU pod requests
	eksDevicePodCPU = 1000 // and a device pod
	eksNodeReserve  = 2    // pod slots left for DaemonSets
)

// placeBoundPods spreads `total` pods over the nodes: `devices` of them one
// device each, round-robin over the accelerated nodes while they have a
// device free; the rest round-robin over the CPU nodes while they have
// room (pods and CPU).
func placeBoundPods(nodes []*eksNode, total, devices int, namespaces []string) []boundPod {
	var accelerated, cpu []*eksNode
	for _, node := range nodes {
		if node.device != "" {
			accelerated = append(accelerated, node)
		} else {
			cpu = append(cpu, node)
		}
	}
	pods := make([]boundPod, 0, total)
	// A pod on an accelerated node holds one of its devices.
	add := func(node *eksNode, milli int64) {
		i := len(pods)
		pods = append(pods, boundPod{namespace: namespaces[i%len(namespaces)], name: fmt.Sprintf("p-%06d", i),
			node: node.name, device: node.device, milliCPU: milli})
		node.usedCPU += milli
		node.usedPods++
		if node.device != "" {
			node.usedDevices++
		}
	}
	for placed := true; placed && len(pods) < devices; {
		placed = false
		for _, node := range accelerated {
			if len(pods) < devices && node.usedDevices < node.devices {
				add(node, eksDevicePodCPU)
				placed = true
			}
		}
	}
	for placed := true; placed && len(pods) < total; {
		placed = false
		for _, node := range cpu {
			if len(pods) < total && hasRoom(node) {
				add(node, eksPodCPU)
				placed = true
			}
		}
	}
	return pods
}

func hasRoom(node *eksNode) bool {
	return node.usedPods < node.pods-eksNodeReserve && node.usedCPU+eksPodCPU <= node.milliCPU
}

func podManifest(pod boundPod) map[string]any {
	requests := map[string]string{"cpu": fmt.Sprintf("%dm", pod.milliCPU), "memory": "256Mi"}
	container := map[string]any{"name": "app", "image": "registry.k8s.io/pause:3.10",
		"resources": map[string]any{"requests": requests}}
	spec := map[string]any{"nodeName": pod.node, "containers": []any{container},
		"automountServiceAccountToken": false, "terminationGracePeriodSeconds": 0}
	if pod.device != "" {
		requests[pod.device] = "1"
		container["resources"] = map[string]any{"requests": requests, "limits": map[string]string{pod.device: "1"}}
		spec["tolerations"] = []any{map[string]string{"key": pod.device, "operator": "Exists", "effect": "NoSchedule"}}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": pod.name, "namespace": pod.namespace,
			"labels": map[string]string{"app": fmt.Sprintf("svc-%03d", len(pod.name)*7%100)}},
		"spec": spec}
}

func namespacePodsPath(namespace string) string { return "/api/v1/namespaces/" + namespace + "/pods" }

func createPods(client *Client, pods []boundPod) error {
	var wg sync.WaitGroup
	var failed atomic.Value
	next := make(chan boundPod, 256)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pod := range next {
				if err := createWithRetries(client, namespacePodsPath(pod.namespace), podManifest(pod)); err != nil {
					failed.Store(fmt.Errorf("pod %s/%s: %v", pod.namespace, pod.name, err))
				}
			}
		}()
	}
	for i, pod := range pods {
		next <- pod
		if (i+1)%20000 == 0 {
			logf("  %d pods created", i+1)
		}
	}
	close(next)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

// waitNoPending waits until kwok has marked every pod Running: one page of
// Pending pods, not all of them, so that asking does not slow kwok down.
func waitNoPending(client *Client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var page List
		if err := client.Do("GET", "/api/v1/pods?fieldSelector=status.phase%3DPending&limit=1", "", nil,
			&page); err != nil {
			return err
		}
		if len(page.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pods still Pending after %v, %s/%s among them", limit,
				page.Items[0].Metadata.Namespace, page.Items[0].Metadata.Name)
		}
		time.Sleep(5 * time.Second)
	}
}

type churnResult struct {
	created, deleted int
	err              error
}

// churnPods creates `rate` pods a second on the CPU nodes for `duration`,
// each deleted (at once: grace period 0) `lifetime` after its creation, so
// that as many go as come once the first have lived out. Their names begin
// with `prefix`.
func churnPods(client *Client, nodes []*eksNode, namespaces []string, prefix string, rate float64, lifetime,
	duration time.Duration) churnResult {
	var cpu []*eksNode
	for _, node := range nodes {
		if node.device == "" && node.usedPods < node.pods-eksNodeReserve-1 {
			cpu = append(cpu, node)
		}
	}
	if len(cpu) == 0 {
		return churnResult{err: fmt.Errorf("churn: no CPU node has room")}
	}
	type job struct {
		pod    boundPod
		delete bool
	}
	jobs := make(chan job, 1024)
	var created, deleted atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				path := namespacePodsPath(j.pod.namespace)
				var err error
				if j.delete {
					err = client.Do("DELETE", path+"/"+j.pod.name, "application/json",
						map[string]any{"gracePeriodSeconds": 0}, nil)
					if err == nil {
						deleted.Add(1)
					}
				} else if err = createWithRetries(client, path, podManifest(j.pod)); err == nil {
					created.Add(1)
				}
				if err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	type alive struct {
		pod boundPod
		due time.Time
	}
	var living []alive
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if due.Sub(start) >= duration {
			break
		}
		time.Sleep(time.Until(due))
		for len(living) > 0 && !living[0].due.After(time.Now()) {
			jobs <- job{pod: living[0].pod, delete: true}
			living = living[1:]
		}
		pod := boundPod{namespace: namespaces[i%len(namespaces)], name: fmt.Sprintf("%s-%07d", prefix, i),
			node: cpu[i%len(cpu)].name, milliCPU: eksPodCPU}
		jobs <- job{pod: pod}
		living = append(living, alive{pod, time.Now().Add(lifetime)})
	}
	for _, pod := range living {
		jobs <- job{pod: pod.pod, delete: true}
	}
	close(jobs)
	wg.Wait()
	result := churnResult{created: int(created.Load()), deleted: int(deleted.Load())}
	if err, ok := failed.Load().(error); ok {
		result.err = fmt.Errorf("churn: %v", err)
	}
	return result
}

// phaseFigures: each process's memory now and its CPU since `from` (nil:
// none) over `seconds`.
func phaseFigures(operator, karpenter *Sampler, from map[string]ProcSample, seconds float64) map[string]ProcessFigures {
	figures := map[string]ProcessFigures{}
	record := func(name string, sampler *Sampler) {
		now := sampler.Now()
		f := ProcessFigures{RSSMiB: round(now.RSSMiB, 1), PeakMiB: round(sampler.Peak(), 1)}
		if start, ok := from[name]; ok && seconds > 0 {
			f.CPUSeconds = round(now.CPUSeconds-start.CPUSeconds, 2)
			f.CPUShare = round(f.CPUSeconds/seconds, 4)
		}
		figures[name] = f
	}
	record("operator", operator)
	if karpenter != nil {
		record("karpenter", karpenter)
	}
	return figures
}

// sampleSoak reads, every period until stop, the operator's memory and
// caches and Karpenter's memory.
func sampleSoak(reactor *Reactor, operator, karpenter *Sampler, origin time.Time, period time.Duration,
	stop chan struct{}) []SoakSample {
	var samples []SoakSample
	take := func() {
		sample := SoakSample{Minute: round(time.Since(origin).Minutes(), 2)}
		if stats, ok := readProc(operator.pid); ok { // one read for resident memory and its parts
			sample.OperatorMiB, sample.AnonMiB, sample.FileMiB = round(stats.RSSMiB, 1), round(stats.AnonMiB, 1), round(stats.FileMiB, 1)
			sample.Threads = stats.Threads
		}
		if karpenter != nil {
			sample.KarpenterMiB = round(karpenter.Now().RSSMiB, 1)
		}
		read := func(series string) float64 {
			value, err := reactor.metric(series)
			if err != nil {
				logf("soak: %v", err)
			}
			return value
		}
		sample.HeapInUseMiB = round(read(`gpu_placement_heap_bytes{state="in_use"}`)/(1<<20), 1)
		sample.HeapFreeMiB = round(read(`gpu_placement_heap_bytes{state="free"}`)/(1<<20), 1)
		sample.HeapMappedMiB = round(read(`gpu_placement_heap_bytes{state="mapped"}`)/(1<<20), 1)
		sample.Pods = read(`gpu_placement_informer_objects{resource="pods"}`)
		sample.Nodes = read(`gpu_placement_informer_objects{resource="nodes"}`)
		sample.Workloads = read(`gpu_placement_informer_objects{resource="gpuworkloads"}`)
		sample.EventsWaiting = read("gpu_placement_events_waiting")
		sample.QueueDepth = read("workqueue_depth")
		samples = append(samples, sample)
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	take()
	for {
		select {
		case <-stop:
			take()
			return samples
		case <-ticker.C:
			take()
		}
	}
}

// memorySlope fits the operator's resident memory over the soak (least
// squares) from its second sample on (the first is before churn warms the
// caches); the slope in MiB an hour and the residuals' standard deviation.
func memorySlope(samples []SoakSample) (float64, float64) {
	return slopeOf(samples, func(s SoakSample) float64 { return s.OperatorMiB })
}

// heapHeld: what malloc holds, in use or free, in its heap and in blocks
// mapped on their own. Resident memory can rise toward it as free pages
// are touched again; only a leak or a larger cluster raises it.
func heapHeld(s SoakSample) float64 { return s.HeapInUseMiB + s.HeapFreeMiB + s.HeapMappedMiB }

// slopeOf: memorySlope for any figure of the samples.
func slopeOf(samples []SoakSample, value func(SoakSample) float64) (float64, float64) {
	if len(samples) < 3 {
		return 0, 0
	}
	points := samples[1:]
	var sx, sy, sxx, sxy float64
	n := float64(len(points))
	for _, p := range points {
		sx += p.Minute
		sy += value(p)
		sxx += p.Minute * p.Minute
		sxy += p.Minute * value(p)
	}
	denominator := n*sxx - sx*sx
	if denominator == 0 {
		return 0, 0
	}
	slope := (n*sxy - sx*sy) / denominator
	intercept := (sy - slope*sx) / n
	var squares float64
	for _, p := range points {
		residual := value(p) - (intercept + slope*p.Minute)
		squares += residual * residual
	}
	return round(slope*60, 2), round(math.Sqrt(squares/n), 2)
}

func writeEKS(out string, report EKSReport) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	path := filepath.Join(out, "eks-"+stamp+".json")
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	printEKS(report)
	if err := plotSoak(report, strings.TrimSuffix(path, ".json")+".png"); err != nil {
		return err
	}
	logf("figures: %s (and .png)", path)
	return nil
}

func printEKS(r EKSReport) {
	fmt.Printf("EKS mode: %d nodes, %d bound pods (%d with a device; created in %.0f s, all Running in %.0f s), "+
		"%d GpuWorkloads\n", r.Nodes, r.BoundPods, r.DevicePods, r.FillSecs, r.RunningSecs, r.Settings.Workloads)
	fmt.Printf("operator start: ready in %.1f s, Nodes and Pods cached in %.1f s, %d of %d placed %.1f s after start, "+
		"quiet (statuses written) after %.1f s\n", r.SecondsToReady, r.SecondsToSynced, r.Placed, r.Settings.Workloads,
		r.SecondsToPlaced, r.SecondsToQuiet)
	names := []string{"operator", "karpenter"}
	for _, name := range names {
		steady, ok := r.Steady[name]
		if !ok {
			continue
		}
		churn := r.ChurnFigures[name]
		fmt.Printf("%-9s steady %.1f MiB; churn: %.1f MiB at the end, peak %.1f MiB, CPU %.1f s (%.1f%% of a core)\n",
			name, steady.RSSMiB, churn.RSSMiB, churn.PeakMiB, churn.CPUSeconds, churn.CPUShare*100)
	}
	fmt.Printf("pod events read in churn: %.0f (%.1f/s), operator CPU per pod event %.1f us (all its CPU)\n",
		r.PodEvents, r.PodEventsPerSec, r.CPUMicrosPerPodEvent)
	fmt.Printf("cluster views, whole: %.2f/s, p50 <= %.3f ms, p99 <= %.3f ms, mean %.3f ms\n", r.ViewsPerSec,
		r.ViewP50Ms, r.ViewP99Ms, r.ViewMeanMs)
	fmt.Printf("cluster views, recounted: %.2f/s, p50 <= %.3f ms, p99 <= %.3f ms, mean %.4f ms\n",
		r.RecountsPerSec, r.RecountP50Ms, r.RecountP99Ms, r.RecountMeanMs)
	fmt.Printf("arrivals: %d of %d placed, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", r.ArrivalsPlaced,
		r.Settings.Arrivals, r.Arrivals.P50, r.Arrivals.P99, r.Arrivals.Max)
	if f := r.Floor; f != nil {
		fmt.Printf("the floor's arrivals, under %.0f s of the same churn: %d of %d placed, p50 %.1f ms, p99 %.1f ms, "+
			"max %.1f ms; the operator's p99 is %.2fx the floor's\n", f.ChurnSeconds, f.ArrivalsPlaced,
			r.Settings.Arrivals, f.Arrivals.P50, f.Arrivals.P99, f.Arrivals.Max, f.P99Ratio)
	}
	fmt.Printf("operator requests in churn: %s\n", describeCounts(r.Requests))
	fmt.Printf("soak: %d samples, slope %.2f MiB/h, noise (residual sd) %.2f MiB; what malloc holds: "+
		"slope %.2f MiB/h, noise %.2f MiB\n", len(r.Soak), r.SoakSlopeMiBPerHour, r.SoakNoiseMiB,
		r.SoakHeapHeldSlopeMiBPerHour, r.SoakHeapHeldNoiseMiB)
	if len(r.Soak) >= 2 {
		first, last := r.Soak[1], r.Soak[len(r.Soak)-1] // from the second: churn has warmed the caches
		fmt.Printf("soak, minute %.0f to %.0f (MiB): resident %.1f to %.1f; heap in use %.1f to %.1f, free in it %.1f to %.1f, "+
			"mapped %.1f to %.1f; anonymous %.1f to %.1f, file-backed %.1f to %.1f; threads %.0f to %.0f\n",
			first.Minute, last.Minute, first.OperatorMiB, last.OperatorMiB, first.HeapInUseMiB, last.HeapInUseMiB,
			first.HeapFreeMiB, last.HeapFreeMiB, first.HeapMappedMiB, last.HeapMappedMiB, first.AnonMiB, last.AnonMiB,
			first.FileMiB, last.FileMiB, first.Threads, last.Threads)
	}
}
