// Command bench-scale measures the operator at scale against a real
// control plane, next to the floor (the fastest possible reaction).
//
//	bench-scale run --repo DIR --operator BIN [--sizes 100,1000,10000] [--quick] ...
//	bench-scale floor --credentials FILE --namespace NS   (the floor reactor)
//	bench-scale writecost --repo DIR --operator BIN [--n 1000] (the API server's CPU per write)
//	bench-scale jobs --repo DIR --operator BIN [--n 1000] [--rate 20] (suspended Jobs placed and resumed)
//	bench-scale eks --repo DIR --operator BIN [--pods 100000] [--workloads 20000] [--churn 10m] ...
//	                                                       (5,000 nodes, Karpenter beside; a soak with --churn 60m)
//	bench-scale plot RESULTS.json                          (redraws the PNG)
//	bench-scale fleet [--size 10000]                       (cluster mode's pool file for a size)
//	bench-scale failover --repo DIR --operator BIN [--size 1000] [--scenarios kill-leader,restart-apiserver]
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench-scale run|floor|writecost|jobs|failover|eks|fleet|plot ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runBench(os.Args[2:])
	case "floor":
		err = runFloor(os.Args[2:])
	case "writecost":
		err = runWriteCost(os.Args[2:])
	case "jobs":
		err = runJobs(os.Args[2:])
	case "failover":
		err = runFailover(os.Args[2:])
	case "eks":
		err = runEKS(os.Args[2:])
	case "fleet":
		err = runFleet(os.Args[2:])
	case "plot":
		if len(os.Args) != 3 {
			err = fmt.Errorf("usage: bench-scale plot RESULTS.json")
		} else {
			err = replot(os.Args[2])
		}
	default:
		err = fmt.Errorf("unknown command %q (run, floor, writecost, jobs, failover, eks, fleet or plot)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}
