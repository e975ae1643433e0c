package main

// bench-scale jobs: how fast suspended Jobs are placed and resumed. For
// each reactor, on a fresh control plane (no controller-manager: nothing
// starts a Job, so only the reactor writes it): N suspended Jobs created
// up front, then one GpuWorkload each at --rate per second; measured is
// the time from a GpuWorkload's creation to its Job seen resumed
// (spec.suspend false) on an independent watch, and the reactor's requests
// by the API server's audit log, per Job. The floor patches each Job once,
// the placement and the resume together, with nothing else.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

const jobsPath = "/apis/batch/v1/namespaces/" + benchNamespace + "/jobs"

type JobsRun struct {
	Reactor            string        `json:"reactor"`
	Jobs               int           `json:"jobs"`
	Resumed            int           `json:"resumed"`
	LatencyMs          Latency       `json:"creationToResumedMs"`
	SecondsToResumeAll float64       `json:"secondsToResumeAll"`
	Requests           RequestCounts `json:"requests"`
	RequestsPerJob     float64       `json:"requestsPerJob"`
	JobPatchesPerJob   float64       `json:"jobPatchesPerJob"`
	ReactorCPUSeconds  float64       `json:"reactorCpuSeconds"`
	PeakRSSMiB         float64       `json:"peakRssMiB"`
}

type JobsReport struct {
	Started    time.Time         `json:"started"`
	Commit     string            `json:"commit"`
	Machine    Machine           `json:"machine"`
	Kubernetes string            `json:"kubernetes"`
	Settings   map[string]string `json:"settings"`
	Runs       []JobsRun         `json:"runs"`
}

func trainingJobName(i int) string { return fmt.Sprintf("job-%05d", i) }

// A suspended training Job, as the chart's admission policy leaves it.
func trainingJobManifest(i int) map[string]any {
	name := trainingJobName(i)
	return map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": name, "namespace": benchNamespace,
			"labels": map[string]string{"gpuplacement.io/workload": name}},
		"spec": map[string]any{
			"suspend": true,
			"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers": []map[string]any{{"name": "server", "image": "registry.k8s.io/pause:3.10",
					"resources": map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "64Mi"}}}},
			}},
		},
	}
}

// A fine-tune of a small model: one GPU, the same fields the floor writes.
func jobWorkloadManifest(i int) map[string]any {
	return map[string]any{
		"apiVersion": "gpuplacement.io/v1alpha1", "kind": "GpuWorkload",
		"metadata": map[string]any{"name": trainingJobName(i), "namespace": benchNamespace},
		"spec": map[string]any{
			"targetRef": map[string]string{"kind": "Job", "name": trainingJobName(i)},
			"workload":  map[string]any{"kind": "FineTuning"},
			"model":     map[string]any{"parameters": "1B", "precision": "fp16"},
			"objective": "CostOptimized",
			"constraints": map[string]any{"tiers": []string{"NVIDIA"},
				"instanceTypes": []string{"g4dn.xlarge"}},
		},
	}
}

// resumedWatch records, per Job, when it was first seen resumed.
type resumedWatch struct {
	mu      sync.Mutex
	resumed map[string]time.Time
	cancel  context.CancelFunc
}

func watchResumed(client *Client) (*resumedWatch, error) {
	_, resourceVersion, err := client.ListAll(jobsPath)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	watch := &resumedWatch{resumed: map[string]time.Time{}, cancel: cancel}
	go client.Follow(ctx, jobsPath, resourceVersion, func(event WatchEvent, at time.Time) {
		var spec struct {
			Suspend *bool `json:"suspend"`
		}
		if json.Unmarshal(event.Object.Spec, &spec) != nil || spec.Suspend == nil || *spec.Suspend {
			return
		}
		watch.mu.Lock()
		if _, seen := watch.resumed[event.Object.Metadata.Name]; !seen {
			watch.resumed[event.Object.Metadata.Name] = at
		}
		watch.mu.Unlock()
	}, func([]Object, time.Time) {}, func(error) {})
	return watch, nil
}

func (w *resumedWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.resumed)
}

func runJobs(args []string) error {
	flags := flag.NewFlagSet("jobs", flag.ExitOnError)
	var settings Settings
	var reactors string
	n := flags.Int("n", 1000, "suspended Jobs (and GpuWorkloads)")
	flags.StringVar(&settings.Repo, "repo", ".", "the repository")
	flags.StringVar(&settings.Operator, "operator", "build/bin/gpu-placement", "the operator binary")
	flags.Float64Var(&settings.Rate, "rate", 20, "GpuWorkload creations per second")
	flags.StringVar(&settings.Work, "work", filepath.Join(os.TempDir(), "gpu-placement-bench-jobs"), "scratch directory")
	flags.StringVar(&settings.Out, "out", "build/bench-results", "where the JSON goes")
	flags.StringVar(&reactors, "reactors", "floor,operator", "floor, operator or both")
	flags.Parse(args)
	for _, path := range []*string{&settings.Repo, &settings.Operator, &settings.Out} {
		abs, err := filepath.Abs(*path)
		if err != nil {
			return err
		}
		*path = abs
	}
	report := JobsReport{Started: time.Now().UTC(), Machine: describeMachine(),
		Settings: map[string]string{"jobs": fmt.Sprint(*n), "rate": fmt.Sprint(settings.Rate)}}
	report.Commit = gitCommit(settings.Repo)
	for _, reactor := range strings.Split(reactors, ",") {
		if reactor != "floor" && reactor != "operator" {
			return fmt.Errorf("--reactors: %q is not floor or operator", reactor)
		}
		logf("jobs: %s, %d suspended Jobs, GpuWorkloads at %.0f/s", reactor, *n, settings.Rate)
		run, version, err := measureJobs(settings, reactor, *n)
		if err != nil {
			return fmt.Errorf("%s: %v", reactor, err)
		}
		report.Kubernetes = version
		report.Runs = append(report.Runs, run)
		printJobsRun(run)
	}
	if err := os.MkdirAll(settings.Out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(settings.Out, "jobs-"+report.Started.Format("20060102-150405")+".json")
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	logf("wrote %s", path)
	return os.WriteFile(path, data, 0o644)
}

func measureJobs(settings Settings, reactorName string, n int) (JobsRun, string, error) {
	run := JobsRun{Reactor: reactorName, Jobs: n}
	dir := filepath.Join(settings.Work, reactorName)
	os.RemoveAll(dir)
	plane, err := startControlPlane(settings.Repo, dir, true, "", false)
	if err != nil {
		return run, "", err
	}
	defer plane.Stop()
	var version struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := plane.client.Do("GET", "/version", "", nil, &version); err != nil {
		return run, "", err
	}
	if err := plane.Install(); err != nil {
		return run, "", err
	}
	if err := createAll(plane.client, jobsPath, n, trainingJobManifest); err != nil {
		return run, "", fmt.Errorf("creating Jobs: %v", err)
	}
	var reactor *Reactor
	user := floorUser
	if reactorName == "operator" {
		user = operatorUser
		kubeconfig, err := plane.OperatorKubeconfig()
		if err != nil {
			return run, "", err
		}
		if reactor, err = startOperator(settings, kubeconfig, filepath.Join(dir, "operator.log")); err != nil {
			return run, "", err
		}
		if _, err := reactor.waitReady(2 * time.Minute); err != nil {
			reactor.stop()
			return run, "", err
		}
	} else {
		credentials, err := plane.FloorCredentials()
		if err != nil {
			return run, "", err
		}
		self, _ := os.Executable()
		if reactor, err = startFloor(self, credentials, "", filepath.Join(dir, "floor.log"), "--jobs"); err != nil {
			return run, "", err
		}
	}
	defer reactor.stop()
	sampler := StartSampler(reactor.pid(), reactor.started, 250*time.Millisecond)
	watch, err := watchResumed(plane.client)
	if err != nil {
		return run, "", err
	}
	defer watch.cancel()

	cpuBefore := sampler.Now().CPUSeconds
	start := time.Now()
	sent, err := createAtRate(plane.client, n, settings.Rate, jobWorkloadManifest, nil)
	if err != nil {
		return run, "", fmt.Errorf("creating GpuWorkloads: %v", err)
	}
	deadline := time.Now().Add(time.Duration(float64(n)/settings.Rate*3*float64(time.Second)) + 2*time.Minute)
	for watch.count() < n && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	end := time.Now()
	time.Sleep(2 * time.Second) // the audit log's batch
	samples, _ := sampler.Stop()
	for _, sample := range samples {
		run.PeakRSSMiB = max(run.PeakRSSMiB, sample.RSSMiB)
	}
	if len(samples) > 0 {
		run.ReactorCPUSeconds = samples[len(samples)-1].CPUSeconds - cpuBefore
	}

	watch.mu.Lock()
	var latencies []float64
	last := start
	for i := 0; i < n; i++ {
		at, ok := watch.resumed[trainingJobName(i)]
		if !ok {
			continue
		}
		latencies = append(latencies, float64(at.Sub(sent[i]).Microseconds())/1000)
		if at.After(last) {
			last = at
		}
	}
	watch.mu.Unlock()
	sort.Float64s(latencies)
	run.Resumed = len(latencies)
	run.LatencyMs = summarize(latencies)
	run.SecondsToResumeAll = last.Sub(start).Seconds()
	requests, err := plane.Audit()
	if err != nil {
		return run, "", err
	}
	run.Requests = countRequests(requests, user, start, end.Add(2*time.Second))
	run.RequestsPerJob = float64(run.Requests.Total-run.Requests.ByVerb["watch gpuworkloads"]-
		run.Requests.ByVerb["watch jobs"]) / float64(max(run.Resumed, 1))
	run.JobPatchesPerJob = float64(run.Requests.ByVerb["patch jobs"]) / float64(max(run.Resumed, 1))
	if run.Resumed < n {
		return run, version.GitVersion, fmt.Errorf("only %d of %d Jobs resumed (see %s)", run.Resumed, n, dir)
	}
	return run, version.GitVersion, nil
}

func printJobsRun(run JobsRun) {
	fmt.Printf("%-9s %d Jobs: creation to resumed p50 %.1f ms, p99 %.1f ms; all resumed in %.1f s; "+
		"%.2f requests per Job (%.2f patches of the Job); reactor CPU %.2f s, peak RSS %.1f MiB\n",
		run.Reactor, run.Jobs, run.LatencyMs.P50, run.LatencyMs.P99, run.SecondsToResumeAll,
		run.RequestsPerJob, run.JobPatchesPerJob, run.ReactorCPUSeconds, run.PeakRSSMiB)
	for _, key := range run.Requests.keys() {
		fmt.Printf("          %-40s %d\n", key, run.Requests.ByVerb[key])
	}
}
