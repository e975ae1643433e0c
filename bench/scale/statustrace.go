package main

// The operator's status writer through the placement phase, read from its
// /metrics every two seconds: how fast the statuses were allowed to go
// while the placements went on, how many waited, and how many the
// reconciles wrote themselves because the writer was full.

import (
	"errors"
	"sync"
	"time"
)

type StatusSample struct {
	Seconds          float64 `json:"seconds"` // since the first creation
	AllowedPerSecond float64 `json:"allowedPerSecond"`
	Waiting          float64 `json:"statusesWaiting"`
	WrittenInline    float64 `json:"writtenInline"`
	QueueDepth       float64 `json:"queueDepth"` // the reconcilers' work queues
	// Running totals, for rates and means between samples: statuses
	// written; GpuWorkload keys' time in the work queue and their count;
	// PATCH requests' time (placements and statuses alike) and count; the
	// operator's CPU seconds.
	StatusesWritten float64 `json:"statusesWritten"`
	QueueWaitSum    float64 `json:"queueWaitSeconds"`
	QueueWaitCount  float64 `json:"queueWaitCount"`
	WorkSum         float64 `json:"workSeconds"` // their reconciles' time
	PatchSum        float64 `json:"patchSeconds"`
	PatchCount      float64 `json:"patchCount"`
	CPUSeconds      float64 `json:"cpuSeconds"`
	// The placements' latency the statuses' rate is judged against.
	BaselineMs float64 `json:"baselineMs"`
}

// traceStatuses samples until the returned stop is called, which answers
// the samples; none for a reactor without the operator's status metrics.
func traceStatuses(reactor *Reactor, start time.Time, every time.Duration) func() []StatusSample {
	var (
		mutex   sync.Mutex
		samples []StatusSample
		done    = make(chan struct{})
		ended   = make(chan struct{})
	)
	go func() {
		defer close(ended)
		ticker := time.NewTicker(every)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
			}
			lines, err := reactor.metricLines()
			if err != nil {
				continue
			}
			allowed, err := sumFamily(lines, "gpu_placement_status_writes_allowed_per_second")
			if errors.Is(err, errNoFamily) {
				return // not the operator
			}
			sample := StatusSample{Seconds: round(time.Since(start).Seconds(), 1), AllowedPerSecond: round(allowed, 1)}
			sample.Waiting, _ = sumFamily(lines, "gpu_placement_statuses_waiting")
			sample.WrittenInline, _ = sumFamily(lines, "gpu_placement_statuses_written_inline_total")
			sample.QueueDepth, _ = sumFamily(lines, "workqueue_depth")
			sample.StatusesWritten, _ = sumFamily(lines, "gpu_placement_status_writes_total")
			sample.QueueWaitSum, _ = sumFamily(lines, `workqueue_queue_duration_seconds_sum{name="gpuworkload"`)
			sample.QueueWaitCount, _ = sumFamily(lines, `workqueue_queue_duration_seconds_count{name="gpuworkload"`)
			sample.WorkSum, _ = sumFamily(lines, `workqueue_work_duration_seconds_sum{name="gpuworkload"`)
			sample.PatchSum, _ = sumFamily(lines, `rest_client_request_duration_seconds_sum{verb="patch"`)
			sample.PatchCount, _ = sumFamily(lines, `rest_client_request_duration_seconds_count{verb="patch"`)
			sample.CPUSeconds, _ = sumFamily(lines, "process_cpu_seconds_total")
			if baseline, err := sumFamily(lines, "gpu_placement_status_writes_baseline_seconds"); err == nil {
				sample.BaselineMs = round(baseline*1000, 2)
			}
			mutex.Lock()
			samples = append(samples, sample)
			mutex.Unlock()
		}
	}()
	return func() []StatusSample {
		close(done)
		<-ended
		mutex.Lock()
		defer mutex.Unlock()
		return samples
	}
}
