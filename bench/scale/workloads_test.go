package main

import (
	"encoding/json"
	"testing"
)

func TestSelectedInstanceType(t *testing.T) {
	for _, c := range []struct {
		selector map[string]string
		want     string
	}{
		{map[string]string{"node.kubernetes.io/instance-type": "c5.xlarge", "karpenter.sh/capacity-type": "on-demand"},
			"c5.xlarge"},
		{map[string]string{"karpenter.k8s.aws/instance-gpu-name": "l40s", "karpenter.k8s.aws/instance-gpu-count": "1"},
			"l40s x1"},
		{map[string]string{"karpenter.k8s.aws/instance-accelerator-name": "inferentia2",
			"karpenter.k8s.aws/instance-accelerator-count": "1"}, "inferentia2 x1"},
		{map[string]string{"eks.amazonaws.com/instance-gpu-name": "a10g", "eks.amazonaws.com/instance-gpu-count": "4"},
			"a10g x4"},
		{map[string]string{"team": "search"}, ""}, // the team's own selector: not placed
		{nil, ""},
	} {
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{"nodeSelector": c.selector}}}
		raw, _ := json.Marshal(spec)
		if got := selectedInstanceType(raw); got != c.want {
			t.Errorf("%v: got %q, want %q", c.selector, got, c.want)
		}
	}
}
