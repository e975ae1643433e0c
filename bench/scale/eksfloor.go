package main

// The floor under churn (issue 27: placement p99 under churn within 3x the
// floor's, in the same run). Once the operator's churn is measured the
// operator is stopped and the floor (floor.go) places a second set of
// arrivals, at the same rate, under the same pod churn, on the same
// cluster with Karpenter still beside it. The operator cannot run at the
// same time: it watches every GpuWorkload and would place the floor's too.
// The floor reads no Pod: the cost of the operator's pod watch, on the
// server and in the operator, is part of what the ratio measures.

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

type FloorChurn struct {
	Arrivals       Latency `json:"arrivals"` // creation to placed, ms
	ArrivalsPlaced int     `json:"arrivalsPlaced"`
	ChurnSeconds   float64 `json:"churnSeconds"`
	PodsCreated    int     `json:"podsCreated"`
	PodsDeleted    int     `json:"podsDeleted"`
	// The operator's arrivals p99 over the floor's.
	P99Ratio float64 `json:"p99Ratio"`
}

// floorChurnDuration: as long as the arrivals take, plus a pod's lifetime
// so that deletions run beside creations (as in the operator's churn,
// whose arrivals also begin with it), and no longer than the operator's
// churn.
func floorChurnDuration(s EKSSettings) time.Duration {
	arriving := time.Duration(float64(s.Arrivals) / s.ArrivalRate * float64(time.Second))
	return min(arriving+s.ChurnLifetime, s.Churn)
}

// floorUnderChurn: the floor's arrivals are GpuWorkloads first, first+1,
// ... (their Deployments created here, before the floor starts).
func floorUnderChurn(plane *ControlPlane, s EKSSettings, nodes []*eksNode, namespaces []string,
	watch *DeploymentWatch, first int) (FloorChurn, error) {
	var result FloorChurn
	if err := createAll(plane.client, deploymentsPath, s.Arrivals, func(i int) map[string]any {
		return deploymentManifest(deploymentName(first + i))
	}); err != nil {
		return result, err
	}
	credentials, err := plane.FloorCredentials()
	if err != nil {
		return result, err
	}
	self, err := os.Executable()
	if err != nil {
		return result, err
	}
	floor, err := startFloor(self, credentials, "", filepath.Join(s.Work, "floor.log"))
	if err != nil {
		return result, err
	}
	defer floor.stop()

	duration := floorChurnDuration(s)
	logf("the floor under churn for %v: %.0f pods a second created and as many deleted; %d GpuWorkloads at %.0f/s",
		duration.Round(time.Second), s.ChurnRate, s.Arrivals, s.ArrivalRate)
	began := time.Now()
	churnDone := make(chan churnResult)
	go func() {
		churnDone <- churnPods(plane.client, nodes, namespaces, "floor-churn", s.ChurnRate, s.ChurnLifetime, duration)
	}()
	sent, err := createAtRate(plane.client, s.Arrivals, s.ArrivalRate, func(i int) map[string]any {
		return workloadManifest(first + i)
	}, nil)
	churned := <-churnDone
	if err != nil {
		return result, fmt.Errorf("creating the floor's arriving GpuWorkloads: %v", err)
	}
	if churned.err != nil {
		return result, churned.err
	}
	result.ChurnSeconds = round(time.Since(began).Seconds(), 1)
	result.PodsCreated, result.PodsDeleted = churned.created, churned.deleted
	result.Arrivals, result.ArrivalsPlaced = arrivalLatencies(watch, first, sent)
	logf("the floor's churn done: %d pods created, %d deleted; %d of %d arrivals placed", churned.created,
		churned.deleted, result.ArrivalsPlaced, s.Arrivals)
	return result, nil
}
