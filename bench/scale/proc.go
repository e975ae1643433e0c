package main

// Resident memory and CPU time of a process, from /proc, sampled on a
// fixed period for the memory-over-time plot and the phase figures.

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const clockTicksPerSecond = 100 // USER_HZ on Linux

type ProcSample struct {
	At         float64 `json:"t"`          // seconds since the run started
	RSSMiB     float64 `json:"rssMiB"`     // VmRSS
	CPUSeconds float64 `json:"cpuSeconds"` // user + system, cumulative
}

type ProcStats struct {
	RSSMiB     float64
	PeakMiB    float64 // VmHWM
	AnonMiB    float64 // RssAnon: the heap, stacks and anonymous mappings
	FileMiB    float64 // RssFile: the binary's and libraries' pages read in
	Threads    float64
	CPUSeconds float64
}

func readProc(pid int) (ProcStats, bool) {
	var stats ProcStats
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return stats, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		value, _ := strconv.ParseFloat(fields[1], 64) // kB, but for Threads
		switch fields[0] {
		case "VmRSS:":
			stats.RSSMiB = value / 1024
		case "VmHWM:":
			stats.PeakMiB = value / 1024
		case "RssAnon:":
			stats.AnonMiB = value / 1024
		case "RssFile:":
			stats.FileMiB = value / 1024
		case "Threads:":
			stats.Threads = value
		}
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stats, false
	}
	// The command name may hold spaces; fields count from after its ')'.
	text := string(stat)
	fields := strings.Fields(text[strings.LastIndexByte(text, ')')+2:])
	if len(fields) > 12 {
		user, _ := strconv.ParseFloat(fields[11], 64)
		system, _ := strconv.ParseFloat(fields[12], 64)
		stats.CPUSeconds = (user + system) / clockTicksPerSecond
	}
	return stats, true
}

// Sampler records one process until Stop.
type Sampler struct {
	pid     int
	origin  time.Time
	mu      sync.Mutex
	samples []ProcSample
	peak    float64
	stop    chan struct{}
	done    chan struct{}
}

func StartSampler(pid int, origin time.Time, period time.Duration) *Sampler {
	s := &Sampler{pid: pid, origin: origin, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-ticker.C:
			}
		}
	}()
	return s
}

func (s *Sampler) sample() {
	stats, ok := readProc(s.pid)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, ProcSample{time.Since(s.origin).Seconds(), stats.RSSMiB, stats.CPUSeconds})
	if stats.PeakMiB > s.peak {
		s.peak = stats.PeakMiB
	}
}

// Now takes a sample at once and returns it.
func (s *Sampler) Now() ProcSample {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return ProcSample{}
	}
	return s.samples[len(s.samples)-1]
}

func (s *Sampler) Stop() ([]ProcSample, float64) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.peak
}

// Peak is the highest VmHWM seen so far.
func (s *Sampler) Peak() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// Between returns the samples within [from, to] seconds.
func (s *Sampler) Between(from, to float64) []ProcSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ProcSample
	for _, sample := range s.samples {
		if sample.At >= from && sample.At <= to {
			out = append(out, sample)
		}
	}
	return out
}
