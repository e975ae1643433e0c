package main

// What each node launched by Karpenter costs as Karpenter weighs it: the
// price of the offering its kwok provider launched it from (the node's
// eks-node-viewer/instance-price label), with the NodeOverlays Karpenter
// accepted applied by Karpenter's own code (sigs.k8s.io/karpenter v1.14.1:
// the overlays ordered by weight, the first whose requirements the node's
// labels meet, cloudprovider.AdjustedPrice). The kwok provider labels a
// node with the price before overlays, as the AWS provider's metrics
// publish it; Karpenter launches and consolidates by this one. The demo
// and the e2e tests compare it with what the operator claims.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/samber/lo"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/karpenter/pkg/apis/v1alpha1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

const nodeViewerPriceLabel = "eks-node-viewer/instance-price"

// printNodePrices writes {"node": price, ...} for every node that carries
// a launch price.
func printNodePrices(kubeconfig string) error {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	overlays, err := acceptedOverlays(ctx, dyn)
	if err != nil {
		return err
	}
	prices := map[string]float64{}
	for _, node := range nodes.Items {
		text, ok := node.Labels[nodeViewerPriceLabel]
		if !ok {
			continue
		}
		price, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return fmt.Errorf("node %s: %s %q is not a price", node.Name, nodeViewerPriceLabel, text)
		}
		prices[node.Name] = overlaidPrice(price, node.Labels, overlays)
	}
	return json.NewEncoder(os.Stdout).Encode(prices)
}

// acceptedOverlays are the NodeOverlays Karpenter validated, in the order
// it applies them.
func acceptedOverlays(ctx context.Context, dyn dynamic.Interface) ([]v1alpha1.NodeOverlay, error) {
	gvr := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1alpha1", Resource: "nodeoverlays"}
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil // no Karpenter, or one without NodeOverlays: launch prices as they are
	}
	if err != nil {
		return nil, fmt.Errorf("listing NodeOverlays: %w", err)
	}
	overlays := v1alpha1.NodeOverlayList{}
	for _, item := range list.Items {
		var overlay v1alpha1.NodeOverlay
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &overlay); err != nil {
			return nil, fmt.Errorf("NodeOverlay %s: %w", item.GetName(), err)
		}
		if overlay.StatusConditions().Get(v1alpha1.ConditionTypeValidationSucceeded).IsTrue() {
			overlays.Items = append(overlays.Items, overlay)
		}
	}
	overlays.OrderByWeight()
	return overlays.Items, nil
}

func overlaidPrice(price float64, labels map[string]string, overlays []v1alpha1.NodeOverlay) float64 {
	nodeRequirements := scheduling.NewLabelRequirements(labels)
	for _, overlay := range overlays {
		change := lo.Ternary(overlay.Spec.Price == nil, overlay.Spec.PriceAdjustment, overlay.Spec.Price)
		if change == nil {
			continue
		}
		requirements := scheduling.NewNodeSelectorRequirements(lo.Map(overlay.Spec.Requirements,
			func(r v1alpha1.NodeSelectorRequirement, _ int) corev1.NodeSelectorRequirement {
				return r.AsNodeSelectorRequirement()
			})...)
		if nodeRequirements.IsCompatible(requirements) {
			return cloudprovider.AdjustedPrice(price, *change)
		}
	}
	return price
}
