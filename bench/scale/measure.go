package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// measure runs one reactor with `size` workloads on a fresh control plane.
func measure(settings Settings, reactorName string, size int) (RunResult, string, error) {
	result := RunResult{Reactor: reactorName, Size: size}
	dir := filepath.Join(settings.Work, fmt.Sprintf("%s-%d", reactorName, size))
	os.RemoveAll(dir)
	pools, err := poolFile(settings, dir, size)
	if err != nil {
		return result, "", err
	}
	plane, err := startControlPlane(settings.Repo, dir, !settings.Keep, pools, settings.Cluster.Karpenter)
	if err != nil {
		return result, "", err
	}
	if settings.Keep {
		logf("keeping the control plane: KUBECONFIG=%s/kubeconfig, the operator's: %s/operator.kubeconfig", dir, dir)
	} else {
		defer plane.Stop()
	}
	var version struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := plane.client.Do("GET", "/version", "", nil, &version); err != nil {
		return result, "", err
	}
	if err := plane.Install(); err != nil {
		return result, "", err
	}
	var cluster *clusterRun
	if settings.Cluster.Enabled {
		if cluster, err = prepareCluster(settings, plane, dir, pools, size); err != nil {
			return result, "", err
		}
		defer cluster.stop()
		result.Cluster = cluster.figures
	} else if err := createBare(plane, size); err != nil {
		return result, "", err
	}

	// The reactor, with the Deployments already there.
	user := floorUser
	var reactor *Reactor
	extra := []string{}
	if size >= settings.BulkFrom {
		extra = settings.BulkFlags
	}
	switch reactorName {
	case "controller-runtime":
		user = controllerRuntimeUser
		if reactor, result.SecondsToReady, err = startControllerRuntime(settings, plane,
			filepath.Join(dir, "controller-runtime.log")); err != nil {
			return result, "", err
		}
	case "operator":
		user = operatorUser
		kubeconfig, err := plane.OperatorKubeconfig()
		if err != nil {
			return result, "", err
		}
		reactor, err = startOperator(settings, kubeconfig, filepath.Join(dir, "operator.log"), extra...)
		if err != nil {
			return result, "", err
		}
		if result.SecondsToReady, err = reactor.waitReady(2 * time.Minute); err != nil {
			reactor.stop()
			return result, "", err
		}
	default:
		credentials, err := plane.FloorCredentials()
		if err != nil {
			return result, "", err
		}
		self, _ := os.Executable()
		patches := ""
		if cluster != nil {
			patches = cluster.patches
		}
		if reactor, err = startFloor(self, credentials, patches, filepath.Join(dir, "floor.log")); err != nil {
			return result, "", err
		}
		result.SecondsToReady = time.Since(reactor.started).Seconds()
	}
	origin := reactor.started
	sampler := StartSampler(reactor.pid(), origin, 250*time.Millisecond)
	stopReactor := func() {
		if reactor != nil {
			reactor.stop()
			reactor = nil
		}
	}
	defer stopReactor()

	watch, err := watchDeployments(plane.client)
	if err != nil {
		return result, "", err
	}
	defer watch.Stop()

	// ---- placement -----------------------------------------------------
	rate := settings.Rate
	if size >= settings.BulkFrom {
		rate = settings.BulkRate
	}
	logf("creating %d GpuWorkloads at %.0f/s", size, rate)
	cpuBefore := sampler.Now().CPUSeconds
	apiserverCPUBefore, etcdCPUBefore, err := plane.CPUSeconds()
	if err != nil {
		return result, "", err
	}
	var midway func()
	if settings.RestartAPIServer {
		midway = func() {
			logf("restarting kube-apiserver after %d of %d creations", size/2, size)
			if err := plane.RestartAPIServer(); err != nil {
				logf("%v", err)
			}
		}
	}
	manifest := workloadManifest
	if cluster != nil {
		manifest = clusterWorkloadManifest
		cluster.startCPU(plane)
	}
	placementStart := time.Now()
	stopTrace := func() []StatusSample { return nil }
	if reactor.metricsPort != 0 {
		stopTrace = traceStatuses(reactor, placementStart, 2*time.Second)
	}
	sent, err := createAtRate(plane.client, size, rate, manifest, midway)
	if err != nil {
		return result, "", fmt.Errorf("creating GpuWorkloads: %v", err)
	}
	limit := time.Duration(float64(size)/rate*3*float64(time.Second)) + 2*time.Minute
	if cluster != nil {
		// On a cluster a reactor that has not placed everything within
		// the harness's bound still has figures: the rest are reported as
		// never Running, "not placed".
		limit = max(limit, time.Until(sent[size-1].Add(settings.Cluster.Bound)))
	}
	err = watch.WaitFor(limit, func(state map[string]deploymentState) bool {
		for i := 0; i < size; i++ {
			if state[deploymentName(i)].placedAt.IsZero() {
				return false
			}
		}
		return true
	})
	if err != nil && (cluster == nil || !errors.Is(err, errNotDone)) {
		return result, "", fmt.Errorf("waiting for every Deployment to be placed: %v", err)
	} else if err != nil {
		logf("not every Deployment placed within %v: measuring those that were", limit)
	}
	latencies, last := placementLatencies(watch.Snapshot(), sent, placementStart)
	if cluster != nil {
		logf("waiting for the placed pods to run")
		result.RunningLatenciesMs = cluster.waitRunning(settings.Cluster, sent, func() func(int) bool {
			snapshot := watch.Snapshot()
			return func(i int) bool { return !snapshot[deploymentName(i)].placedAt.IsZero() }
		})
		cluster.waitRollouts(settings.Cluster, sent, watch)
		cluster.afterPlacement()
	}
	quiet := 0.0
	if reactor.metricsPort != 0 { // the operator and controller-runtime
		settled, err := reactor.settle(5 * time.Minute)
		if err != nil {
			return result, "", err
		}
		quiet = round(max(settled.Sub(last).Seconds(), 0), 1)
	} else {
		time.Sleep(2 * time.Second)
	}
	result.StatusTrace = stopTrace()
	placementEnd := time.Now()
	apiserverCPUAfter, etcdCPUAfter, err := plane.CPUSeconds()
	if err != nil {
		return result, "", err
	}
	if cluster != nil {
		cluster.endCPU(plane)
	}
	result.LatenciesMs = latencies
	result.Placement = PlacementFigures{Rate: rate, Placed: len(latencies), LatencyMs: summarize(latencies),
		SecondsToPlaceAll:   round(last.Sub(sent[0]).Seconds(), 3),
		SecondsToQuiet:      quiet,
		CPUSeconds:          round(sampler.Now().CPUSeconds-cpuBefore, 2),
		ServerCPUSeconds:    round(apiserverCPUAfter+etcdCPUAfter-apiserverCPUBefore-etcdCPUBefore, 2),
		APIServerCPUSeconds: round(apiserverCPUAfter-apiserverCPUBefore, 2)}
	result.Placement.PlacementsPerSec = round(float64(len(latencies))/result.Placement.SecondsToPlaceAll, 1)
	perPlacement := func(seconds float64) float64 { return round(seconds/float64(size)*1000, 2) }
	result.Placement.APIServerMsPerPlaced = perPlacement(apiserverCPUAfter - apiserverCPUBefore)
	result.Placement.ServerCPUMsPerPlaced = perPlacement(apiserverCPUAfter + etcdCPUAfter - apiserverCPUBefore - etcdCPUBefore)
	result.Placement.ReactorCPUMsPerPlaced = perPlacement(result.Placement.CPUSeconds)

	// ---- idle ----------------------------------------------------------
	logf("idle for %v", settings.Idle)
	idleStart := time.Now()
	idleCPU := sampler.Now().CPUSeconds
	time.Sleep(settings.Idle)
	idleEnd := time.Now()
	atEnd := sampler.Now()
	result.Idle = IdleFigures{Seconds: settings.Idle.Seconds(),
		CPUPercent:  round((atEnd.CPUSeconds-idleCPU)/idleEnd.Sub(idleStart).Seconds()*100, 3),
		RSSMiB:      round(median(sampler.Between(idleStart.Sub(origin).Seconds(), idleEnd.Sub(origin).Seconds())), 1),
		RSSAtEndMiB: round(atEnd.RSSMiB, 1)}
	if reactor.metricsPort != 0 {
		result.Idle.Heap = reactor.heap()
	}
	if cluster != nil {
		cluster.afterIdle(plane)
	}

	// ---- the operator only: re-placement, then a restart -----------------
	// Cluster mode stops here for the operator too: a real
	// controller-manager runs the rollouts that re-placement's harness
	// would complete by hand, and the restart figures do not need pods.
	operator := reactorName == "operator" && cluster == nil
	var replacementWindow [2]time.Time
	if operator {
		if result.Replacement, replacementWindow, err = measureReplacement(settings, plane, reactor, watch, size, dir); err != nil {
			return result, "", err
		}
	}
	samples, peak := sampler.Stop()
	result.Samples, result.PeakRSSMiB = samples, round(peak, 1)
	stopReactor()
	var restartWindows [4]time.Time
	if operator {
		if result.Restart, result.SamplesOfRestart, restartWindows, err = measureRestart(settings, plane, dir, origin, extra); err != nil {
			return result, "", err
		}
	}

	requests, err := plane.Audit()
	if err != nil {
		return result, "", err
	}
	result.Placement.Requests = countRequests(requests, user, placementStart, placementEnd)
	result.Idle.Requests = countRequests(requests, user, idleStart, idleEnd)
	if operator {
		result.Replacement.Requests = countRequests(requests, user, replacementWindow[0], replacementWindow[1])
		result.Restart.Requests = countRequests(requests, user, restartWindows[0], restartWindows[1])
		result.Restart.ResyncRequests = countRequests(requests, user, restartWindows[2], restartWindows[3])
	}
	result.Placement.RequestsPerPlaced = round(float64(result.Placement.Requests.Total)/float64(size), 2)
	return result, version.GitVersion, nil
}

// placementLatencies: creation to patch of each Deployment placed (all of
// them, but in cluster mode, once the bound is reached), and the last patch.
func placementLatencies(state map[string]deploymentState, sent []time.Time, start time.Time) ([]float64, time.Time) {
	latencies := make([]float64, 0, len(sent))
	last := start
	for i := range sent {
		placedAt := state[deploymentName(i)].placedAt
		if placedAt.IsZero() {
			continue
		}
		latencies = append(latencies, round(placedAt.Sub(sent[i]).Seconds()*1000, 3))
		if placedAt.After(last) {
			last = placedAt
		}
	}
	return latencies, last
}

// createBare creates the bench's policy and the Deployments (no cluster:
// no pods).
func createBare(plane *ControlPlane, size int) error {
	if err := plane.client.Create(policiesPath, policyManifest(nil)); err != nil {
		return err
	}
	logf("creating %d Deployments", size)
	return createAll(plane.client, deploymentsPath, size, func(i int) map[string]any {
		return deploymentManifest(deploymentName(i))
	})
}

// measureReplacement raises the price of kind A's instance type so every
// kind-A workload should move and no kind-B one may; returns the figures
// and the time window whose requests are counted.
func measureReplacement(settings Settings, plane *ControlPlane, reactor *Reactor, watch *DeploymentWatch,
	size int, dir string) (*ReplacementFigures, [2]time.Time, error) {
	var window [2]time.Time
	before := policyManifest(nil)
	fromType, err := expectedInstanceType(settings.Operator, dir, 0, before)
	if err != nil {
		return nil, window, err
	}
	prices := []map[string]string{{"instanceType": fromType, "onDemand": "5.00"}}
	after := policyManifest(prices)
	figures := &ReplacementFigures{PolicyChangedTo: fromType + " on demand at $5.00/h"}
	expected := map[int]string{}
	for kind := 0; kind < 2; kind++ {
		was := fromType
		if kind != 0 {
			if was, err = expectedInstanceType(settings.Operator, dir, kind, before); err != nil {
				return nil, window, err
			}
		}
		will, err := expectedInstanceType(settings.Operator, dir, kind, after)
		if err != nil {
			return nil, window, err
		}
		if was != will {
			expected[kind] = will
			figures.To = will
		}
	}
	snapshot := watch.Snapshot()
	movers := map[string]string{}
	others := map[string]string{} // name -> resourceVersion before
	for i := 0; i < size; i++ {
		name := deploymentName(i)
		if to, moves := expected[i%2]; moves {
			movers[name] = to
		} else {
			others[name] = snapshot[name].resourceVersion
		}
	}
	figures.ShouldMove = len(movers)
	if len(movers) == 0 {
		return nil, window, fmt.Errorf("re-placement: the price change should move no workload")
	}
	logf("re-placement: %d of %d should move from %s to %s", len(movers), size, fromType, figures.To)

	completer := startRolloutCompleter(plane.client)
	watch.SetOnRollout(func(name string, generation int64) {
		if _, moves := movers[name]; moves {
			completer.add(name, generation)
		}
	})
	defer func() {
		watch.SetOnRollout(nil)
		completer.stop()
	}()
	window[0] = time.Now()
	patch := map[string]any{"spec": map[string]any{"prices": prices}}
	if err := plane.client.Patch(policiesPath+"/default", MergePatch, patch); err != nil {
		return nil, window, err
	}
	// At least 5 minutes, and 150 ms a mover beyond that: 5,000 moves on a
	// loaded 2-core machine took longer than 5 minutes.
	limit := 5 * time.Minute
	if scaled := time.Duration(len(movers)) * 150 * time.Millisecond; scaled > limit {
		limit = scaled
	}
	err = watch.WaitFor(limit, func(state map[string]deploymentState) bool {
		for name, to := range movers {
			if state[name].instanceType != to {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, window, fmt.Errorf("re-placement: %v", err)
	}
	state := watch.Snapshot()
	lastMove := window[0]
	for name, to := range movers {
		if state[name].changedAt.After(window[0]) {
			figures.Moved++
		}
		if state[name].instanceType == to {
			figures.MovedCorrectly++
		}
		if state[name].changedAt.After(lastMove) {
			lastMove = state[name].changedAt
		}
	}
	figures.SecondsToMove = round(lastMove.Sub(window[0]).Seconds(), 3)
	if _, err := reactor.settle(5 * time.Minute); err != nil {
		return nil, window, err
	}
	window[1] = time.Now()
	// The server's own word on the others: a fresh list, not the watch.
	items, _, err := plane.client.ListAll(deploymentsPath)
	if err != nil {
		return nil, window, err
	}
	for _, item := range items {
		if rv, ok := others[item.Metadata.Name]; ok {
			figures.OthersChecked++
			if item.Metadata.ResourceVersion != rv {
				figures.OthersTouched++
			}
		}
	}
	return figures, window, nil
}

// measureRestart starts a second operator with everything in place: time
// to synced, the requests its first full round of (no-op) reconciles
// makes, and a window with resyncs. Windows: [start, settled], [resync
// window start, end].
func measureRestart(settings Settings, plane *ControlPlane, dir string, origin time.Time, extra []string) (*RestartFigures,
	[]ProcSample, [4]time.Time, error) {
	var windows [4]time.Time
	kubeconfig := filepath.Join(dir, "operator.kubeconfig")
	rawList, err := rawListSeconds(plane)
	if err != nil {
		return nil, nil, windows, err
	}
	rawStream, err := rawStreamSeconds(plane)
	if err != nil {
		return nil, nil, windows, err
	}
	windows[0] = time.Now()
	reactor, err := startOperator(settings, kubeconfig, filepath.Join(dir, "operator-restart.log"),
		append([]string{"--resync", settings.Resync.String()}, extra...)...)
	if err != nil {
		return nil, nil, windows, err
	}
	defer reactor.stop()
	sampler := StartSampler(reactor.pid(), origin, 100*time.Millisecond)
	figures := &RestartFigures{RawListSeconds: round(rawList, 3), RawStreamSeconds: round(rawStream, 3)}
	if figures.SecondsToSynced, err = reactor.waitReady(2 * time.Minute); err != nil {
		sampler.Stop()
		return nil, nil, windows, err
	}
	figures.SecondsToSynced = round(figures.SecondsToSynced, 3)
	settled, err := reactor.settle(5 * time.Minute)
	if err != nil {
		sampler.Stop()
		return nil, nil, windows, err
	}
	windows[1] = time.Now()
	figures.SecondsToSettled = round(settled.Sub(reactor.started).Seconds(), 3)
	if figures.Reconciles, err = reactor.metric("controller_runtime_reconcile_total"); err != nil {
		sampler.Stop()
		return nil, nil, windows, err
	}

	// Resyncs: every workload again, twice, with nothing to change.
	window := 2*settings.Resync + settings.Resync/2
	logf("restarted: synced in %.3f s; resync window of %v", figures.SecondsToSynced, window)
	windows[2] = time.Now()
	cpu := sampler.Now().CPUSeconds
	time.Sleep(window)
	windows[3] = time.Now()
	figures.ResyncSeconds = round(windows[3].Sub(windows[2]).Seconds(), 1)
	reconciles, err := reactor.metric("controller_runtime_reconcile_total")
	if err != nil {
		sampler.Stop()
		return nil, nil, windows, err
	}
	figures.ResyncReconciles = reconciles - figures.Reconciles
	cpuUsed := sampler.Now().CPUSeconds - cpu
	figures.ResyncCPUPercent = round(cpuUsed/figures.ResyncSeconds*100, 2)
	if figures.ResyncReconciles > 0 {
		figures.MicrosPerNoopCPU = round(cpuUsed/figures.ResyncReconciles*1e6, 1)
	}
	figures.SteadyRSSMiB = round(median(sampler.Between(windows[2].Sub(origin).Seconds(),
		windows[3].Sub(origin).Seconds())), 1)
	figures.SteadyHeap = reactor.heap()
	samples, peak := sampler.Stop()
	figures.PeakRSSMiB = round(peak, 1)
	return figures, samples, windows, nil
}

// timeBoth fetches the GpuWorkloads and the Deployments at once, as the
// operator's informers do, with fetch throwing the bytes away: what the
// API server alone needs to serve a full sync.
func timeBoth(fetch func(path string) error) (float64, error) {
	start := time.Now()
	errs := make(chan error, 2)
	for _, path := range []string{"/apis/gpuplacement.io/v1alpha1/gpuworkloads", "/apis/apps/v1/deployments"} {
		go func(path string) { errs <- fetch(path) }(path)
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	return time.Since(start).Seconds(), nil
}

// rawListSeconds: paged LISTs, decoding nothing but the continue token.
func rawListSeconds(plane *ControlPlane) (float64, error) {
	return timeBoth(func(path string) error {
		next := ""
		for {
			var page struct {
				Metadata struct {
					Continue string `json:"continue"`
				} `json:"metadata"`
			}
			query := "?limit=500"
			if next != "" {
				query += "&continue=" + url.QueryEscape(next)
			}
			if err := plane.client.Do("GET", path+query, "", nil, &page); err != nil {
				return err
			}
			if next = page.Metadata.Continue; next == "" {
				return nil
			}
		}
	})
}

// rawStreamSeconds: streaming lists, the way the operator fills its caches
// on servers that offer them (Kubernetes 1.32+).
func rawStreamSeconds(plane *ControlPlane) (float64, error) {
	return timeBoth(func(path string) error {
		_, err := plane.client.StreamList(context.Background(), path)
		return err
	})
}
