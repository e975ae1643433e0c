package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type Settings struct {
	Repo          string
	Operator      string
	DecideBench   string
	Sizes         []int
	Rate          float64
	BulkRate      float64
	BulkFrom      int
	Idle          time.Duration
	Resync        time.Duration
	Work          string
	Out           string
	Reactors      []string
	OperatorFlags []string
	BulkFlags     []string
	Keep          bool
	// The controller-runtime reactor (bench/scale/crreactor) and its extra flags.
	ControllerRuntime      string
	ControllerRuntimeFlags []string
	// Restart kube-apiserver once, half-way through the creations: every
	// watch ends and every reactor must reopen its own.
	RestartAPIServer bool
	Cluster          clusterSettings
}

// Figures of one measured run, as written to the JSON file.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

type PlacementFigures struct {
	Rate              float64 `json:"creationsPerSecond"`
	Placed            int     `json:"placed"`
	LatencyMs         Latency `json:"latencyMs"`
	SecondsToPlaceAll float64 `json:"secondsToPlaceAll"`
	// From the last placement until the reactor was quiet: its statuses
	// (and the reconciles its own writes caused) done.
	SecondsToQuiet    float64       `json:"secondsToQuietAfterLastPlacement"`
	PlacementsPerSec  float64       `json:"placementsPerSecond"`
	Requests          RequestCounts `json:"requests"`
	RequestsPerPlaced float64       `json:"requestsPerPlacement"`
	CPUSeconds        float64       `json:"cpuSeconds"`
	ServerCPUSeconds  float64       `json:"controlPlaneCpuSeconds"` // kube-apiserver + etcd
	// kube-apiserver alone, and per placement (the harness's creations
	// and its watch included: the same for every reactor).
	APIServerCPUSeconds   float64 `json:"apiServerCpuSeconds"`
	APIServerMsPerPlaced  float64 `json:"apiServerCpuMsPerPlacement"`
	ServerCPUMsPerPlaced  float64 `json:"controlPlaneCpuMsPerPlacement"`
	ReactorCPUMsPerPlaced float64 `json:"reactorCpuMsPerPlacement"`
}

type IdleFigures struct {
	Seconds    float64 `json:"seconds"`
	CPUPercent float64 `json:"cpuPercentOfOneCore"`
	RSSMiB     float64 `json:"rssMiB"` // the window's median
	// At the window's end: with --idle past the transport's idle TTL (60
	// s), the burst's kept-alive connections are closed by then.
	RSSAtEndMiB float64       `json:"rssAtEndMiB"`
	Requests    RequestCounts `json:"requests"`
	// The operator's allocator at the window's end: what of the resident
	// memory is in use, and what it holds free.
	Heap *HeapFigures `json:"heap,omitempty"`
}

// HeapFigures: the operator's gpu_placement_heap_bytes, in MiB.
type HeapFigures struct {
	InUseMiB  float64 `json:"inUseMiB"`
	FreeMiB   float64 `json:"freeMiB"`
	MappedMiB float64 `json:"mappedMiB"`
}

type ReplacementFigures struct {
	ShouldMove      int           `json:"shouldMove"`
	Moved           int           `json:"moved"`
	MovedCorrectly  int           `json:"movedToTheExpectedType"`
	To              string        `json:"-"`
	SecondsToMove   float64       `json:"secondsUntilAllMoved"`
	Requests        RequestCounts `json:"requests"`
	OthersTouched   int           `json:"othersTouched"` // Deployments that should not move but changed
	OthersChecked   int           `json:"othersChecked"`
	PolicyChangedTo string        `json:"priceChange"`
}

type RestartFigures struct {
	SecondsToSynced  float64       `json:"secondsFromStartToSynced"`
	RawListSeconds   float64       `json:"rawListSeconds"`   // paged LISTs fetched and discarded: the server's share
	RawStreamSeconds float64       `json:"rawStreamSeconds"` // streaming lists read and discarded (what the operator uses)
	SecondsToSettled float64       `json:"secondsFromStartToAllReconciled"`
	Reconciles       float64       `json:"reconciles"`
	Requests         RequestCounts `json:"requests"`
	PeakRSSMiB       float64       `json:"peakRssMiB"`
	ResyncSeconds    float64       `json:"resyncWindowSeconds"`
	ResyncReconciles float64       `json:"resyncReconciles"`
	ResyncRequests   RequestCounts `json:"resyncRequests"`
	ResyncCPUPercent float64       `json:"resyncCpuPercentOfOneCore"`
	MicrosPerNoopCPU float64       `json:"cpuMicrosecondsPerNoopReconcile"`
	SteadyRSSMiB     float64       `json:"steadyRssMiB"`
	SteadyHeap       *HeapFigures  `json:"steadyHeap,omitempty"`
}

type RunResult struct {
	Reactor        string              `json:"reactor"`
	Size           int                 `json:"size"`
	SecondsToReady float64             `json:"secondsFromStartToReady"` // N Deployments, no GpuWorkloads yet
	Placement      PlacementFigures    `json:"placement"`
	Idle           IdleFigures         `json:"idle"`
	PeakRSSMiB     float64             `json:"peakRssMiB"`
	Replacement    *ReplacementFigures `json:"replacement,omitempty"`
	Restart        *RestartFigures     `json:"restart,omitempty"`
	Cluster        *RunningFigures     `json:"cluster,omitempty"`
	LatenciesMs    []float64           `json:"latenciesMs"`
	// Cluster mode: creation to the placed pods all Running, of those that got there.
	RunningLatenciesMs []float64    `json:"runningLatenciesMs,omitempty"`
	Samples            []ProcSample `json:"samples"`
	SamplesOfRestart   []ProcSample `json:"samplesOfRestart,omitempty"`
	// The operator's status writer through the placement phase.
	StatusTrace []StatusSample `json:"statusTrace,omitempty"`
}

type Machine struct {
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	MemoryGB int    `json:"memoryGiB"`
	Kernel   string `json:"kernel"`
	Go       string `json:"go"`
}

type Report struct {
	Started    time.Time         `json:"started"`
	Commit     string            `json:"commit"`
	Machine    Machine           `json:"machine"`
	Kubernetes string            `json:"kubernetes"`
	Settings   map[string]string `json:"settings"`
	Decisions  map[string]string `json:"decisionEngine"`
	Runs       []RunResult       `json:"runs"`
	Ratios     []Ratio           `json:"ratiosToFloor"`
}

type Ratio struct {
	Reactor     string  `json:"reactor"` // to the floor's figures at the same size
	Size        int     `json:"size"`
	P50         float64 `json:"p50"`
	P99         float64 `json:"p99"`
	TimeToPlace float64 `json:"timeToPlaceAll"`
	Throughput  float64 `json:"throughput"`
	// Cluster mode: creation to pods Running.
	RunningP50 float64 `json:"runningP50,omitempty"`
	RunningP99 float64 `json:"runningP99,omitempty"`
}

func parseSettings(args []string) (Settings, error) {
	flags := flag.NewFlagSet("run", flag.ExitOnError)
	var s Settings
	var sizes, reactors, operatorFlags string
	quick := flags.Bool("quick", false, "a short run: 100 workloads, short idle windows")
	flags.StringVar(&s.Repo, "repo", ".", "the repository (for scripts/ and crds/)")
	flags.StringVar(&s.Operator, "operator", "build/bin/gpu-placement", "the operator binary")
	flags.StringVar(&s.DecideBench, "decide-bench", "build/bin/decide_bench", "the engine benchmark binary")
	flags.StringVar(&sizes, "sizes", "100,1000,10000", "numbers of workloads, comma-separated")
	flags.Float64Var(&s.Rate, "rate", 20, "GpuWorkload creations per second")
	flags.Float64Var(&s.BulkRate, "bulk-rate", 200, "creations per second from --bulk-from workloads on")
	flags.IntVar(&s.BulkFrom, "bulk-from", 10000, "size from which --bulk-rate applies")
	flags.DurationVar(&s.Idle, "idle", 30*time.Second, "idle window after placement")
	flags.DurationVar(&s.Resync, "resync", 15*time.Second, "the restarted operator's --resync")
	flags.StringVar(&s.Work, "work", filepath.Join(os.TempDir(), "gpu-placement-bench"), "scratch directory")
	flags.StringVar(&s.Out, "out", "build/bench-results", "where the JSON and PNG go")
	flags.StringVar(&reactors, "reactors", "floor,operator", "what to measure")
	flags.StringVar(&operatorFlags, "operator-flags", "", "extra flags for `gpu-placement run`, space-separated")
	bulkFlags := flags.String("bulk-operator-flags", "--qps 1000 --burst 2000 --workers 16",
		"extra flags for the operator from --bulk-from workloads on, so that the client-side limit is not what is measured")
	flags.StringVar(&s.ControllerRuntime, "controller-runtime", "",
		"the controller-runtime reactor binary (bench/scale/crreactor; bench/run-scale builds it)")
	controllerRuntimeFlags := flags.String("controller-runtime-flags", "",
		"extra flags for the controller-runtime reactor, space-separated (e.g. --max-concurrent-reconciles 4)")
	flags.BoolVar(&s.RestartAPIServer, "restart-apiserver", false,
		"restart kube-apiserver half-way through the creations (every watch ends: the reactors must reopen theirs)")
	s.Cluster.register(flags)
	flags.BoolVar(&s.Keep, "keep", false, "leave each run's control plane running (for profiling; stop it with scripts/controlplane stop)")
	flags.Parse(args)
	if *quick {
		sizes = "100"
		s.Idle = 10 * time.Second
		s.Resync = 10 * time.Second // the operator's least --resync
	}
	for _, field := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 2 {
			return s, fmt.Errorf("--sizes: %q is not a number of workloads (at least 2)", field)
		}
		s.Sizes = append(s.Sizes, n)
	}
	s.Reactors = strings.Split(reactors, ",")
	for _, reactor := range s.Reactors {
		if reactor != "floor" && reactor != "operator" && reactor != "controller-runtime" {
			return s, fmt.Errorf("--reactors: %q is not floor, operator or controller-runtime", reactor)
		}
	}
	s.ControllerRuntimeFlags = strings.Fields(*controllerRuntimeFlags)
	s.OperatorFlags = strings.Fields(operatorFlags)
	s.BulkFlags = strings.Fields(*bulkFlags)
	if s.Cluster.Karpenter && !s.Cluster.Enabled {
		return s, fmt.Errorf("--karpenter runs Karpenter in the simulated cluster: add --cluster")
	}
	if s.Rate <= 0 || s.BulkRate <= 0 {
		return s, fmt.Errorf("--rate and --bulk-rate must be positive")
	}
	return s, nil
}

func runBench(args []string) error {
	settings, err := parseSettings(args)
	if err != nil {
		return err
	}
	for _, path := range []*string{&settings.Repo, &settings.Operator, &settings.DecideBench, &settings.Out,
		&settings.ControllerRuntime, &settings.Cluster.Pools, &settings.Cluster.Simcluster} {
		if *path == "" {
			continue
		}
		if *path, err = filepath.Abs(*path); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(settings.Out, 0o755); err != nil {
		return err
	}
	report := Report{Started: time.Now().UTC(), Machine: describeMachine(), Settings: map[string]string{
		"sizes": fmt.Sprint(settings.Sizes), "rate": fmt.Sprint(settings.Rate),
		"bulkRate": fmt.Sprintf("%v from %d", settings.BulkRate, settings.BulkFrom),
		"idle":     settings.Idle.String(), "restartResync": settings.Resync.String(),
		"operatorFlags":          strings.Join(settings.OperatorFlags, " "),
		"bulkOperatorFlags":      strings.Join(settings.BulkFlags, " "),
		"controllerRuntimeFlags": strings.Join(settings.ControllerRuntimeFlags, " "),
		"restartAPIServer":       fmt.Sprint(settings.RestartAPIServer),
	}}
	if settings.Cluster.Enabled {
		report.Settings["cluster"] = fmt.Sprintf("pools %s, karpenter %v, running bound %v, stall %v",
			valueOr(settings.Cluster.Pools, "sized for the mix"), settings.Cluster.Karpenter, settings.Cluster.Bound,
			settings.Cluster.Stall)
	}
	if out, err := exec.Command("git", "-C", settings.Repo, "rev-parse", "--short", "HEAD").Output(); err == nil {
		report.Commit = strings.TrimSpace(string(out))
	}
	logf("decision engine: %s", settings.DecideBench)
	report.Decisions = runDecideBench(settings.DecideBench)

	for _, size := range settings.Sizes {
		for _, reactor := range settings.Reactors {
			logf("%s, %d workloads", reactor, size)
			result, version, err := measure(settings, reactor, size)
			if err != nil {
				return fmt.Errorf("%s with %d workloads: %v", reactor, size, err)
			}
			report.Kubernetes = version
			report.Runs = append(report.Runs, result)
			printRun(result)
		}
	}
	report.Ratios = ratios(report.Runs)
	base := filepath.Join(settings.Out, "scale-"+report.Started.Format("20060102-150405"))
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return fmt.Errorf("writing the report: %v", err)
	}
	if err := os.WriteFile(base+".json", data, 0o644); err != nil {
		return err
	}
	if err := drawPlot(report, base+".png"); err != nil {
		return err
	}
	printSummary(report)
	logf("wrote %s.json and %s.png", base, base)
	return nil
}

func valueOr(value, otherwise string) string {
	if value == "" {
		return otherwise
	}
	return value
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func describeMachine() Machine {
	machine := Machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				machine.CPU = strings.TrimSpace(value)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		fields := strings.Fields(string(data))
		if len(fields) > 1 {
			kib, _ := strconv.Atoi(fields[1])
			machine.MemoryGB = int(math.Round(float64(kib) / 1024 / 1024))
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		machine.Kernel = strings.TrimSpace(string(data))
	}
	return machine
}

func runDecideBench(binary string) map[string]string {
	figures := map[string]string{}
	out, err := exec.Command(binary).Output()
	if err != nil {
		figures["error"] = err.Error()
		return figures
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 3 && fields[0] == "throughput":
			figures["decisionsPerSecond"] = fields[1]
		case len(fields) >= 4 && fields[0] == "latency":
			figures[fields[1]+"Micros"] = fields[2]
		case len(fields) >= 3 && fields[0] == "allocations":
			figures["allocationsPerDecision"] = fields[1]
		}
	}
	return figures
}

// A reactor process: the operator or the floor.
type Reactor struct {
	command     *exec.Cmd
	exited      chan struct{}
	metricsPort int
	healthPort  int
	started     time.Time
}

func freePort() int {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port
}

func startOperator(settings Settings, kubeconfig, logPath string, extra ...string) (*Reactor, error) {
	reactor := &Reactor{metricsPort: freePort(), healthPort: freePort()}
	args := []string{"run", "--kubeconfig", kubeconfig, "--log-level", "warn",
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", reactor.metricsPort),
		"--health-addr", fmt.Sprintf("127.0.0.1:%d", reactor.healthPort),
		"--metrics-secure=false"} // plain HTTP for metric(): the benchmark reads, nobody else
	args = append(append(args, settings.OperatorFlags...), extra...)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	reactor.command = exec.Command(settings.Operator, args...)
	reactor.command.Stdout, reactor.command.Stderr = logFile, logFile
	if err := reactor.begin(); err != nil {
		return nil, err
	}
	return reactor, nil
}

func (r *Reactor) begin() error {
	r.started = time.Now()
	// A harness stopped by a signal or a crash must not leave its reactor
	// running against a control plane that is gone.
	if r.command.SysProcAttr == nil {
		r.command.SysProcAttr = &syscall.SysProcAttr{}
	}
	r.command.SysProcAttr.Pdeathsig = syscall.SIGTERM
	if err := r.command.Start(); err != nil {
		return err
	}
	r.exited = make(chan struct{})
	go func() {
		r.command.Wait()
		close(r.exited)
	}()
	return nil
}

func (r *Reactor) pid() int { return r.command.Process.Pid }

func (r *Reactor) stop() {
	r.command.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(20 * time.Second):
		r.command.Process.Kill()
		<-r.exited
	}
}

// waitReady polls /readyz; the time from process start until it answered 200.
func (r *Reactor) waitReady(limit time.Duration) (float64, error) {
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", r.healthPort)
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if resp, err := client.Get(url); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(r.started).Seconds(), nil
			}
		}
		select {
		case <-r.exited:
			return 0, fmt.Errorf("the operator exited: %v", r.command.ProcessState)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, fmt.Errorf("not ready after %v", limit)
}

var metricsClient = &http.Client{Timeout: 5 * time.Second}

// metric sums every sample of a family on the operator's /metrics; a
// family that is not there is an error, not a zero.
func (r *Reactor) metric(family string) (float64, error) {
	lines, err := r.metricLines()
	if err != nil {
		return 0, err
	}
	return sumFamily(lines, family)
}

// counter is metric for a counter with labels, which has no sample until
// its first increment: a family not there yet is zero. (Right after a
// restart /readyz answers before the first reconcile has finished.)
func (r *Reactor) counter(family string) (float64, error) {
	lines, err := r.metricLines()
	if err != nil {
		return 0, err
	}
	total, err := sumFamily(lines, family)
	if errors.Is(err, errNoFamily) {
		return 0, nil
	}
	return total, err
}

var errNoFamily = errors.New("/metrics has no such family")

// heap reads the operator's allocator gauges; nil for a reactor without
// them (the floor, controller-runtime).
func (r *Reactor) heap() *HeapFigures {
	lines, err := r.metricLines()
	if err != nil {
		return nil
	}
	read := func(state string) (float64, error) {
		value, err := sumFamily(lines, `gpu_placement_heap_bytes{state="`+state+`"`)
		return round(value/(1<<20), 1), err
	}
	var h HeapFigures
	var errs [3]error
	h.InUseMiB, errs[0] = read("in_use")
	h.FreeMiB, errs[1] = read("free")
	h.MappedMiB, errs[2] = read("mapped")
	if errors.Join(errs[:]...) != nil {
		return nil
	}
	return &h
}

func sumFamily(lines []string, family string) (float64, error) {
	total, found := 0.0, false
	for _, line := range lines {
		// A family with a label's start ("name{label=\"x\"") matches that series only.
		labelled := strings.Contains(family, "{") && strings.HasPrefix(line, family)
		if !labelled && !strings.HasPrefix(line, family+"{") && !strings.HasPrefix(line, family+" ") {
			continue
		}
		fields := strings.Fields(line)
		value, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("/metrics: %q: %v", line, err)
		}
		total += value
		found = true
	}
	if !found {
		return 0, fmt.Errorf("%w: %s", errNoFamily, family)
	}
	return total, nil
}

// metricLines scrapes the operator's /metrics.
func (r *Reactor) metricLines() ([]string, error) {
	resp, err := metricsClient.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", r.metricsPort))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics answered %s", resp.Status)
	}
	var lines []string
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64*1024), 1<<20)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
	}
	return lines, scanner.Err()
}

// settle waits until the operator has nothing queued (reconciles, or
// statuses to write) and has stopped reconciling for a second: the end of
// a phase. Returns when the last reconcile was seen.
func (r *Reactor) settle(limit time.Duration) (time.Time, error) {
	const maxFailedScrapes = 10
	deadline := time.Now().Add(limit)
	last := -1.0
	stableSince := time.Now()
	failedScrapes := 0
	for time.Now().Before(deadline) {
		// One scrape a poll: each one costs the operator a render of every
		// series (with per-workload metrics, two for each workload), CPU
		// that is then counted as its own.
		lines, err := r.metricLines()
		if err != nil {
			// On a saturated machine one scrape can outlast its timeout
			// (2026-12-02, 20,000 workloads on 5,000 nodes): a busy
			// operator, not a quiet one. Only a run of them ends the wait.
			if failedScrapes++; failedScrapes >= maxFailedScrapes {
				return stableSince, fmt.Errorf("%d scrapes in a row failed: %v", failedScrapes, err)
			}
			stableSince = time.Now()
			time.Sleep(250 * time.Millisecond)
			continue
		}
		failedScrapes = 0
		reconciles, err := sumFamily(lines, "controller_runtime_reconcile_total")
		if errors.Is(err, errNoFamily) {
			reconciles, err = 0, nil
		}
		if err != nil {
			return stableSince, err
		}
		depth, err := sumFamily(lines, "workqueue_depth")
		if err != nil {
			return stableSince, err
		}
		// The operator's statuses trail its placements under a burst: a
		// phase ends once they are written too, so their cost is in it.
		if statuses, err := sumFamily(lines, "gpu_placement_statuses_waiting"); err == nil {
			depth += statuses
		}
		if reconciles != last || depth != 0 {
			last = reconciles
			stableSince = time.Now()
		} else if time.Since(stableSince) >= time.Second {
			return stableSince, nil
		}
		// Four scrapes a second tell a quiet second from a busy one.
		time.Sleep(250 * time.Millisecond)
	}
	return stableSince, fmt.Errorf("still reconciling after %v", limit)
}

// startFloor starts the floor; patches, when not "", is its table of
// patches by kind (cluster mode).
func startFloor(self, credentials, patches, logPath string, extra ...string) (*Reactor, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	reactor := &Reactor{}
	reactor.command = exec.Command(self, append([]string{"floor", "--credentials", credentials,
		"--namespace", benchNamespace, "--patches", patches}, extra...)...)
	reactor.command.Stderr = logFile
	stdout, err := reactor.command.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := reactor.begin(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		reactor.stop()
		return nil, fmt.Errorf("the floor did not start (see %s)", logPath)
	}
	return reactor, nil
}

func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	index := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(index, len(sorted)-1))]
}

// summarize: zeros for no values (a cluster-mode run that placed nothing).
func summarize(values []float64) Latency {
	if len(values) == 0 {
		return Latency{}
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	sum := 0.0
	for _, v := range sorted {
		sum += v
	}
	return Latency{P50: percentile(sorted, 0.50), P90: percentile(sorted, 0.90), P99: percentile(sorted, 0.99),
		Max: sorted[len(sorted)-1], Mean: sum / float64(len(sorted))}
}

func median(samples []ProcSample) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	values := make([]float64, len(samples))
	for i, s := range samples {
		values[i] = s.RSSMiB
	}
	sort.Float64s(values)
	return values[len(values)/2]
}

func round(value float64, digits int) float64 {
	scale := math.Pow(10, float64(digits))
	return math.Round(value*scale) / scale
}

func ratios(runs []RunResult) []Ratio {
	var out []Ratio
	for _, op := range runs {
		if op.Reactor == "floor" {
			continue
		}
		for _, floor := range runs {
			if floor.Reactor == "floor" && floor.Size == op.Size {
				ratio := Ratio{Reactor: op.Reactor, Size: op.Size,
					P50:         round(op.Placement.LatencyMs.P50/floor.Placement.LatencyMs.P50, 2),
					P99:         round(op.Placement.LatencyMs.P99/floor.Placement.LatencyMs.P99, 2),
					TimeToPlace: round(op.Placement.SecondsToPlaceAll/floor.Placement.SecondsToPlaceAll, 2),
					Throughput:  round(op.Placement.PlacementsPerSec/floor.Placement.PlacementsPerSec, 2)}
				if op.Cluster != nil && floor.Cluster != nil && op.Cluster.Running > 0 && floor.Cluster.Running > 0 {
					ratio.RunningP50 = round(op.Cluster.LatencyMs.P50/floor.Cluster.LatencyMs.P50, 2)
					ratio.RunningP99 = round(op.Cluster.LatencyMs.P99/floor.Cluster.LatencyMs.P99, 2)
				}
				out = append(out, ratio)
			}
		}
	}
	return out
}
