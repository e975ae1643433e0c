package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// The simulated cluster's processes, in the order they start; stop goes the
// other way, before the API server.
var clusterProcesses = []string{"kube-scheduler", "kube-controller-manager", "kwok", "karpenter",
	"karpenter-prices", "kuberay", "lws", "jobset", "trainer", "kueue"}

// stop ends every process a start in dir made, the watchdog last; safe to
// run twice or after whatever started them crashed.
func stop(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		logf("nothing to stop: %s does not exist", dir)
		return nil
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	stopAll(dir)
	logf("stopped the control plane in %s", dir)
	return nil
}

// stopAll: the simulated cluster's processes first, newest first, so
// none of them logs a vanished API server; then the API server, so it does
// not log etcd errors while stopping.
func stopAll(dir string) {
	for i := len(clusterProcesses) - 1; i >= 0; i-- {
		stopOne(dir, clusterProcesses[i])
	}
	for _, name := range []string{"kube-apiserver", "etcd", "watchdog"} {
		stopOne(dir, name)
	}
}

// status prints each process's state; it fails when the API server is not
// running.
func status(dir string) error {
	names := []string{"etcd", "kube-apiserver"}
	pools, poolsErr := os.ReadFile(filepath.Join(dir, "cluster.pools"))
	if poolsErr == nil {
		names = append(names, clusterProcesses...)
	}
	names = append(names, "watchdog")
	for _, name := range names {
		if pid, ok := livePid(dir, name); ok {
			fmt.Printf("%s: running (pid %d)\n", name, pid)
		} else {
			fmt.Printf("%s: stopped\n", name)
		}
	}
	if endpoint, err := os.ReadFile(filepath.Join(dir, "endpoint")); err == nil {
		fmt.Printf("endpoint: %s\n", trimLine(endpoint))
	}
	if poolsErr == nil {
		fmt.Printf("pools: %s\n", trimLine(pools))
	}
	if _, ok := livePid(dir, "kube-apiserver"); !ok {
		return failure{"kube-apiserver is not running in " + dir}
	}
	return nil
}
