package main

// The floor: the fastest reaction possible to a GpuWorkload's creation,
// one strategic-merge PATCH of its Deployment and nothing else: no cache
// of Deployments, no decision, no status, no events, no finalizer, no
// rate limit, a goroutine per event. The operator's figures are reported
// as ratios to it. It keeps its watch open across anything that ends it
// (Client.Follow), so it places every workload once however long the run.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

func runFloor(args []string) error {
	flags := flag.NewFlagSet("floor", flag.ExitOnError)
	credentialsFile := flags.String("credentials", "", "JSON credentials (server, caFile, token)")
	namespace := flags.String("namespace", "", "namespace of the GpuWorkloads")
	patchesFile := flags.String("patches", "",
		"cluster mode: JSON object, a Deployment patch per value of the GpuWorkloads' "+kindLabel+" label")
	jobs := flags.Bool("jobs", false, "the targets are suspended Jobs: patch each Job and resume it in the same patch")
	flags.Parse(args)
	patches, err := readPatches(*patchesFile)
	if err != nil {
		return err
	}

	var creds Credentials
	data, err := os.ReadFile(*credentialsFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &creds); err != nil {
		return err
	}
	client, err := NewClient(creds)
	if err != nil {
		return err
	}
	workloads := "/apis/gpuplacement.io/v1alpha1/namespaces/" + *namespace + "/gpuworkloads"
	existing, resourceVersion, err := client.ListAll(workloads)
	if err != nil {
		return err
	}
	fmt.Println("ready")

	// The same fields the operator writes for these workloads.
	fixed := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]string{"node.kubernetes.io/instance-type": "g4dn.xlarge"},
		"tolerations":  []map[string]string{{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}},
		"containers": []map[string]any{{"name": "server", "resources": map[string]any{
			"limits": map[string]string{"nvidia.com/gpu": "1"}, "requests": map[string]string{"nvidia.com/gpu": "1"}}}},
	}}}}
	// A Job's: the same fields, and `suspend: false` in the same patch.
	resumedJob := map[string]any{"spec": map[string]any{"suspend": false,
		"template": fixed["spec"].(map[string]any)["template"]}}
	// Each workload once: the watch is reopened whenever it ends (an API
	// server restart, its timeout, EOF), and a relist after 410 Gone hands
	// back workloads already seen, and any created while it was down.
	// Workloads there before it started are someone else's (in EKS mode,
	// the operator's): it places only those created after.
	var mu sync.Mutex
	seen := map[string]bool{}
	for _, object := range existing {
		seen[object.Metadata.Namespace+"/"+object.Metadata.Name] = true
	}
	place := func(object Object) {
		var spec struct {
			TargetRef struct {
				Name string `json:"name"`
			} `json:"targetRef"`
		}
		if json.Unmarshal(object.Spec, &spec) != nil || spec.TargetRef.Name == "" {
			return
		}
		key := object.Metadata.Namespace + "/" + object.Metadata.Name
		mu.Lock()
		done := seen[key]
		seen[key] = true
		mu.Unlock()
		if done {
			return
		}
		patch, ok := patches[object.Metadata.Labels[kindLabel]]
		if !ok {
			patch = fixed
		}
		path := "/apis/apps/v1/namespaces/" + *namespace + "/deployments/" + spec.TargetRef.Name
		if *jobs {
			patch = resumedJob
			path = "/apis/batch/v1/namespaces/" + *namespace + "/jobs/" + spec.TargetRef.Name
		}
		go patchWithRetries(client, path, patch, spec.TargetRef.Name)
	}
	return client.Follow(context.Background(), workloads, resourceVersion,
		func(event WatchEvent, _ time.Time) {
			if event.Type == "ADDED" {
				place(event.Object)
			}
		},
		func(items []Object, _ time.Time) {
			for _, item := range items {
				place(item)
			}
		},
		func(err error) { fmt.Fprintln(os.Stderr, "floor: reopening the watch:", err) })
}

// readPatches: in cluster mode the patch the operator would write for
// each kind of the mix (so that the floor's pods can run on the fleet),
// looked up by label: a table, not a decision. No file: none.
func readPatches(path string) (map[string]any, error) {
	patches := map[string]any{}
	if path == "" {
		return patches, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return patches, json.Unmarshal(data, &patches)
}

// patchWithRetries: a patch that failed on the way (the server restarting,
// 429, 5xx, or 403 and 404 from a server just restarted, whose RBAC and
// CRDs are not loaded yet) is sent again, a few times, as a controller
// requeues it.
func patchWithRetries(client *Client, path string, patch any, name string) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := client.Patch(path, StrategicPatch, patch)
		if err == nil {
			return
		}
		var apiErr *APIError
		final := errors.As(err, &apiErr) && apiErr.Code < 500 && apiErr.Code != http.StatusTooManyRequests &&
			apiErr.Code != http.StatusForbidden && apiErr.Code != http.StatusNotFound
		if final || attempt == 10 {
			fmt.Fprintln(os.Stderr, "floor:", name, err)
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 3*time.Second)
	}
}
