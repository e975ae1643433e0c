package main

import (
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func printRun(r RunResult) {
	p := r.Placement
	fmt.Printf("%s, %d workloads at %.0f/s: latency p50 %.1f ms, p90 %.1f, p99 %.1f, max %.1f; all placed in %.2f s (%.1f/s); "+
		"%.2f requests per placement; CPU %.1f s (control plane %.1f s); peak RSS %.1f MiB, idle RSS %.1f MiB, idle CPU %.3f%%\n",
		r.Reactor, r.Size, p.Rate, p.LatencyMs.P50, p.LatencyMs.P90, p.LatencyMs.P99, p.LatencyMs.Max,
		p.SecondsToPlaceAll, p.PlacementsPerSec, p.RequestsPerPlaced, p.CPUSeconds, p.ServerCPUSeconds, r.PeakRSSMiB, r.Idle.RSSMiB, r.Idle.CPUPercent)
	fmt.Printf("  per placement: kube-apiserver CPU %.2f ms (with etcd %.2f ms), the reactor's CPU %.2f ms; requests: %s; "+
		"quiet (statuses written) %.1f s after the last placement\n",
		p.APIServerMsPerPlaced, p.ServerCPUMsPerPlaced, p.ReactorCPUMsPerPlaced, describeCounts(p.Requests), p.SecondsToQuiet)
	if r.Cluster != nil {
		printCluster(r.Cluster)
	}
	if r.Replacement != nil {
		x := r.Replacement
		fmt.Printf("  re-placement: %d/%d moved (%d to the expected type) in %.2f s; %d requests (%s); others touched %d of %d\n",
			x.Moved, x.ShouldMove, x.MovedCorrectly, x.SecondsToMove, x.Requests.Total, describeCounts(x.Requests),
			x.OthersTouched, x.OthersChecked)
	}
	if r.Restart != nil {
		x := r.Restart
		fmt.Printf("  restart: synced in %.3f s (the server alone: %.3f s streaming, %.3f s paged), all reconciled in %.2f s (%.0f reconciles, requests: %s); peak RSS %.1f MiB\n",
			x.SecondsToSynced, x.RawStreamSeconds, x.RawListSeconds, x.SecondsToSettled, x.Reconciles, describeCounts(x.Requests), x.PeakRSSMiB)
		fmt.Printf("  resyncs: %.0f no-op reconciles in %.0f s, requests: %s; CPU %.2f%% (%.1f us per reconcile); RSS %.1f MiB\n",
			x.ResyncReconciles, x.ResyncSeconds, describeCounts(x.ResyncRequests), x.ResyncCPUPercent,
			x.MicrosPerNoopCPU, x.SteadyRSSMiB)
	}
}

func printCluster(c *RunningFigures) {
	fmt.Printf("  cluster (%s): first pods Running %d in %.1f s; placements %v\n", c.Pools, c.FirstPodsRunning,
		c.FirstPodsSeconds, c.Placements)
	if c.Running > 0 {
		fmt.Printf("  creation to pods Running: p50 %.1f ms, p90 %.1f, p99 %.1f, max %.1f; %d Running within %.0f s, the last %.2f s after the first creation\n",
			c.LatencyMs.P50, c.LatencyMs.P90, c.LatencyMs.P99, c.LatencyMs.Max, c.Running, c.BoundSeconds,
			c.SecondsToAllRunning)
	}
	fmt.Printf("  not Running within the bound: %d (waiting ended: %s)\n", c.NotRunning, c.EndedBy)
	for _, line := range describeReasons(c.WhyNotRunning) {
		fmt.Printf("    %s\n", line)
	}
	fmt.Printf("  the cluster's processes' CPU over the window (not in kube-apiserver's): %v s\n", c.ClusterCPUSeconds)
	if c.Karpenter != nil {
		printLaunches(c.Karpenter)
	}
}

func describeCounts(c RequestCounts) string {
	if c.Total == 0 {
		return "none"
	}
	var parts []string
	for _, key := range c.keys() {
		parts = append(parts, fmt.Sprintf("%d %s", c.ByVerb[key], key))
	}
	return strings.Join(parts, ", ")
}

func printSummary(report Report) {
	fmt.Println()
	fmt.Printf("decision engine: %s decisions/s, p50 %s us, p99 %s us\n", report.Decisions["decisionsPerSecond"],
		report.Decisions["p50Micros"], report.Decisions["p99Micros"])
	for _, ratio := range report.Ratios {
		fmt.Printf("%s / floor at %d workloads: p50 %.2fx, p99 %.2fx, time to place all %.2fx, throughput %.2fx\n",
			ratio.Reactor, ratio.Size, ratio.P50, ratio.P99, ratio.TimeToPlace, ratio.Throughput)
		if ratio.RunningP50 > 0 {
			fmt.Printf("  creation to pods Running: p50 %.2fx, p99 %.2fx\n", ratio.RunningP50, ratio.RunningP99)
		}
	}
}

func replot(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := strings.TrimSuffix(path, ".json") + ".png"
	if strings.HasPrefix(filepath.Base(path), "eks-") { // EKS mode's figures
		var report EKSReport
		if err := json.Unmarshal(data, &report); err != nil {
			return err
		}
		return plotSoak(report, out)
	}
	var report Report
	if err := json.Unmarshal(data, &report); err != nil {
		return err
	}
	return drawPlot(report, out)
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff},
}

// plot draws two panels: the placement latency distributions (one colour
// per reactor, one dash pattern per size; in cluster mode a thin line of
// the same style for creation to pods Running) and each reactor's resident
// memory over its run (placement, idle, and for the operator re-placement,
// then its restart in a thinner line).
func drawPlot(report Report, path string) error {
	latency := plot.New()
	latency.Title.Text = "Placement latency (creation to Deployment patch seen on a watch; thin: to pods Running)"
	latency.X.Label.Text = "latency (ms, log scale)"
	latency.Y.Label.Text = "fraction of workloads placed"
	latency.X.Scale = plot.LogScale{}
	latency.X.Tick.Marker = plot.LogTicks{Prec: -1}
	latency.Legend.Top = false
	latency.Legend.Left = false
	latency.Add(plotter.NewGrid())

	memory := plot.New()
	memory.Title.Text = "Resident memory (the operator: first process, then the restarted one, thinner)"
	memory.X.Label.Text = "seconds since the reactor started"
	memory.Y.Label.Text = "RSS (MiB)"
	memory.Add(plotter.NewGrid())

	sizes := map[int]int{}
	for _, run := range report.Runs {
		if _, ok := sizes[run.Size]; !ok {
			sizes[run.Size] = len(sizes)
		}
	}
	reactorColour := map[string]color.Color{"operator": palette[0], "floor": palette[1], "controller-runtime": palette[2]}
	dashes := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)},
		{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}
	for _, run := range report.Runs {
		colour, ok := reactorColour[run.Reactor]
		if !ok {
			colour = palette[3]
		}
		dash := dashes[sizes[run.Size]%len(dashes)]
		sorted := append([]float64(nil), run.LatenciesMs...)
		sort.Float64s(sorted)
		points := make(plotter.XYs, 0, len(sorted))
		for i, v := range sorted {
			points = append(points, plotter.XY{X: maxFloat(v, 0.1), Y: float64(i+1) / float64(len(sorted))})
		}
		line, err := plotter.NewLine(points)
		if err != nil {
			return err
		}
		line.Color = colour
		line.Width = vg.Points(1.5)
		line.Dashes = dash
		latency.Add(line)
		latency.Legend.Add(fmt.Sprintf("%s, %d", run.Reactor, run.Size), line)
		if run.Cluster != nil {
			if err := addRunningLine(latency, run, colour, dash); err != nil {
				return err
			}
		}

		for part, samples := range [][]ProcSample{run.Samples, run.SamplesOfRestart} {
			if len(samples) == 0 {
				continue
			}
			xy := make(plotter.XYs, 0, len(samples))
			for _, s := range samples {
				if s.RSSMiB > 0 { // a process between fork and exec has no VmRSS yet
					xy = append(xy, plotter.XY{X: s.At, Y: s.RSSMiB})
				}
			}
			rss, err := plotter.NewLine(xy)
			if err != nil {
				return err
			}
			rss.Color = colour
			rss.Width = vg.Points(1.5)
			rss.Dashes = dash
			if part == 1 {
				rss.Width = vg.Points(0.75)
			}
			memory.Add(rss)
			if part == 0 {
				memory.Legend.Add(fmt.Sprintf("%s, %d", run.Reactor, run.Size), rss)
			}
		}
	}
	memory.Y.Min = 0
	memory.Legend.Top = true
	memory.Legend.Left = true

	return writePanels(path, 10*vg.Inch, latency, memory)
}

// writePanels draws the panels one above the other, aligned, into a PNG
// 10 inches wide.
func writePanels(path string, height vg.Length, panels ...*plot.Plot) error {
	canvas := vgimg.PngCanvas{Canvas: vgimg.New(10*vg.Inch, height)}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	rows := make([][]*plot.Plot, len(panels))
	for i, panel := range panels {
		rows[i] = []*plot.Plot{panel}
	}
	canvases := plot.Align(rows, tiles, draw.New(canvas))
	for i, panel := range panels {
		panel.Draw(canvases[i][0])
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer file.Close()
	_, err = canvas.WriteTo(file)
	return err
}

// addRunningLine: cluster mode's creation-to-Running distribution, thin,
// as a fraction of all the run's workloads, so that those never Running
// show as a curve that stops short of 1.
func addRunningLine(latency *plot.Plot, run RunResult, colour color.Color, dash []vg.Length) error {
	sorted := append([]float64(nil), run.RunningLatenciesMs...)
	sort.Float64s(sorted)
	points := make(plotter.XYs, 0, len(sorted))
	for i, v := range sorted {
		points = append(points, plotter.XY{X: maxFloat(v, 0.1), Y: float64(i+1) / float64(run.Size)})
	}
	if len(points) == 0 {
		return nil
	}
	line, err := plotter.NewLine(points)
	if err != nil {
		return err
	}
	line.Color = colour
	line.Width = vg.Points(0.75)
	line.Dashes = dash
	latency.Add(line)
	latency.Legend.Add(fmt.Sprintf("%s, %d: pods Running", run.Reactor, run.Size), line)
	return nil
}

func maxFloat(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}
