package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// The bench's Karpenter pools are config/sim/karpenter-launch.yaml's, with
// every pool's limits raised and nothing else changed.
func TestKarpenterPoolsRaiseOnlyTheLimits(t *testing.T) {
	dir := t.TempDir()
	path, err := karpenterPools(filepath.Join("..", ".."), dir, 500)
	if err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(path)
	source, _ := os.ReadFile(filepath.Join("..", "..", "config", "sim", "karpenter-launch.yaml"))
	keep := func(text string) []string {
		var lines []string
		for _, line := range strings.Split(text, "\n") {
			trimmed := strings.TrimSpace(line)
			if trimmed != "" && !strings.HasPrefix(trimmed, "#") && !strings.HasPrefix(trimmed, "limits:") {
				lines = append(lines, line)
			}
		}
		return lines
	}
	if got, want := keep(string(written)), keep(string(source)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the pools changed beyond their limits:\n%s\nwant:\n%s", strings.Join(got, "\n"),
			strings.Join(want, "\n"))
	}
	for _, want := range []string{`limits: {cpu: "250", memory: 2000Gi}`,
		`nvidia.com/gpu: "50"`, `aws.amazon.com/neuron: "50"`} {
		if !strings.Contains(string(written), want) {
			t.Errorf("no %s in:\n%s", want, written)
		}
	}
	if _, err := raiseLimits("pools:\n  - name: gpu\n    limits: {cpu: \"1\"}\n", 500); err == nil {
		t.Error("a pool the bench has no limits for: no error")
	}
}
