// simcluster creates the nodes of a simulated EKS cluster from a pool file
// (config/sim/*.yaml) and the instance catalog (config/catalog.yaml): Node
// objects with the labels, taints, capacity and allocatable real EKS nodes
// carry, annotated for kwok, which then makes them Ready; and, for Karpenter
// and Auto Mode pools, the real karpenter.sh/v1 NodePool CRD with one
// NodePool per pool.
//
//	simcluster --catalog config/catalog.yaml --pools config/sim/default.yaml \
//	    [--kubeconfig FILE] [--wait-ready 120s] [--print] [--karpenter]
//	simcluster --catalog config/catalog.yaml --pools FILE --instance-types OUT [--prices POLICY]
//	simcluster --serve-offering-metrics ADDR --instance-types FILE [--port-file FILE]
//
// --print writes the objects as YAML to stdout instead of creating them.
// --karpenter: Karpenter's kwok provider runs and launches nodes; the
// NodePools name its KWOKNodeClass, created here with its CRDs.
// --instance-types writes that provider's instance-types file instead;
// --prices names a PlacementPolicy manifest whose spec.prices replace the
// catalog's there.
// --serve-offering-metrics serves the offering prices and availability of
// that file as Karpenter's AWS provider publishes them (offering_metrics.go).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/karpenter/pkg/apis"
	"sigs.k8s.io/yaml"
)

func main() {
	// A flag set of our own: controller-runtime, which Karpenter's API
	// package imports, registers --kubeconfig on the global one.
	flag := flag.NewFlagSet("simcluster", flag.ExitOnError)
	catalogPath := flag.String("catalog", "config/catalog.yaml", "instance catalog")
	poolsPath := flag.String("pools", "config/sim/default.yaml", "pool file")
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster to create the nodes in")
	kubeletVersion := flag.String("kubelet-version", "v1.34.10", "status.nodeInfo.kubeletVersion of every node")
	printOnly := flag.Bool("print", false, "write the objects as YAML to stdout instead of creating them")
	waitReady := flag.Duration("wait-ready", 0, "after creating, wait this long for every node to be Ready (0: do not wait)")
	workers := flag.Int("workers", 16, "concurrent requests when creating nodes")
	karpenter := flag.Bool("karpenter", false, "Karpenter's kwok provider runs: NodePools name its KWOKNodeClass, and its CRDs and the KWOKNodeClass are created")
	instanceTypes := flag.String("instance-types", "", "write Karpenter's kwok instance-types file for the catalog here, and nothing else")
	prices := flag.String("prices", "", "with --instance-types: a PlacementPolicy manifest whose spec.prices replace the catalog's")
	serveMetrics := flag.String("serve-offering-metrics", "", "serve Karpenter's offering metrics of the --instance-types file on this address (127.0.0.1:0: any port)")
	portFile := flag.String("port-file", "", "with --serve-offering-metrics: write the port served here")
	nodePrices := flag.Bool("node-prices", false, "print what each launched node costs as Karpenter weighs it (its launch price, with the NodeOverlays Karpenter accepted), as JSON")
	_ = flag.Parse(os.Args[1:])
	if *nodePrices {
		if err := printNodePrices(*kubeconfig); err != nil {
			fmt.Fprintln(os.Stderr, "simcluster:", err)
			os.Exit(1)
		}
		return
	}
	if *serveMetrics != "" {
		if err := serveOfferingMetrics(*instanceTypes, *serveMetrics, *portFile); err != nil {
			fmt.Fprintln(os.Stderr, "simcluster:", err)
			os.Exit(1)
		}
		return
	}

	o := options{*catalogPath, *poolsPath, *kubeconfig, *kubeletVersion, *printOnly, *waitReady, *workers, *karpenter,
		*instanceTypes, *prices}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "simcluster:", err)
		os.Exit(1)
	}
}

type options struct {
	catalogPath, poolsPath, kubeconfig, kubeletVersion string
	printOnly                                          bool
	waitReady                                          time.Duration
	workers                                            int
	karpenter                                          bool
	instanceTypesPath                                  string
	pricesPath                                         string
}

func run(o options) error {
	cat, err := loadCatalog(o.catalogPath)
	if err != nil {
		return err
	}
	pools, err := loadPools(o.poolsPath, cat)
	if err != nil {
		return err
	}
	b := &builder{cat: cat, file: pools, kubeletVersion: o.kubeletVersion, karpenter: o.karpenter}
	if o.pricesPath != "" {
		if o.instanceTypesPath == "" {
			return fmt.Errorf("--prices applies to --instance-types (Karpenter's offerings): add it")
		}
		if err := applyPolicyPrices(cat, o.pricesPath); err != nil {
			return err
		}
	}
	if o.instanceTypesPath != "" {
		return writeInstanceTypes(b, o.instanceTypesPath)
	}
	gen, err := b.build()
	if err != nil {
		return err
	}
	if o.printOnly {
		return printYAML(gen)
	}
	return apply(o.kubeconfig, gen, o.waitReady, o.workers, o.karpenter)
}

func nodePoolCRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(apis.NodePoolCRD, &crd); err != nil {
		return nil, fmt.Errorf("karpenter's NodePool CRD: %w", err)
	}
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	return &crd, nil
}

// ensureCRD creates a CRD (one already there is kept) and waits until it
// serves: Established.
func ensureCRD(ctx context.Context, ext apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CRD %s: %w", crd.Name, err)
	}
	for {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the CRD %s never became Established", crd.Name)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func printYAML(gen *generated) error {
	var objects []any
	if len(gen.nodePools) > 0 {
		crd, err := nodePoolCRD()
		if err != nil {
			return err
		}
		objects = append(objects, crd)
	}
	for _, np := range gen.nodePools {
		objects = append(objects, np)
	}
	for _, n := range gen.nodes {
		objects = append(objects, n)
	}
	if len(gen.slices) > 0 {
		for _, c := range deviceClasses() {
			objects = append(objects, c)
		}
		for _, s := range gen.slices {
			objects = append(objects, s)
		}
	}
	for _, o := range objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		fmt.Printf("---\n%s", data)
	}
	return nil
}

func apply(kubeconfig string, gen *generated, waitReady time.Duration, workers int, karpenter bool) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// A test cluster of our own: creating a thousand nodes should take
	// seconds, not the minute client-go's default 5 QPS would.
	cfg.QPS, cfg.Burst = 1000, 2000
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()

	if len(gen.nodePools) > 0 {
		if err := applyNodePools(ctx, cfg, gen, karpenter); err != nil {
			return err
		}
	}
	if len(gen.reservations) > 0 {
		if err := applyEC2NodeClass(ctx, cfg, gen.reservations); err != nil {
			return fmt.Errorf("the EC2NodeClass of the reservations: %w", err)
		}
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := createNodes(ctx, kube, gen.nodes, workers); err != nil {
		return err
	}
	if len(gen.slices) > 0 {
		if err := publishDevices(ctx, kube, gen.slices); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "simcluster: %d nodes and %d NodePools created in %.1f s\n",
		len(gen.nodes), len(gen.nodePools), time.Since(start).Seconds())
	if waitReady > 0 {
		return waitForReady(ctx, kube, gen.nodes, waitReady)
	}
	return nil
}

func applyNodePools(ctx context.Context, cfg *rest.Config, gen *generated, karpenter bool) error {
	crd, err := nodePoolCRD()
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := []*apiextensionsv1.CustomResourceDefinition{crd}
	if karpenter {
		crds = append(crds, karpenterCRDs()...)
	}
	for _, crd := range crds {
		if err := ensureCRD(ctx, ext, crd); err != nil {
			return err
		}
	}
	if karpenter {
		if err := applyKWOKNodeClass(ctx, cfg); err != nil {
			return fmt.Errorf("creating the KWOKNodeClass: %w", err)
		}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	for _, np := range gen.nodePools {
		// Through JSON, not the reflection-based unstructured converter,
		// which would skip NillableDuration's MarshalJSON.
		data, err := json.Marshal(np)
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			return err
		}
		// The v1 NodePool has no status subresource writes here: status is
		// Karpenter's to fill, and no Karpenter runs.
		unstructured.RemoveNestedField(obj.Object, "status")
		if _, err := dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating NodePool %s: %w", np.Name, err)
		}
	}
	return nil
}

func createNodes(ctx context.Context, kube kubernetes.Interface, nodes []*corev1.Node, workers int) error {
	jobs := make(chan *corev1.Node)
	errs := make(chan error, len(nodes))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range jobs {
				// A Node is created with its status, as kubelet registers one:
				// the API server keeps status on create (it drops it only on
				// update), so capacity and allocatable are there from the
				// start and kwok's node-initialize stage keeps them.
				if _, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating node %s: %w", n.Name, err)
				}
			}
		}()
	}
	for _, n := range nodes {
		jobs <- n
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

func waitForReady(ctx context.Context, kube kubernetes.Interface, nodes []*corev1.Node, timeout time.Duration) error {
	want := map[string]bool{}
	for _, n := range nodes {
		want[n.Name] = true
	}
	deadline := time.Now().Add(timeout)
	for {
		list, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		var notReady []string
		ready := map[string]bool{}
		for _, n := range list.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready[n.Name] = true
				}
			}
			// Ready means schedulable too: the node lifecycle controller lifts
			// the not-ready taint admission put on the new node a moment after
			// kwok reports Ready.
			for _, t := range n.Spec.Taints {
				if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
					ready[n.Name] = false
				}
			}
		}
		for name := range want {
			if !ready[name] {
				notReady = append(notReady, name)
			}
		}
		if len(notReady) == 0 {
			fmt.Fprintf(os.Stderr, "simcluster: all %d nodes Ready and untainted by the node lifecycle\n", len(want))
			return nil
		}
		if time.Now().After(deadline) {
			sort.Strings(notReady)
			return fmt.Errorf("%d of %d nodes not Ready after %s (first: %s); is kwok running?",
				len(notReady), len(want), timeout, notReady[0])
		}
		time.Sleep(200 * time.Millisecond)
	}
}
