// kwok-stages prints the kwok configuration scripts/controlplane starts kwok
// with: the Stage objects kwok's own default set is made of (node
// initialisation, node heartbeat, pod ready, complete and delete), taken
// from the pinned kwok module as it embeds them, so they always match the
// kwok binary built next to them.
package main

import (
	"fmt"
	"strings"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

func main() {
	// The heartbeat-with-lease stage rewrites a node's status only every 10
	// minutes (kwokctl's choice when leases carry liveness). No node
	// lifecycle controller runs in the simulated cluster, so nothing marks a
	// node NotReady between heartbeats, and a thousand nodes cost nothing
	// while idle.
	for _, doc := range []string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		withCompleteDelay(podfast.DefaultPodComplete),
		podfast.DefaultPodDelete,
	} {
		fmt.Printf("---\n%s\n", strings.TrimSpace(doc))
	}
}

// withCompleteDelay lets a Job's pod say how long it runs before kwok
// completes it, with the annotation kwok's own general stages read
// (pod-complete.stage.kwok.x-k8s.io/delay, e.g. "10m"); without it a Job's
// pods complete as soon as they run, as in the fast stage. The e2e tests
// use it for a training Job that is still running when prices change.
func withCompleteDelay(stage string) string {
	const delay = `  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["pod-complete.stage.kwok.x-k8s.io/delay"]'
`
	if !strings.Contains(stage, "\n  next:\n") {
		panic("kwok's pod-complete stage has no next: the delay cannot be added")
	}
	return strings.Replace(stage, "\n  next:\n", "\n"+delay+"  next:\n", 1)
}
