package main

// Failover under load (docs/reliability.md): two replicas with leader
// election place N workloads; part-way through, the leader is killed with
// SIGKILL (kill-leader) or the API server is restarted (restart-apiserver).
// Figures: how long until a replica leads again and places again, and,
// from the API server's audit log, every Deployment patch: none accepted
// twice for the same decision, none missed.

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

type FailoverSettings struct {
	Settings
	Size      int
	Rate      float64
	KillAt    float64 // fraction of workloads placed when the fault comes
	Scenarios []string
	Lease     time.Duration
	Renew     time.Duration
	Retry     time.Duration
}

type FailoverFigures struct {
	Scenario          string  `json:"scenario"`
	Workloads         int     `json:"workloads"`
	PlacedBeforeFault int     `json:"placedBeforeFault"`
	SecondsToLead     float64 `json:"secondsFromFaultToLeading"` // a replica reports leading again
	SecondsToResume   float64 `json:"secondsFromFaultToNextPlacement"`
	Bound             float64 `json:"boundSeconds"` // lease duration + 2 retry periods (kill-leader)
	SecondsToPlaceAll float64 `json:"secondsToPlaceAll"`
	Placed            int     `json:"placed"`
	PlacedCorrectly   int     `json:"placedOnTheExpectedType"`
	// From each Deployment's generation, the server's own count of pod
	// template changes (1 at creation, 2 once placed): the audit log's
	// answer codes miss a patch applied after its client was killed.
	Missed          int `json:"missed"`          // generation 1: never placed
	PatchedTwice    int `json:"patchedTwice"`    // generation above 2: placed more than once
	AcceptedPatches int `json:"acceptedPatches"` // 200 answers to Deployment patches in the audit log
	// Patches the audit log shows without a 200 (the client gone: 504) that
	// the Deployment shows applied.
	UnansweredPatches int            `json:"patchesAppliedWithoutAnswer"`
	RefusedPatches    int            `json:"conflictPatches"` // 409 answers (stale cache, resolved)
	PatchesByReplica  map[string]int `json:"acceptedPatchesByReplica"`
	LeaderExits       int            `json:"replicaExits"` // replicas that exited (the killed one counts)
	ServerDown        float64        `json:"apiServerRestartSeconds,omitempty"`
	// Events are best effort: one not written while the server is away is
	// not sent again (a POST whose answer was lost may have been acted on).
	PlacedEvents     int `json:"placedEvents"`
	EventsMissing    int `json:"workloadsWithoutPlacedEvent"`
	EventsDuplicated int `json:"workloadsWithPlacedEventTwice"`
}

func parseFailover(args []string) (FailoverSettings, error) {
	flags := flag.NewFlagSet("failover", flag.ExitOnError)
	var s FailoverSettings
	var scenarios string
	flags.StringVar(&s.Repo, "repo", ".", "the repository (for scripts/ and crds/)")
	flags.StringVar(&s.Operator, "operator", "build/bin/gpu-placement", "the operator binary")
	flags.IntVar(&s.Size, "size", 1000, "GpuWorkloads to place")
	flags.Float64Var(&s.Rate, "rate", 50, "GpuWorkload creations per second")
	flags.Float64Var(&s.KillAt, "fault-at", 0.4, "fraction of workloads placed when the fault comes")
	flags.StringVar(&scenarios, "scenarios", "kill-leader,restart-apiserver", "what to break")
	flags.DurationVar(&s.Lease, "lease-duration", 15*time.Second, "the replicas' --lease-duration")
	flags.DurationVar(&s.Renew, "renew-deadline", 10*time.Second, "the replicas' --renew-deadline")
	flags.DurationVar(&s.Retry, "retry-period", 2*time.Second, "the replicas' --retry-period")
	flags.StringVar(&s.Work, "work", filepath.Join(os.TempDir(), "gpu-placement-failover"), "scratch directory")
	flags.StringVar(&s.Out, "out", "build/bench-results", "where the JSON goes")
	flags.Parse(args)
	s.Scenarios = strings.Split(scenarios, ",")
	for _, scenario := range s.Scenarios {
		if scenario != "kill-leader" && scenario != "restart-apiserver" {
			return s, fmt.Errorf("--scenarios: %q is neither kill-leader nor restart-apiserver", scenario)
		}
	}
	if s.Size < 10 || s.KillAt <= 0 || s.KillAt >= 1 {
		return s, fmt.Errorf("--size must be at least 10 and --fault-at within (0, 1)")
	}
	return s, nil
}

func runFailover(args []string) error {
	settings, err := parseFailover(args)
	if err != nil {
		return err
	}
	for _, path := range []*string{&settings.Repo, &settings.Operator, &settings.Out} {
		if *path, err = filepath.Abs(*path); err != nil {
			return err
		}
	}
	var results []FailoverFigures
	for _, scenario := range settings.Scenarios {
		logf("failover: %s with %d workloads", scenario, settings.Size)
		figures, err := failover(settings, scenario)
		if err != nil {
			return fmt.Errorf("%s: %v", scenario, err)
		}
		printFailover(figures)
		results = append(results, figures)
	}
	if err := os.MkdirAll(settings.Out, 0o755); err != nil {
		return err
	}
	file := filepath.Join(settings.Out, "failover-"+time.Now().UTC().Format("20060102-150405")+".json")
	data, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return err
	}
	logf("wrote %s", file)
	for _, figures := range results {
		if figures.Bound > 0 && figures.SecondsToLead > figures.Bound+1 {
			return fmt.Errorf("%s: leading again after %.1f s, above the bound of %.0f s (and a second of polling)",
				figures.Scenario, figures.SecondsToLead, figures.Bound)
		}
		if figures.Missed != 0 || figures.PatchedTwice != 0 || figures.PlacedCorrectly != figures.Workloads {
			return fmt.Errorf("%s: %d missed, %d patched twice, %d of %d on the expected type",
				figures.Scenario, figures.Missed, figures.PatchedTwice, figures.PlacedCorrectly, figures.Workloads)
		}
	}
	return nil
}

func printFailover(f FailoverFigures) {
	fmt.Printf("%s, %d workloads, fault after %d placed: leading again after %.2f s (bound %.0f s), "+
		"placing again after %.2f s; all placed in %.1f s; %d on the expected type; "+
		"%d accepted Deployment patches (%v), %d applied without an answer, %d conflicts; missed %d, patched twice %d; "+
		"API server restart %.1f s, replicas exited %d; Placed Events %d (missing %d, twice %d)\n",
		f.Scenario, f.Workloads, f.PlacedBeforeFault, f.SecondsToLead, f.Bound, f.SecondsToResume,
		f.SecondsToPlaceAll, f.PlacedCorrectly, f.AcceptedPatches, f.PatchesByReplica, f.UnansweredPatches, f.RefusedPatches,
		f.Missed, f.PatchedTwice, f.ServerDown, f.LeaderExits, f.PlacedEvents, f.EventsMissing, f.EventsDuplicated)
}

// leaderOf answers which replica reports leading (-1: none).
func leaderOf(replicas []*Reactor) int {
	for i, replica := range replicas {
		select {
		case <-replica.exited:
			continue
		default:
		}
		if leading, err := replica.metric("leader_election_master_status"); err == nil && leading == 1 {
			return i
		}
	}
	return -1
}

func startReplicas(settings FailoverSettings, kubeconfig, dir string) ([]*Reactor, error) {
	var replicas []*Reactor
	for i := 0; i < 2; i++ {
		replica, err := startOperator(settings.Settings, kubeconfig, filepath.Join(dir, fmt.Sprintf("replica-%d.log", i)),
			"--leader-elect", "--leader-election-namespace", "gpu-placement-system",
			"--lease-duration", settings.Lease.String(), "--renew-deadline", settings.Renew.String(),
			"--retry-period", settings.Retry.String(), "--qps", "200", "--burst", "400")
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, replica)
		if _, err := replica.waitReady(2 * time.Minute); err != nil {
			return nil, err
		}
	}
	return replicas, nil
}

func failover(settings FailoverSettings, scenario string) (FailoverFigures, error) {
	figures := FailoverFigures{Scenario: scenario, Workloads: settings.Size, PatchesByReplica: map[string]int{}}
	dir := filepath.Join(settings.Work, scenario)
	os.RemoveAll(dir)
	plane, err := startControlPlane(settings.Repo, dir, true, "", false)
	if err != nil {
		return figures, err
	}
	defer plane.Stop()
	if err := plane.Install(); err != nil {
		return figures, err
	}
	policy := policyManifest(nil)
	if err := plane.client.Create(policiesPath, policy); err != nil {
		return figures, err
	}
	expected := map[int]string{}
	for kind := 0; kind < 2; kind++ {
		if expected[kind], err = expectedInstanceType(settings.Operator, dir, kind, policy); err != nil {
			return figures, err
		}
	}
	if err := createAll(plane.client, deploymentsPath, settings.Size, func(i int) map[string]any {
		return deploymentManifest(deploymentName(i))
	}); err != nil {
		return figures, err
	}
	kubeconfig, err := plane.OperatorKubeconfig()
	if err != nil {
		return figures, err
	}
	replicas, err := startReplicas(settings, kubeconfig, dir)
	defer func() {
		for _, replica := range replicas {
			select {
			case <-replica.exited:
			default:
				replica.stop()
			}
		}
	}()
	if err != nil {
		return figures, err
	}
	deadline := time.Now().Add(time.Minute)
	for leaderOf(replicas) < 0 {
		if time.Now().After(deadline) {
			return figures, fmt.Errorf("no replica leads after a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	watch, err := watchDeployments(plane.client)
	if err != nil {
		return figures, err
	}
	defer watch.Stop()

	start := time.Now()
	created := make(chan error, 1)
	go func() {
		_, err := createAtRate(plane.client, settings.Size, settings.Rate, workloadManifest, nil)
		created <- err
	}()
	placed := func(state map[string]deploymentState) int {
		n := 0
		for i := 0; i < settings.Size; i++ {
			if !state[deploymentName(i)].placedAt.IsZero() {
				n++
			}
		}
		return n
	}
	threshold := int(float64(settings.Size) * settings.KillAt)
	if err := watch.WaitFor(5*time.Minute, func(state map[string]deploymentState) bool {
		return placed(state) >= threshold
	}); err != nil {
		return figures, err
	}
	figures.PlacedBeforeFault = placed(watch.Snapshot())
	faultAt := time.Now()
	switch scenario {
	case "kill-leader":
		leader := leaderOf(replicas)
		if leader < 0 {
			return figures, fmt.Errorf("no leader at the time of the fault")
		}
		replicas[leader].command.Process.Signal(syscall.SIGKILL)
		<-replicas[leader].exited
		// The standby times the lease from when it saw the last renewal,
		// which it reads once a retry period: up to one period late, then
		// it tries once a period (client-go's bound, too).
		figures.Bound = (settings.Lease + 2*settings.Retry).Seconds()
	case "restart-apiserver":
		restart := exec.Command(filepath.Join(settings.Repo, "scripts", "controlplane"), "restart-apiserver", dir)
		if output, err := restart.CombinedOutput(); err != nil {
			return figures, fmt.Errorf("restarting the API server: %v\n%s", err, output)
		}
		figures.ServerDown = round(time.Since(faultAt).Seconds(), 2)
		// Placing again counts from when the server answers again.
		faultAt = time.Now()
		// The watch of the harness broke with the server: a new one.
		watch.Stop()
		if watch, err = watchDeployments(plane.client); err != nil {
			return figures, err
		}
	}
	for leaderOf(replicas) < 0 {
		if time.Since(faultAt) > 2*time.Minute {
			return figures, fmt.Errorf("no replica leads two minutes after the fault")
		}
		time.Sleep(20 * time.Millisecond)
	}
	figures.SecondsToLead = round(time.Since(faultAt).Seconds(), 2)
	if err := <-created; err != nil {
		return figures, fmt.Errorf("creating GpuWorkloads: %v", err)
	}
	if err := watch.WaitFor(5*time.Minute, func(state map[string]deploymentState) bool {
		return placed(state) == settings.Size
	}); err != nil {
		return figures, err
	}
	last := time.Time{}
	for _, s := range watch.Snapshot() {
		if s.placedAt.After(last) {
			last = s.placedAt
		}
	}
	figures.SecondsToPlaceAll = round(last.Sub(start).Seconds(), 2)
	for _, replica := range replicas {
		if leaderOf([]*Reactor{replica}) == 0 {
			if _, err := replica.settle(2 * time.Minute); err != nil {
				return figures, err
			}
		}
	}
	return figures, judgeFailover(&figures, plane, replicas, expected, settings.Size, faultAt)
}

// judgeFailover reads the server's view: where every Deployment is placed,
// and every patch of one in the audit log.
func judgeFailover(figures *FailoverFigures, plane *ControlPlane, replicas []*Reactor, expected map[int]string,
	size int, faultAt time.Time) error {
	items, _, err := plane.client.ListAll(deploymentsPath)
	if err != nil {
		return err
	}
	index := map[string]int{}
	for i := 0; i < size; i++ {
		index[deploymentName(i)] = i
	}
	for _, item := range items {
		i, ok := index[item.Metadata.Name]
		if !ok {
			continue
		}
		if selected := selectedInstanceType(item.Spec); selected != "" {
			figures.Placed++
			if selected == expected[i%2] {
				figures.PlacedCorrectly++
			}
		}
		switch generation := item.Metadata.Generation; {
		case generation <= 1:
			figures.Missed++
		case generation > 2:
			figures.PatchedTwice++
		}
	}
	requests, err := plane.Audit()
	if err != nil {
		return err
	}
	accepted := map[string]int{}
	unanswered := map[string]bool{}
	agents := map[string]string{}
	for _, r := range requests {
		if r.User != operatorUser || r.Verb != "patch" || r.Resource != "deployments" {
			continue
		}
		switch r.Code {
		case 200:
			// The first placement after the fault: placing again.
			if r.Received.After(faultAt) && (figures.SecondsToResume == 0 ||
				r.Received.Sub(faultAt).Seconds() < figures.SecondsToResume) {
				figures.SecondsToResume = round(r.Received.Sub(faultAt).Seconds(), 2)
			}
			accepted[r.Name]++
			figures.AcceptedPatches++
			if _, ok := agents[r.UserAgent]; !ok {
				agents[r.UserAgent] = fmt.Sprintf("replica-%d", len(agents)+1)
			}
			figures.PatchesByReplica[agents[r.UserAgent]]++
		case 409:
			figures.RefusedPatches++
		default:
			unanswered[r.Name] = true
		}
	}
	for name := range unanswered {
		if accepted[name] == 0 {
			figures.UnansweredPatches++
		}
	}
	for _, replica := range replicas {
		select {
		case <-replica.exited:
			figures.LeaderExits++
		default:
		}
	}
	if err := countPlacedEvents(figures, plane, index); err != nil {
		return err
	}
	names := make([]string, 0, len(agents))
	for agent := range agents {
		names = append(names, agent)
	}
	sort.Strings(names)
	logf("patchers (user agents): %s", strings.Join(names, "; "))
	return nil
}

// countPlacedEvents reads the bench namespace's Events: one Placed Event
// per workload is what the operator means to write.
func countPlacedEvents(figures *FailoverFigures, plane *ControlPlane, workloads map[string]int) error {
	perWorkload := map[string]int{}
	next := ""
	for {
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []struct {
				Reason         string `json:"reason"`
				InvolvedObject struct {
					Name string `json:"name"`
				} `json:"involvedObject"`
			} `json:"items"`
		}
		query := "?limit=500"
		if next != "" {
			query += "&continue=" + url.QueryEscape(next)
		}
		if err := plane.client.Do("GET", "/api/v1/namespaces/"+benchNamespace+"/events"+query, "", nil, &page); err != nil {
			return err
		}
		for _, event := range page.Items {
			if event.Reason == "Placed" {
				perWorkload[event.InvolvedObject.Name]++
				figures.PlacedEvents++
			}
		}
		if next = page.Metadata.Continue; next == "" {
			break
		}
	}
	for name := range workloads {
		switch n := perWorkload[name]; {
		case n == 0:
			figures.EventsMissing++
		case n > 1:
			figures.EventsDuplicated++
		}
	}
	return nil
}
