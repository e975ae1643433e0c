package main

// EKS mode's readings of the operator's histograms and its soak plot.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Histogram: a Prometheus histogram's cumulative buckets (upper bound ->
// count), count and sum.
type Histogram struct {
	buckets    map[float64]float64
	count, sum float64
}

// readHistograms: the series of the family whose lines hold each of
// `labels`, from one reading of /metrics. A labelled series is there once
// observed: none yet reads as zero.
func readHistograms(r *Reactor, family string, labels ...string) ([]Histogram, error) {
	lines, err := r.metricLines()
	if err != nil {
		return nil, err
	}
	histograms := make([]Histogram, len(labels))
	for i, label := range labels {
		if histograms[i], err = histogramOf(lines, family, label); err != nil {
			return nil, err
		}
	}
	return histograms, nil
}

// histogramOf: the series of the family whose lines hold `labels` (all of
// them when empty).
func histogramOf(lines []string, family, labels string) (Histogram, error) {
	h := Histogram{buckets: map[float64]float64{}}
	found := false
	for _, line := range lines {
		if !strings.Contains(line, labels) {
			continue // another series of the family
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		value, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, family+"_bucket{"):
			_, rest, _ := strings.Cut(line, `le="`)
			bound, _, _ := strings.Cut(rest, `"`)
			upper := math.Inf(1)
			if bound != "+Inf" {
				if upper, err = strconv.ParseFloat(bound, 64); err != nil {
					return h, fmt.Errorf("/metrics: %q: %v", line, err)
				}
			}
			h.buckets[upper] = value
			found = true
		case strings.HasPrefix(line, family+"_count"):
			h.count = value
		case strings.HasPrefix(line, family+"_sum"):
			h.sum = value
		}
	}
	if !found && labels == "" {
		return h, fmt.Errorf("/metrics has no %s", family)
	}
	return h, nil
}

// minus: what was observed between two readings.
func (h Histogram) minus(before Histogram) Histogram {
	out := Histogram{buckets: map[float64]float64{}, count: h.count - before.count, sum: h.sum - before.sum}
	for bound, count := range h.buckets {
		out.buckets[bound] = count - before.buckets[bound]
	}
	return out
}

// quantileMs: the upper bound, in ms, of the bucket the quantile falls in
// (NaN without observations; +Inf past the last finite bucket).
func (h Histogram) quantileMs(q float64) float64 {
	if h.count <= 0 {
		return math.NaN()
	}
	bounds := make([]float64, 0, len(h.buckets))
	for bound := range h.buckets {
		bounds = append(bounds, bound)
	}
	sort.Float64s(bounds)
	for _, bound := range bounds {
		if h.buckets[bound] >= q*h.count {
			return round(bound*1000, 3)
		}
	}
	return math.Inf(1)
}

// plotSoak draws the operator's resident memory and heap over the churn,
// Karpenter's resident memory, and what the operator caches.
func plotSoak(report EKSReport, path string) error {
	if len(report.Soak) < 2 {
		return nil
	}
	panel := func(title, yLabel string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "minutes since churn began"
		p.Y.Label.Text = yLabel
		p.Add(plotter.NewGrid())
		return p
	}
	// The operator on its own panel: beside Karpenter's gigabytes its
	// curve would be a flat line at the bottom.
	// Computed here as well as in the run, so that a replot of an older
	// file (without the heap held's fit) says it too.
	residentSlope, _ := memorySlope(report.Soak)
	heldSlope, _ := slopeOf(report.Soak, heapHeld)
	operator := panel(fmt.Sprintf("The operator under churn (%d nodes, %d pods, %d GpuWorkloads): "+
		"slope %.2f MiB/h resident, %.2f MiB/h held by malloc", report.Nodes, report.BoundPods,
		report.Settings.Workloads+report.Settings.Arrivals, residentSlope, heldSlope), "MiB")
	karpenter := panel("Karpenter on the same cluster", "MiB")
	caches := panel("The operator's caches", "objects")
	series := []struct {
		panel  *plot.Plot
		name   string
		colour int
		value  func(SoakSample) float64
	}{
		{operator, "operator RSS", 0, func(s SoakSample) float64 { return s.OperatorMiB }},
		{operator, "held by malloc (in use, free, mapped)", 3, heapHeld},
		{operator, "operator heap in use", 2, func(s SoakSample) float64 { return s.HeapInUseMiB }},
		{karpenter, "Karpenter RSS", 1, func(s SoakSample) float64 { return s.KarpenterMiB }},
		{caches, "pods", 0, func(s SoakSample) float64 { return s.Pods }},
		{caches, "GpuWorkloads", 1, func(s SoakSample) float64 { return s.Workloads }},
	}
	for _, line := range series {
		points := make(plotter.XYs, 0, len(report.Soak))
		for _, sample := range report.Soak {
			if v := line.value(sample); v > 0 {
				points = append(points, plotter.XY{X: sample.Minute, Y: v})
			}
		}
		if len(points) == 0 {
			continue
		}
		drawn, err := plotter.NewLine(points)
		if err != nil {
			return err
		}
		drawn.Color = palette[line.colour]
		drawn.Width = vg.Points(1.5)
		line.panel.Add(drawn)
		line.panel.Legend.Add(line.name, drawn)
	}
	for _, p := range []*plot.Plot{operator, karpenter, caches} {
		p.Y.Min = 0
		p.Legend.Top = false
	}
	return writePanels(path, 11*vg.Inch, operator, karpenter, caches)
}
