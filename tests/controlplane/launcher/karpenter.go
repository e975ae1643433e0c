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
	for attempt := 1; ; attempt++ {
		ports := pickPorts(2)
		// The instance-types file as a flag, not its environment variable:
		// livePid knows a process by DIR on its command line.
		err := startComponent(dir, "karpenter", []string{"KUBECONFIG=" + filepath.Join(dir, "kubeconfig")},
			filepath.Join(t.karpenterBin, "karpenter"), "--instance-types-file-path", instanceTypes,
			"--disable-leader-election", "--metrics-port", strconv.Itoa(ports[0]),
			"--health-probe-port", strconv.Itoa(ports[1]), "--log-level", "info")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "karpenter.port"), []byte(strconv.Itoa(ports[1])+"\n"), 0o644); err != nil {
			return err
		}
		ready := fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
		if waitFor("karpenter /readyz", readyTimeout, dir, "karpenter",
			func() bool { return httpOK(plainHTTP, ready) }) == nil {
			return nil
		}
		if attempt == 3 || !logSays(dir, "karpenter", "address already in use") {
			return fmt.Errorf("karpenter did not start")
		}
		stopOne(dir, "karpenter")
		logf("retrying karpenter on other ports")
	}
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
	if err := t.requireBinaries(t.k8sBin, true, true); err != nil {
		return err
	}
	if err := startKarpenter(dir, strings.TrimSpace(string(pools)), "", t); err != nil {
		return fail("Karpenter did not start; logs in %s/logs", dir)
	}
	return nil
}
