package main

// The floor: the fastest reaction possible to a GpuWorkload's creation,
// one strategic-merge PATCH of its Deployment and nothing else: no cache
// of Deployments, no decision, no status, no events, no finalizer, no
// rate limit, a goroutine per event. The operator's figures are reported
// as ratios to it.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"
)

func runFloor(args []string) error {
	flags := flag.NewFlagSet("floor", flag.ExitOnError)
	credentialsFile := flags.String("credentials", "", "JSON credentials (server, caFile, token)")
	namespace := flags.String("namespace", "", "namespace of the GpuWorkloads")
	flags.Parse(args)

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
	_, resourceVersion, err := client.ListAll(workloads)
	if err != nil {
		return err
	}
	fmt.Println("ready")

	// The same fields the operator writes for these workloads.
	patch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"nodeSelector": map[string]string{"node.kubernetes.io/instance-type": "g4dn.xlarge"},
		"tolerations":  []map[string]string{{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}},
		"containers": []map[string]any{{"name": "server", "resources": map[string]any{
			"limits": map[string]string{"nvidia.com/gpu": "1"}, "requests": map[string]string{"nvidia.com/gpu": "1"}}}},
	}}}}
	return client.Watch(context.Background(), workloads, resourceVersion, func(event WatchEvent, _ time.Time) {
		if event.Type != "ADDED" {
			return
		}
		var spec struct {
			TargetRef struct {
				Name string `json:"name"`
			} `json:"targetRef"`
		}
		if json.Unmarshal(event.Object.Spec, &spec) != nil || spec.TargetRef.Name == "" {
			return
		}
		path := "/apis/apps/v1/namespaces/" + *namespace + "/deployments/" + spec.TargetRef.Name
		go func() {
			if err := client.Patch(path, StrategicPatch, patch); err != nil {
				fmt.Fprintln(os.Stderr, "floor:", spec.TargetRef.Name, err)
			}
		}()
	})
}
