package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// startKarpenter starts Karpenter with its kwok provider, a process of this
// machine as the other components are: the admin kubeconfig, no leader
// election (one replica, no Lease), no webhooks (the kwok provider has
// none). It launches kwok Nodes of the instance types simcluster generates
// from the catalog, at the prices of the PlacementPolicy manifest prices
// where it sets them; the kwok controller already running makes them Ready.
func startKarpenter(dir, pools, prices string, t tools) error {
	instanceTypes := filepath.Join(dir, "karpenter-instance-types.json")
	args := []string{"--catalog", t.catalog(), "--pools", pools, "--instance-types", instanceTypes}
	if prices != "" {
		args = append(args, "--prices", prices)
	}
	if err := runLogged(dir, "simcluster", t.simcluster(), args...); err != nil {
		return err
	}
	if err := launchKarpenter(dir, instanceTypes, t); err != nil {
		return err
	}
	return serveOfferingMetrics(dir, instanceTypes, t)
}

// serveOfferingMetrics serves the offerings' prices and availability that
// Karpenter's AWS provider publishes and its kwok provider does not, from
// the instance-types file (read again on every scrape), at the URL in
// DIR/karpenter-prices.url.
func serveOfferingMetrics(dir, instanceTypes string, t tools) error {
	portFile := filepath.Join(dir, "karpenter-prices.port")
	if err := startComponent(dir, "karpenter-prices", nil, t.simcluster(), "--serve-offering-metrics",
		"127.0.0.1:0", "--instance-types", instanceTypes, "--port-file", portFile); err != nil {
		return err
	}
	var port []byte
	if err := waitFor("Karpenter's offering metrics", readyTimeout, dir, "karpenter-prices", func() bool {
		data, err := os.ReadFile(portFile)
		port = data
		return err == nil && len(strings.TrimSpace(string(data))) > 0
	}); err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%s/metrics\n", strings.TrimSpace(string(port)))
	return os.WriteFile(filepath.Join(dir, "karpenter-prices.url"), []byte(url), 0o644)
}

// launchKarpenter starts Karpenter on the instance-types file as it is.
func launchKarpenter(dir, instanceTypes string, t tools) error {
	// The instance-types file as a flag, not its environment variable:
	// livePid knows a process by DIR on its command line.
	return startController(dir, "karpenter", []string{"KUBECONFIG=" + filepath.Join(dir, "kubeconfig")}, 2,
		func(ports []int) ([]string, error) {
			return []string{filepath.Join(t.karpenterBin, "karpenter"), "--instance-types-file-path", instanceTypes,
				"--disable-leader-election", "--metrics-port", strconv.Itoa(ports[0]),
				"--health-probe-port", strconv.Itoa(ports[1]), "--log-level", "info",
				// NodeOverlays weigh prices as in an EKS cluster that enables them.
				"--feature-gates", "NodeOverlay=true"}, nil
		}, func(ports []int) bool {
			return httpOK(plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]))
		})
}

// restartKarpenter starts Karpenter again on its instance-types file as it
// is now: a test that rewrote an offering's price or availability there
// has Karpenter launch by it. A Karpenter that had stopped (once, in a run
// with four suites beside it) is started all the same, its log's last
// lines shown first: the test asks for Karpenter on the new file, and a
// Karpenter gone under load is not what it tests.
func restartKarpenter(dir string, t tools) error {
	if _, err := os.Stat(filepath.Join(dir, "karpenter-instance-types.json")); err != nil {
		return fail("no Karpenter was started in %s", dir)
	}
	if _, ok := livePid(dir, "karpenter"); !ok {
		path := filepath.Join(dir, "logs", "karpenter.log")
		logf("Karpenter had stopped in %s; starting it again. Last lines of %s:", dir, path)
		for _, line := range lastLines(path, 20) {
			fmt.Fprintln(os.Stderr, line)
		}
	}
	stopOne(dir, "karpenter")
	if err := launchKarpenter(dir, filepath.Join(dir, "karpenter-instance-types.json"), t); err != nil {
		return fail("Karpenter did not start again; logs in %s/logs", dir)
	}
	return nil
}

// startKarpenterLater starts the Karpenter that start --karpenter-later
// left out, at the catalog's prices.
func startKarpenterLater(dir string, t tools) error {
	pools, err := os.ReadFile(filepath.Join(dir, "cluster.pools"))
	if err != nil {
		return fail("no simulated cluster was started in %s", dir)
	}
	if _, ok := livePid(dir, "kwok"); !ok {
		return fail("the simulated cluster in %s is not running", dir)
	}
	if _, ok := livePid(dir, "karpenter"); ok {
		return fail("Karpenter is already running in %s", dir)
	}
	if err := t.requireBinaries(t.k8sBin, true, true, nil); err != nil {
		return err
	}
	if err := startKarpenter(dir, strings.TrimSpace(string(pools)), "", t); err != nil {
		return fail("Karpenter did not start; logs in %s/logs", dir)
	}
	return nil
}
