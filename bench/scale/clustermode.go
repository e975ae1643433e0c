package main

// Cluster mode (--cluster): each reactor on a fresh simulated EKS cluster
// (scripts/controlplane start --cluster: kube-scheduler,
// kube-controller-manager, kwok and a fleet of nodes), measuring, on top of
// the time to the Deployment patch, the time from a GpuWorkload's creation
// until the pods of its placed template are all Running.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// RunningFigures: cluster mode's figures of one run.
type RunningFigures struct {
	Pools      string            `json:"pools"`
	PoolFile   string            `json:"poolFile"`   // its text: the fleet, as run
	Placements map[string]string `json:"placements"` // kind -> instance type (recommend's answer)
	// Set-up: the Deployments' first pods (no placement: CPU nodes) Running.
	FirstPodsRunning int     `json:"firstPodsRunning"`
	FirstPodsSeconds float64 `json:"firstPodsSeconds"`
	BoundSeconds     float64 `json:"boundSeconds"` // from each creation
	EndedBy          string  `json:"endedBy"`      // every one Running, the bound, or no progress
	Running          int     `json:"running"`      // within the bound
	LatencyMs        Latency `json:"latencyMs"`    // creation to all placed pods Running, of those
	// From the first creation to the last workload's pods Running.
	SecondsToAllRunning float64        `json:"secondsToAllRunning"`
	NotRunning          int            `json:"notRunning"`
	WhyNotRunning       map[string]int `json:"whyNotRunning,omitempty"` // reason -> workloads
	// kube-scheduler, kube-controller-manager and kwok over the measured
	// window (creations to all Running and the reactor settled): not in
	// the API server's figure, which is its own process's alone.
	ClusterCPUSeconds map[string]float64 `json:"clusterCpuSeconds"`
	// --karpenter: the nodes launched and what they cost.
	Karpenter *LaunchFigures `json:"karpenter,omitempty"`
}

type clusterSettings struct {
	Enabled    bool
	Karpenter  bool          // nodes launched by Karpenter's kwok provider, none at the start
	Pools      string        // a pool file; "" = derived from the mix for each size
	Simcluster string        // the node generator, which tells what a node holds
	Bound      time.Duration // a workload not Running this long after its creation never was
	Stall      time.Duration // stop waiting once nothing has started Running for this long
}

func (c *clusterSettings) register(flags *flag.FlagSet) {
	flags.BoolVar(&c.Enabled, "cluster", false,
		"run each reactor on a simulated cluster (scheduler, controller-manager, kwok nodes) and measure until the pods run")
	flags.BoolVar(&c.Karpenter, "karpenter", false,
		"cluster mode: no nodes at the start; Karpenter launches them from per-tier NodePools (the time to Running includes the launch)")
	flags.StringVar(&c.Pools, "pools", "",
		"cluster mode: the pool file (default: one sized for the mix at each size, bench-scale fleet)")
	flags.StringVar(&c.Simcluster, "simcluster", "",
		"cluster mode: the simcluster binary, for sizing the fleet (bench/run-scale passes the one scripts/setup built)")
	flags.DurationVar(&c.Bound, "running-bound", 10*time.Minute,
		"cluster mode: a workload whose pods are not all Running this long after its creation counts as never Running")
	flags.DurationVar(&c.Stall, "running-stall", 2*time.Minute,
		"cluster mode: stop waiting for pods once none has started Running for this long")
}

// clusterRun is what cluster mode adds to a run.
type clusterRun struct {
	pods    *PodWatch
	fleet   *fleetWatch // --karpenter
	patches string      // the floor's table, a file
	figures *RunningFigures
	cpu     map[string]float64 // the cluster's processes at the window's start
}

// poolFile: the given one, or one sized for the mix at this size.
func poolFile(settings Settings, dir string, size int) (string, error) {
	if !settings.Cluster.Enabled {
		return "", nil
	}
	if settings.Cluster.Pools != "" {
		return settings.Cluster.Pools, nil
	}
	if settings.Cluster.Karpenter {
		return karpenterPools(settings.Repo, dir, size)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	placements, err := recommendKinds(settings.Operator, dir, policyManifest(nil))
	if err != nil {
		return "", err
	}
	pools, err := fleetPools(FleetInputs{Simcluster: settings.Cluster.Simcluster,
		Catalog: filepath.Join(settings.Repo, "config", "catalog.yaml"), Dir: dir}, size, placements)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "pools.yaml")
	return path, os.WriteFile(path, []byte(pools), 0o644)
}

// prepareCluster creates the bench's policy (with the fleet's capacity
// label), the floor's patches, and the Deployments, then waits for their
// first pods to run, so that the measured window holds only the rollouts
// the placements cause.
func prepareCluster(settings Settings, plane *ControlPlane, dir, pools string, size int) (*clusterRun, error) {
	run := &clusterRun{figures: &RunningFigures{Pools: pools, Placements: map[string]string{},
		BoundSeconds: settings.Cluster.Bound.Seconds()}}
	if text, err := os.ReadFile(pools); err == nil {
		run.figures.PoolFile = string(text)
	}
	label, err := plane.capacityLabel()
	if err != nil {
		return nil, err
	}
	if settings.Cluster.Karpenter {
		label = karpenterCapacityLabel
		run.figures.Karpenter = &LaunchFigures{}
		run.fleet = watchFleet(plane.client)
	}
	policy := clusterPolicyManifest(label)
	if err := plane.client.Create(policiesPath, policy); err != nil {
		return nil, err
	}
	placements, err := recommendKinds(settings.Operator, dir, policy)
	if err != nil {
		return nil, err
	}
	for kind, placement := range placements {
		run.figures.Placements[kind] = placement.InstanceType
	}
	patches, err := floorPatches(placements)
	if err != nil {
		return nil, err
	}
	run.patches = filepath.Join(dir, "floor-patches.json")
	if err := writeJSON(run.patches, patches); err != nil {
		return nil, err
	}
	if run.pods, err = watchPods(plane.client, size); err != nil {
		return nil, err
	}
	logf("creating %d Deployments (their first pods go to the CPU nodes)", size)
	start := time.Now()
	if err := createAll(plane.client, deploymentsPath, size, func(i int) map[string]any {
		return clusterDeploymentManifest(deploymentName(i))
	}); err != nil {
		run.stop()
		return nil, err
	}
	run.figures.FirstPodsRunning = run.waitFirstPods(size, settings.Cluster.Stall)
	run.figures.FirstPodsSeconds = round(time.Since(start).Seconds(), 1)
	if run.fleet != nil {
		run.figures.Karpenter.BeforePlacement = run.fleet.openWindow()
	}
	return run, nil
}

func (c *clusterRun) stop() {
	c.pods.Stop()
	if c.fleet != nil {
		c.fleet.Stop()
	}
}

// afterPlacement: the fleet once every placed pod runs (--karpenter).
func (c *clusterRun) afterPlacement() {
	if c.fleet != nil {
		c.figures.Karpenter.AfterPlacement = c.fleet.snapshot()
	}
}

// afterIdle: the fleet after the idle window, the run's totals and
// Karpenter's memory (--karpenter).
func (c *clusterRun) afterIdle(plane *ControlPlane) {
	if c.fleet == nil {
		return
	}
	if err := c.fleet.finish(c.figures.Karpenter); err != nil {
		logf("listing the nodes: %v", err)
	}
	var err error
	figures := c.figures.Karpenter
	if figures.ClaimedCostPerHour, figures.Claims, err = claimedCost(plane.client); err != nil {
		logf("listing the GpuWorkloads: %v", err)
	}
	if stats, ok := readProc(plane.clusterPids["karpenter"]); ok {
		c.figures.Karpenter.KarpenterRSSMiB = round(stats.RSSMiB, 1)
		c.figures.Karpenter.KarpenterPeakRSSMiB = round(stats.PeakMiB, 1)
	}
}

// clusterPolicyManifest: the bench's policy, its node selector naming the
// capacity label the fleet's nodes carry.
func clusterPolicyManifest(capacityLabel map[string]string) map[string]any {
	policy := policyManifest(nil)
	spec := policy["spec"].(map[string]any)
	spec["nodeLabels"] = map[string]any{"capacityType": capacityLabel}
	return policy
}

// waitFirstPods waits until every Deployment has its pods Running, or
// none has started Running for `stall`, and returns how many run.
func (c *clusterRun) waitFirstPods(size int, stall time.Duration) int {
	lastLog := time.Now()
	progress, progressAt := -1, time.Now()
	for running := c.pods.UnplacedRunning(); ; running = c.pods.UnplacedRunning() {
		if running >= size*benchReplicas {
			return running
		}
		if running != progress {
			progress, progressAt = running, time.Now()
		}
		if time.Since(progressAt) > stall {
			logf("only %d of %d first pods Running, none more for %v: measuring anyway", running, size, stall)
			return running
		}
		if time.Since(lastLog) > 15*time.Second {
			logf("%d of %d first pods Running", running, size)
			lastLog = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRunning waits until every workload's placed pods are all Running,
// the bound has passed since the last creation, or nothing has started
// Running for the stall time; then fills the figures. placed, called once
// at the end, tells which Deployments were patched by then.
func (c *clusterRun) waitRunning(settings clusterSettings, sent []time.Time, placed func() func(int) bool) []float64 {
	deadline := sent[len(sent)-1].Add(settings.Bound)
	progress, progressAt := -1, time.Now()
	c.figures.EndedBy = "every workload Running"
	for {
		running := countSet(c.pods.RunningAt())
		if running == len(sent) {
			break
		}
		if running != progress {
			progress, progressAt = running, time.Now()
		}
		if time.Now().After(deadline) {
			c.figures.EndedBy = fmt.Sprintf("the bound (%v after the last creation)", settings.Bound)
			break
		}
		if time.Since(progressAt) > settings.Stall {
			c.figures.EndedBy = fmt.Sprintf("no pod started Running for %v", settings.Stall)
			break
		}
		if err := c.pods.Err(); err != nil {
			logf("%v", err)
			c.figures.EndedBy = err.Error()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c.summarize(settings.Bound, sent, placed)
}

// waitRollouts: once the pods run, the controller-manager still has to
// scale the old ReplicaSets down and report the rollouts done, and the
// operator writes its status when it does; the measured window ends when
// every placed Deployment says so (or the bound, or no progress for the
// stall time), so that none of it falls into the idle window.
func (c *clusterRun) waitRollouts(settings clusterSettings, sent []time.Time, watch *DeploymentWatch) {
	deadline := sent[len(sent)-1].Add(settings.Bound)
	progress, progressAt := -1, time.Now()
	for time.Now().Before(deadline) && time.Since(progressAt) < settings.Stall {
		done, waiting := 0, 0
		for _, state := range watch.Snapshot() {
			switch {
			case state.placedAt.IsZero():
			case state.rolledOut:
				done++
			default:
				waiting++
			}
		}
		if waiting == 0 {
			return
		}
		if done != progress {
			progress, progressAt = done, time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	logf("not every placed Deployment reports its rollout done: measuring anyway")
}

func countSet(times []time.Time) int {
	n := 0
	for _, t := range times {
		if !t.IsZero() {
			n++
		}
	}
	return n
}

// summarize: the latencies of those Running within the bound, and why the
// others are not.
func (c *clusterRun) summarize(bound time.Duration, sent []time.Time, placed func() func(int) bool) []float64 {
	runningAt := c.pods.RunningAt()
	var latencies []float64
	var never []int
	late := 0
	last := sent[0]
	for i, at := range runningAt {
		if at.IsZero() {
			never = append(never, i)
			continue
		}
		if at.Sub(sent[i]) > bound {
			late++
			continue
		}
		latencies = append(latencies, round(at.Sub(sent[i]).Seconds()*1000, 3))
		if at.After(last) {
			last = at
		}
	}
	c.figures.Running, c.figures.NotRunning = len(latencies), len(never)+late
	if len(latencies) > 0 {
		c.figures.LatencyMs = summarize(latencies)
		c.figures.SecondsToAllRunning = round(last.Sub(sent[0]).Seconds(), 3)
	}
	if len(never) > 0 {
		c.figures.WhyNotRunning = c.pods.whyNotRunning(never, placed())
	}
	if late > 0 {
		if c.figures.WhyNotRunning == nil {
			c.figures.WhyNotRunning = map[string]int{}
		}
		c.figures.WhyNotRunning["Running, but later than the bound"] = late
	}
	return latencies
}

// startCPU and endCPU bracket the measured window for the cluster's own
// processes.
func (c *clusterRun) startCPU(plane *ControlPlane) { c.cpu = plane.ClusterCPUSeconds() }

func (c *clusterRun) endCPU(plane *ControlPlane) {
	c.figures.ClusterCPUSeconds = map[string]float64{}
	for name, seconds := range plane.ClusterCPUSeconds() {
		c.figures.ClusterCPUSeconds[name] = round(seconds-c.cpu[name], 2)
	}
}

// describeReasons: the reasons, most frequent first.
func describeReasons(reasons map[string]int) []string {
	keys := make([]string, 0, len(reasons))
	for reason := range reasons {
		keys = append(keys, reason)
	}
	sort.Slice(keys, func(a, b int) bool {
		if reasons[keys[a]] != reasons[keys[b]] {
			return reasons[keys[a]] > reasons[keys[b]]
		}
		return keys[a] < keys[b]
	})
	lines := make([]string, len(keys))
	for i, reason := range keys {
		lines[i] = fmt.Sprintf("%d: %s", reasons[reason], reason)
	}
	return lines
}

// runFleet prints the pool file cluster mode uses for a size.
func runFleet(args []string) error {
	flags := flag.NewFlagSet("fleet", flag.ExitOnError)
	operator := flags.String("operator", "build/bin/gpu-placement", "the operator binary (recommend)")
	size := flags.Int("size", 10000, "workloads of the mix")
	var inputs FleetInputs
	flags.StringVar(&inputs.Simcluster, "simcluster", "", "the simcluster binary (scripts/setup builds it)")
	flags.StringVar(&inputs.Catalog, "catalog", "config/catalog.yaml", "the instance catalog")
	flags.Parse(args)
	dir, err := os.MkdirTemp("", "bench-fleet")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	inputs.Dir = dir
	placements, err := recommendKinds(*operator, dir, policyManifest(nil))
	if err != nil {
		return err
	}
	pools, err := fleetPools(inputs, *size, placements)
	if err != nil {
		return err
	}
	fmt.Print(pools)
	return nil
}
