package main

// bench-scale writecost: what each kind of write the operator makes costs
// the API server. For each kind, on a fresh control plane: create what the
// writes need (Deployments, GpuWorkloads), open one watch on the written
// collection (a reactor's informer: each write is sent to it), measure the
// server's idle CPU for a few seconds, then issue N writes of that kind with
// a few connections in parallel, as the operator's service account (so
// authentication, authorization and the audit log cost what they cost in a
// run), and divide kube-apiserver's and etcd's CPU seconds (/proc/PID/stat),
// less their idle rate over the same time, by N.
//
// The status the operator writes is taken from the operator itself: a
// first control plane runs it on one workload of each of the two kinds the
// benchmark creates, and the statuses it wrote are the ones written N times
// (so this follows the operator when its status changes). Two writes
// controller-runtime makes instead are measured next to them: the finalizer
// added with an Update (PUT of the whole object) and a small status PUT.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

type WriteKind struct {
	Name    string `json:"kind"`
	Who     string `json:"writtenBy"`
	What    string `json:"what"`
	Request string `json:"request"`
}

var writeKinds = []WriteKind{
	{"deployment-patch", "operator, controller-runtime, floor", "the placement: node selector, toleration, nvidia.com/gpu",
		"PATCH deployments (strategic merge)"},
	{"finalizer-patch", "operator", "the finalizer, with the resourceVersion read", "PATCH gpuworkloads (merge)"},
	{"status-jsonpatch", "operator", "the status the operator writes (taken from it)", "PATCH gpuworkloads/status (JSON patch: test the uid, add /status)"},
	{"status-jsonpatch-granular", "operator", "the same status, its CRD's status objects granular (as before 2026-11-27)",
		"PATCH gpuworkloads/status (JSON patch: test the uid, add /status)"},
	{"status-jsonpatch-conditions", "operator (a measure, not a write it makes)", "the same status with its conditions only (what its size costs)",
		"PATCH gpuworkloads/status (JSON patch: test the uid, add /status)"},
	{"event-create", "operator, controller-runtime", "one Placed Event", "POST events"},
	{"finalizer-update", "controller-runtime", "the finalizer, the whole object sent back", "PUT gpuworkloads"},
	{"status-update-small", "controller-runtime", "observedGeneration, placement, Placed and Applied", "PUT gpuworkloads/status"},
}

type WriteCost struct {
	WriteKind
	Writes           int     `json:"writes"`
	Failed           int     `json:"failed"`
	Seconds          float64 `json:"seconds"`
	APIServerCPUMs   float64 `json:"apiServerCpuMsPerWrite"`
	EtcdCPUMs        float64 `json:"etcdCpuMsPerWrite"`
	IdleAPIServerPct float64 `json:"idleApiServerCpuPercent"`
	RequestBytes     float64 `json:"requestBytes"` // mean body sent
	ObjectBytes      float64 `json:"objectBytes"`  // mean object returned, as stored
	ObjectBytesNoMF  float64 `json:"objectBytesWithoutManagedFields"`
	StatusBytes      float64 `json:"statusBytes,omitempty"` // the status alone, for GpuWorkloads
	// Fields the status's writer owns, as managedFields records them.
	OwnedStatusFields float64 `json:"ownedStatusFields,omitempty"`
	LatencyP50Ms      float64 `json:"latencyP50Ms"`
	LatencyP99Ms      float64 `json:"latencyP99Ms"`
	LoadBefore, After string  `json:"-"`
}

type WriteCostReport struct {
	Started    time.Time `json:"started"`
	Commit     string    `json:"commit"`
	Machine    Machine   `json:"machine"`
	Kubernetes string    `json:"kubernetes"`
	Writes     int       `json:"writesPerKind"`
	Workers    int       `json:"connections"`
	LoadBefore string    `json:"loadAverageBefore"`
	LoadAfter  string    `json:"loadAverageAfter"`
	// Extra kube-apiserver flags of the run (a feature gate tried).
	APIServerFlags string                     `json:"apiServerFlags,omitempty"`
	Statuses       map[string]json.RawMessage `json:"operatorStatuses"` // by workload kind, as captured
	Objects        map[string]int             `json:"operatorObjectBytes"`
	Costs          []WriteCost                `json:"costs"`
}

func runWriteCost(args []string) error {
	flags := flag.NewFlagSet("writecost", flag.ExitOnError)
	repo := flags.String("repo", ".", "the repository (for scripts/, crds/ and config/rbac)")
	operator := flags.String("operator", "build/bin/gpu-placement", "the operator binary (its status is what is written)")
	n := flags.Int("n", 1000, "writes per kind")
	workers := flags.Int("connections", 4, "writes in flight at once")
	kinds := flags.String("kinds", "", "comma-separated kinds (default: all)")
	work := flags.String("work", filepath.Join(os.TempDir(), "gpu-placement-writecost"), "scratch directory")
	out := flags.String("out", "build/bench-results", "where the JSON goes")
	profile := flags.Duration("profile", 0, "take a CPU profile of kube-apiserver this long once the writes start "+
		"(the server runs with --profiling; the profile and its top functions go next to the JSON)")
	serverFlags := flags.String("apiserver-flags", "", "extra kube-apiserver flags, space-separated "+
		"(--feature-gates=CBORServingAndStorage=true: custom resources stored and served in CBOR)")
	flags.Parse(args)
	if *serverFlags != "" {
		apiServerExtraFlags = append(apiServerExtraFlags, strings.Fields(*serverFlags)...)
	}
	if *profile > 0 {
		apiServerExtraFlags = append(apiServerExtraFlags, "--profiling=true")
	}
	for _, path := range []*string{repo, operator, out, work} {
		abs, err := filepath.Abs(*path)
		if err != nil {
			return err
		}
		*path = abs
	}
	selected := writeKinds
	if *kinds != "" {
		selected = nil
		for _, name := range strings.Split(*kinds, ",") {
			found := false
			for _, kind := range writeKinds {
				if kind.Name == strings.TrimSpace(name) {
					selected, found = append(selected, kind), true
				}
			}
			if !found {
				return fmt.Errorf("--kinds: no kind %q", name)
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	report := WriteCostReport{Started: time.Now().UTC(), Machine: describeMachine(), Writes: *n, Workers: *workers,
		APIServerFlags: *serverFlags,
		LoadBefore:     loadAverage()}
	report.Commit = gitCommit(*repo)

	logf("capturing the operator's status (a control plane with one workload of each kind)")
	statuses, objects, version, err := captureOperatorStatuses(*repo, *operator, filepath.Join(*work, "capture"))
	if err != nil {
		return fmt.Errorf("capturing the operator's status: %v", err)
	}
	report.Kubernetes, report.Statuses, report.Objects = version, statuses, objects
	for name, bytes := range objects {
		logf("the operator's %s: %d bytes", name, bytes)
	}

	stamp := report.Started.Format("20060102-150405")
	for _, kind := range selected {
		logf("%s: %d writes (%s)", kind.Name, *n, kind.Request)
		var profileTo string
		if *profile > 0 {
			profileTo = filepath.Join(*out, "writecost-"+stamp+"-"+kind.Name+".pprof")
		}
		cost, err := measureWriteKind(*repo, filepath.Join(*work, kind.Name), kind, *n, *workers, statuses,
			profileTo, *profile)
		if err != nil {
			return fmt.Errorf("%s: %v", kind.Name, err)
		}
		report.Costs = append(report.Costs, cost)
		logf("%s: kube-apiserver %.3f ms of CPU per write, etcd %.3f ms", kind.Name, cost.APIServerCPUMs, cost.EtcdCPUMs)
	}
	report.LoadAfter = loadAverage()
	printWriteCosts(report)
	path := filepath.Join(*out, "writecost-"+stamp+".json")
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	logf("wrote %s", path)
	return nil
}

func gitCommit(repo string) string {
	out, err := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return ""
	}
	return strings.Join(fields[:3], " ")
}

// captureOperatorStatuses runs the operator on workloads 0 and 1 (the two
// kinds) until their status has settled; returns each status, the sizes of
// the objects, and the server's version.
func captureOperatorStatuses(repo, operator, dir string) (map[string]json.RawMessage, map[string]int, string, error) {
	os.RemoveAll(dir)
	plane, err := startControlPlane(repo, dir, true, "", false)
	if err != nil {
		return nil, nil, "", err
	}
	defer plane.Stop()
	var version struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := plane.client.Do("GET", "/version", "", nil, &version); err != nil {
		return nil, nil, "", err
	}
	if err := plane.Install(); err != nil {
		return nil, nil, "", err
	}
	if err := plane.client.Create(policiesPath, policyManifest(nil)); err != nil {
		return nil, nil, "", err
	}
	kubeconfig, err := plane.OperatorKubeconfig()
	if err != nil {
		return nil, nil, "", err
	}
	reactor, err := startOperator(Settings{Operator: operator}, kubeconfig, filepath.Join(dir, "operator.log"))
	if err != nil {
		return nil, nil, "", err
	}
	defer reactor.stop()
	if _, err := reactor.waitReady(2 * time.Minute); err != nil {
		return nil, nil, "", err
	}
	for i := 0; i < 2; i++ {
		if err := plane.client.Create(deploymentsPath, deploymentManifest(deploymentName(i))); err != nil {
			return nil, nil, "", err
		}
		if err := plane.client.Create(workloadsPath, workloadManifest(i)); err != nil {
			return nil, nil, "", err
		}
	}
	// Settled: applied in status, and nothing written for two seconds.
	deadline := time.Now().Add(2 * time.Minute)
	versions := map[int]string{}
	stableSince := time.Now()
	var objects [2]json.RawMessage
	for {
		changed := false
		for i := 0; i < 2; i++ {
			var object json.RawMessage
			if err := plane.client.Do("GET", workloadsPath+"/"+deploymentName(i), "", nil, &object); err != nil {
				return nil, nil, "", err
			}
			var read Object
			json.Unmarshal(object, &read)
			var status struct {
				Applied json.RawMessage `json:"applied"`
			}
			json.Unmarshal(read.Status, &status)
			if len(status.Applied) == 0 || read.Metadata.ResourceVersion != versions[i] {
				changed = true
			}
			versions[i] = read.Metadata.ResourceVersion
			objects[i] = object
		}
		if changed {
			stableSince = time.Now()
		} else if time.Since(stableSince) > 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			return nil, nil, "", fmt.Errorf("the operator's status did not settle in 2 minutes (see %s/operator.log)", dir)
		}
		time.Sleep(200 * time.Millisecond)
	}
	statuses := map[string]json.RawMessage{}
	sizes := map[string]int{}
	for i, name := range []string{"inference 7B (kind A)", "fine-tuning 13B (kind B)"} {
		var read Object
		json.Unmarshal(objects[i], &read)
		statuses[name] = read.Status
		sizes["GpuWorkload, "+name] = len(objects[i])
		sizes["GpuWorkload without managedFields, "+name] = len(withoutManagedFields(objects[i]))
		sizes["status, "+name] = len(read.Status)
	}
	return statuses, sizes, version.GitVersion, nil
}

// withoutAtomicMaps: a CRD's text with its x-kubernetes-map-type: atomic
// markings left out, so that the server tracks those objects field by field.
func withoutAtomicMaps(crd string) string {
	var kept []string
	for _, line := range strings.Split(crd, "\n") {
		if strings.TrimSpace(line) != "x-kubernetes-map-type: atomic" {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// ownedStatusFields: how many fields the managedFields entry of the status
// subresource lists (each "f:" or "k:" key, at any depth).
func ownedStatusFields(object []byte) int {
	var read struct {
		Metadata struct {
			ManagedFields []struct {
				Subresource string         `json:"subresource"`
				FieldsV1    map[string]any `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	if json.Unmarshal(object, &read) != nil {
		return 0
	}
	var count func(map[string]any) int
	count = func(fields map[string]any) int {
		n := 0
		for key, value := range fields {
			if key == "." {
				continue
			}
			n++
			if child, ok := value.(map[string]any); ok {
				n += count(child)
			}
		}
		return n
	}
	total := 0
	for _, entry := range read.Metadata.ManagedFields {
		if entry.Subresource == "status" {
			total += count(entry.FieldsV1)
		}
	}
	return total
}

func withoutManagedFields(object []byte) []byte {
	var generic map[string]any
	if json.Unmarshal(object, &generic) != nil {
		return object
	}
	if metadata, ok := generic["metadata"].(map[string]any); ok {
		delete(metadata, "managedFields")
	}
	data, _ := json.Marshal(generic)
	return data
}

// A small status as the controller-runtime reactor writes it.
func smallStatus(generation int64) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	return map[string]any{"observedGeneration": generation,
		"placement": map[string]any{"tier": "NVIDIA", "instanceType": "g4dn.xlarge", "acceleratorCount": 1},
		"conditions": []map[string]any{
			{"type": "Placed", "status": "True", "reason": "FixedAnswer", "message": "placed on g4dn.xlarge",
				"observedGeneration": generation, "lastTransitionTime": now},
			{"type": "Applied", "status": "True", "reason": "Patched",
				"message": "the Deployment's pod template carries the placement", "observedGeneration": generation,
				"lastTransitionTime": now}}}
}

func measureWriteKind(repo, dir string, kind WriteKind, n, workers int,
	statuses map[string]json.RawMessage, profileTo string, profileFor time.Duration) (WriteCost, error) {
	cost := WriteCost{WriteKind: kind, Writes: n}
	os.RemoveAll(dir)
	plane, err := startControlPlane(repo, dir, true, "", false)
	if err != nil {
		return cost, err
	}
	defer plane.Stop()
	if err := plane.Install(); err != nil {
		return cost, err
	}
	if kind.Name == "status-jsonpatch-granular" {
		crd, err := os.ReadFile(filepath.Join(repo, "crds", "gpuplacement.io_gpuworkloads.yaml"))
		if err != nil {
			return cost, err
		}
		if _, err := plane.kubectl(withoutAtomicMaps(string(crd)), "apply", "-f", "-"); err != nil {
			return cost, err
		}
	}
	// The operator's writes go as the operator: its token, its RBAC, its
	// audit rule. Writes only the controller-runtime reactor makes (PUT,
	// which the operator's RBAC does not grant) go as the admin.
	writer := plane.client
	if strings.Contains(kind.Who, "operator") {
		kubeconfigPath, err := plane.OperatorKubeconfig()
		if err != nil {
			return cost, err
		}
		token, err := tokenOf(kubeconfigPath)
		if err != nil {
			return cost, err
		}
		if writer, err = NewClient(Credentials{Server: plane.creds.Server, CAFile: plane.creds.CAFile, Token: token}); err != nil {
			return cost, err
		}
	}

	// What the writes need, created by the admin, before the measurement.
	watched := ""
	switch {
	case kind.Name == "deployment-patch":
		watched = deploymentsPath
		err = createAll(plane.client, deploymentsPath, n, func(i int) map[string]any {
			return deploymentManifest(deploymentName(i))
		})
	case kind.Name != "event-create":
		watched = workloadsPath
		err = createAll(plane.client, workloadsPath, n, workloadManifest)
	}
	if err != nil {
		return cost, err
	}
	// Each write's body, and for PUTs the object to send back.
	var mu sync.Mutex
	current := map[int]map[string]any{}
	if kind.Name == "finalizer-update" || kind.Name == "status-update-small" || kind.Name == "finalizer-patch" ||
		strings.HasPrefix(kind.Name, "status-jsonpatch") {
		var list struct {
			Items []map[string]any `json:"items"`
		}
		if err := plane.client.Do("GET", workloadsPath, "", nil, &list); err != nil {
			return cost, err
		}
		index := map[string]int{}
		for i := 0; i < n; i++ {
			index[deploymentName(i)] = i
		}
		for _, object := range list.Items {
			object["apiVersion"], object["kind"] = "gpuplacement.io/v1alpha1", "GpuWorkload"
			if name, ok := object["metadata"].(map[string]any)["name"].(string); ok {
				current[index[name]] = object
			}
		}
		if len(current) != n {
			return cost, fmt.Errorf("listed %d GpuWorkloads, not %d", len(current), n)
		}
	}
	statusList := make([]json.RawMessage, 0, len(statuses))
	for _, name := range sortedKeys(statuses) {
		status := statuses[name]
		if kind.Name == "status-jsonpatch-conditions" {
			var whole map[string]json.RawMessage
			if err := json.Unmarshal(status, &whole); err != nil {
				return cost, fmt.Errorf("the operator's status: %v", err)
			}
			if status, err = json.Marshal(map[string]json.RawMessage{"conditions": whole["conditions"],
				"observedGeneration": whole["observedGeneration"]}); err != nil {
				return cost, err
			}
		}
		statusList = append(statusList, status)
	}
	operatorPatch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]string{"node.kubernetes.io/instance-type": "g4dn.xlarge"},
		"tolerations":  []map[string]string{{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}},
		"containers": []map[string]any{{"name": "server", "resources": map[string]any{
			"limits": map[string]string{"nvidia.com/gpu": "1"}, "requests": map[string]string{"nvidia.com/gpu": "1"}}}},
	}}}}
	request := func(i int) (method, path, contentType string, body any) {
		name := deploymentName(i)
		switch kind.Name {
		case "deployment-patch":
			return http.MethodPatch, deploymentsPath + "/" + name, StrategicPatch, operatorPatch
		case "finalizer-patch":
			mu.Lock()
			rv := current[i]["metadata"].(map[string]any)["resourceVersion"]
			mu.Unlock()
			return http.MethodPatch, workloadsPath + "/" + name, MergePatch,
				map[string]any{"metadata": map[string]any{"resourceVersion": rv,
					"finalizers": []string{"gpuplacement.io/finalizer"}}}
		case "status-jsonpatch", "status-jsonpatch-granular", "status-jsonpatch-conditions":
			// As the operator sends it: the uid tested, then the status.
			mu.Lock()
			uid := current[i]["metadata"].(map[string]any)["uid"]
			mu.Unlock()
			return http.MethodPatch, workloadsPath + "/" + name + "/status", "application/json-patch+json",
				[]map[string]any{{"op": "test", "path": "/metadata/uid", "value": uid},
					{"op": "add", "path": "/status", "value": statusList[i%len(statusList)]}}
		case "event-create":
			now := time.Now().UTC().Format(time.RFC3339)
			return http.MethodPost, "/api/v1/namespaces/" + benchNamespace + "/events", "application/json",
				map[string]any{"apiVersion": "v1", "kind": "Event",
					"metadata": map[string]any{"generateName": name + ".", "namespace": benchNamespace},
					"involvedObject": map[string]any{"apiVersion": "gpuplacement.io/v1alpha1", "kind": "GpuWorkload",
						"namespace": benchNamespace, "name": name, "uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i)},
					"reason": "Placed", "message": "g4dn.xlarge (NVIDIA T4 x1, on demand, $0.526/h): the cheapest that fits 7B fp16 inference",
					"type": "Normal", "source": map[string]any{"component": "gpu-placement-operator"},
					"reportingComponent": "gpuplacement.io/operator", "reportingInstance": "bench",
					"firstTimestamp": now, "lastTimestamp": now, "count": 1}
		case "finalizer-update":
			mu.Lock()
			object := current[i]
			mu.Unlock()
			object["metadata"].(map[string]any)["finalizers"] = []string{"gpuplacement.io/finalizer"}
			return http.MethodPut, workloadsPath + "/" + name, "application/json", object
		default: // status-update-small
			mu.Lock()
			object := current[i]
			mu.Unlock()
			generation, _ := object["metadata"].(map[string]any)["generation"].(float64)
			object["status"] = smallStatus(int64(generation))
			return http.MethodPut, workloadsPath + "/" + name + "/status", "application/json", object
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if watched != "" {
		_, rv, err := plane.client.ListAll(watched)
		if err != nil {
			return cost, err
		}
		go writer.Follow(ctx, watched, rv, func(WatchEvent, time.Time) {}, func([]Object, time.Time) {}, nil)
	}
	// The server's idle CPU rate, after the set-up has settled.
	time.Sleep(3 * time.Second)
	idleAPI0, idleEtcd0, err := plane.CPUSeconds()
	if err != nil {
		return cost, err
	}
	idleStart := time.Now()
	time.Sleep(5 * time.Second)
	idleAPI1, idleEtcd1, err := plane.CPUSeconds()
	if err != nil {
		return cost, err
	}
	idleSeconds := time.Since(idleStart).Seconds()
	idleAPIRate, idleEtcdRate := (idleAPI1-idleAPI0)/idleSeconds, (idleEtcd1-idleEtcd0)/idleSeconds
	cost.IdleAPIServerPct = round(idleAPIRate*100, 2)

	latencies := make([]float64, n)
	requestBytes := make([]int, n)
	objectBytes := make([]int, n)
	objectBytesNoMF := make([]int, n)
	statusBytes := make([]int, n)
	ownedFields := make([]int, n)
	failed := 0
	var firstErr error
	next := make(chan int)
	var wg sync.WaitGroup
	profiled := make(chan error, 1)
	if profileTo != "" {
		go func() { profiled <- profileAPIServer(plane.client, profileTo, profileFor) }()
	}
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				method, path, contentType, body := request(i)
				data, _ := json.Marshal(body)
				began := time.Now()
				answer, err := writer.raw(method, path, contentType, data)
				latencies[i] = time.Since(began).Seconds() * 1000
				requestBytes[i] = len(data)
				if err != nil {
					mu.Lock()
					failed++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				objectBytes[i] = len(answer)
				// The size figures, from a sample of the answers (not
				// decoding every one keeps the writer's CPU out of the way).
				if i%50 == 0 {
					objectBytesNoMF[i] = len(withoutManagedFields(answer))
					var read Object
					if json.Unmarshal(answer, &read) == nil {
						statusBytes[i] = len(read.Status)
					}
					ownedFields[i] = ownedStatusFields(answer)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	cost.Seconds = round(time.Since(start).Seconds(), 3)
	if profileTo != "" {
		if err := <-profiled; err != nil {
			return cost, fmt.Errorf("the profile: %v", err)
		}
		if time.Duration(cost.Seconds*float64(time.Second)) < profileFor {
			logf("the writes took %.1f s, less than the profile's %v: it holds idle time too", cost.Seconds, profileFor)
		}
	}
	// The batch audit writer and the watch's fan-out finish within a second.
	time.Sleep(1500 * time.Millisecond)
	api1, etcd1, err := plane.CPUSeconds()
	if err != nil {
		return cost, err
	}
	window := time.Since(start).Seconds()
	if failed > n/100 {
		return cost, fmt.Errorf("%d of %d writes failed, the first: %v", failed, n, firstErr)
	}
	done := float64(n - failed)
	cost.Failed = failed
	cost.APIServerCPUMs = round((api1-idleAPI1-idleAPIRate*window)/done*1000, 3)
	cost.EtcdCPUMs = round((etcd1-idleEtcd1-idleEtcdRate*window)/done*1000, 3)
	cost.RequestBytes = meanInts(requestBytes)
	cost.ObjectBytes = meanInts(objectBytes)
	cost.ObjectBytesNoMF = meanInts(objectBytesNoMF)
	if kind.Name != "deployment-patch" && kind.Name != "event-create" {
		cost.StatusBytes = meanInts(statusBytes)
		cost.OwnedStatusFields = meanInts(ownedFields)
	}
	sorted := append([]float64(nil), latencies...)
	sort.Float64s(sorted)
	cost.LatencyP50Ms = round(percentile(sorted, 0.5), 2)
	cost.LatencyP99Ms = round(percentile(sorted, 0.99), 2)
	return cost, nil
}

// profileAPIServer takes a CPU profile of kube-apiserver (its
// /debug/pprof/profile, as the admin) and writes it, and the functions
// that took the most of it with what they called (go tool pprof -top
// -cum), next to it.
func profileAPIServer(admin *Client, to string, seconds time.Duration) error {
	data, err := admin.rawWithin(seconds+30*time.Second, http.MethodGet,
		fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(seconds.Seconds())), "", nil)
	if err != nil {
		return err
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		return err
	}
	top, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=80", to).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof: %v\n%s", err, top)
	}
	logf("profile in %s", to)
	return os.WriteFile(strings.TrimSuffix(to, ".pprof")+".top.txt", top, 0o644)
}

// meanInts: the mean of the non-zero values.
func meanInts(values []int) float64 {
	sum, count := 0, 0
	for _, v := range values {
		if v > 0 {
			sum += v
			count++
		}
	}
	if count == 0 {
		return 0
	}
	return round(float64(sum)/float64(count), 0)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// raw sends a body as is (none when nil) and returns the answer's bytes.
func (c *Client) raw(method, path, contentType string, body []byte) ([]byte, error) {
	return c.rawWithin(60*time.Second, method, path, contentType, body)
}

func (c *Client) rawWithin(timeout time.Duration, method, path, contentType string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var payload any
	if body != nil {
		payload = json.RawMessage(body)
	}
	resp, err := c.request(ctx, method, path, contentType, payload)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, &APIError{Code: resp.StatusCode, Body: string(data)}
	}
	return data, nil
}

// tokenOf reads the token from a kubeconfig that OperatorKubeconfig wrote.
func tokenOf(kubeconfig string) (string, error) {
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if _, rest, ok := strings.Cut(line, "token: "); ok {
			rest = strings.TrimSpace(rest)
			rest = strings.TrimSuffix(strings.TrimSuffix(rest, "}]"), "}")
			var token string
			if err := json.Unmarshal([]byte(strings.TrimSpace(rest)), &token); err != nil {
				return "", fmt.Errorf("%s: the token: %v", kubeconfig, err)
			}
			return token, nil
		}
	}
	return "", fmt.Errorf("%s: no token", kubeconfig)
}

func printWriteCosts(report WriteCostReport) {
	fmt.Println()
	fmt.Printf("API server CPU per write: %d writes per kind, %d connections, Kubernetes %s; load average %s before, %s after\n",
		report.Writes, report.Workers, report.Kubernetes, report.LoadBefore, report.LoadAfter)
	fmt.Printf("%-26s %-66s %12s %8s %9s %9s %9s %9s %6s %8s %8s\n", "kind", "request", "apiserver ms", "etcd ms",
		"req bytes", "obj bytes", "obj no mf", "status", "owned", "p50 ms", "p99 ms")
	for _, c := range report.Costs {
		fmt.Printf("%-26s %-66s %12.3f %8.3f %9.0f %9.0f %9.0f %9.0f %6.0f %8.2f %8.2f\n", c.Name, c.Request,
			c.APIServerCPUMs, c.EtcdCPUMs, c.RequestBytes, c.ObjectBytes, c.ObjectBytesNoMF, c.StatusBytes,
			c.OwnedStatusFields, c.LatencyP50Ms, c.LatencyP99Ms)
	}
	fmt.Println("(obj bytes: the object the server answered with, as stored; obj no mf: the same without managedFields;" +
		" owned: the fields managedFields records for the status's writer;" +
		" CPU less the server's idle rate, one watch open on the written collection)")
	fmt.Println("the operator's objects, as it wrote them:")
	for _, name := range sortedKeys(report.Objects) {
		fmt.Printf("  %-60s %6d bytes\n", name, report.Objects[name])
	}
}
