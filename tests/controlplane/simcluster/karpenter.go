package main

// What Karpenter's kwok provider needs to launch nodes in the simulated
// cluster (scripts/controlplane start --cluster --karpenter): its CRDs, a
// KWOKNodeClass, and the instance-types file it launches from, generated
// from config/catalog.yaml so that a launched node carries what a node of
// the same type carries in the static scenarios: the allocatable nodeadm
// leaves, the devices, and the labels EKS and Karpenter's AWS provider put
// on it.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	kwokapis "sigs.k8s.io/karpenter/kwok/apis"
	karpapis "sigs.k8s.io/karpenter/pkg/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// The KWOKNodeClass every NodePool names when Karpenter runs.
const kwokNodeClassName = "default"

// What the kwok provider subtracts from an instance type's resources for
// allocatable (kwok/cloudprovider/helpers.go, newInstanceType: kube-reserved
// 100m cpu and 10Mi memory). The file adds it back, so that a launched
// node's allocatable is nodeadm's, as on the static scenarios' nodes.
var kwokOverhead = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("100m"),
	corev1.ResourceMemory: resource.MustParse("10Mi"),
}

// The instance-types file format of kwok/cloudprovider/instance_types.json
// (v1.14.1): an offering's requirements become well-known labels that
// NodePools and pods may select on, and labels of the nodes launched.
type kwokInstanceType struct {
	Name             string            `json:"name"`
	Architecture     string            `json:"architecture"`
	OperatingSystems []string          `json:"operatingSystems"`
	Resources        map[string]string `json:"resources"`
	Offerings        []kwokOffering    `json:"offerings"`
}

type kwokOffering struct {
	Price        float64                          `json:"Price"`
	Available    bool                             `json:"Available"`
	Requirements []corev1.NodeSelectorRequirement `json:"Requirements"`
}

// instanceTypes describes every catalog type, offered on demand and (where
// the catalog has a spot price) as spot in each of the region's zones the
// pool file names, at the catalog's prices.
func (b *builder) instanceTypes() ([]kwokInstanceType, error) {
	zoneSet := map[string]bool{}
	for _, p := range b.file.Pools {
		for _, z := range p.Zones {
			zoneSet[z] = true
		}
	}
	if len(zoneSet) == 0 {
		for _, suffix := range []string{"a", "b", "c"} {
			zoneSet[b.file.Region+suffix] = true
		}
	}
	zones := make([]string, 0, len(zoneSet))
	for z := range zoneSet {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	in := func(key string, value string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}
	}
	launched := &pool{Provisioner: karpenterPool, DiskGiB: 20}
	var out []kwokInstanceType
	for i := range b.cat.Instances {
		instance := &b.cat.Instances[i]
		if _, ok := eniMaxPods[instance.Type]; !ok {
			continue // no pod count known: not offered
		}
		_, allocatable := b.resources(launched, instance)
		resources := map[string]string{}
		for name, quantity := range allocatable {
			if quantity.IsZero() {
				continue
			}
			if overhead, ok := kwokOverhead[name]; ok {
				quantity.Add(overhead)
			}
			resources[string(name)] = quantity.String()
		}
		labels, err := instanceLabels(karpenterAWSDomain, instance, b.cat.accel(instance), true)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(labels))
		for k := range labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var described []corev1.NodeSelectorRequirement
		described = append(described, in(corev1.LabelTopologyRegion, b.file.Region))
		for _, k := range keys {
			described = append(described, in(k, labels[k]))
		}
		prices := []struct {
			capacityType string
			price        float64
		}{{karpv1.CapacityTypeOnDemand, instance.OnDemand}, {karpv1.CapacityTypeSpot, instance.Spot}}
		it := kwokInstanceType{
			Name:             instance.Type,
			Architecture:     arch(parseShape(instance.Type)),
			OperatingSystems: []string{"linux"},
			Resources:        resources,
		}
		for _, zone := range zones {
			for _, offer := range prices {
				if offer.price <= 0 {
					continue
				}
				requirements := append([]corev1.NodeSelectorRequirement{
					in(karpv1.CapacityTypeLabelKey, offer.capacityType),
					in(corev1.LabelTopologyZone, zone),
				}, described...)
				it.Offerings = append(it.Offerings, kwokOffering{Price: offer.price, Available: true, Requirements: requirements})
			}
		}
		if len(it.Offerings) == 0 {
			continue // no price: Karpenter could never launch it
		}
		out = append(out, it)
	}
	return out, nil
}

func writeInstanceTypes(b *builder, path string) error {
	types, err := b.instanceTypes()
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(types, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// poolLimits: the pool file's limits when it states them, else what the
// pool's nodes add up to.
func poolLimits(p *pool, summed corev1.ResourceList) corev1.ResourceList {
	if p.Limits == nil {
		return summed
	}
	limits := corev1.ResourceList{}
	for name, value := range p.Limits {
		limits[corev1.ResourceName(name)] = resource.MustParse(value)
	}
	return limits
}

func parseLimits(p *pool) error {
	for name, value := range p.Limits {
		if _, err := resource.ParseQuantity(value); err != nil {
			return fmt.Errorf("limits.%s: %q is not a quantity", name, value)
		}
	}
	return nil
}

// karpenterCRDs are the CRDs Karpenter's kwok provider serves besides the
// NodePool: NodeClaims, NodeOverlays and KWOKNodeClasses.
func karpenterCRDs() []*apiextensionsv1.CustomResourceDefinition {
	crds := []*apiextensionsv1.CustomResourceDefinition{}
	served := []*apiextensionsv1.CustomResourceDefinition{karpapis.CRDs[1], karpapis.CRDs[2], kwokapis.CRDs[0]}
	for _, crd := range served {
		copied := crd.DeepCopy()
		copied.TypeMeta.APIVersion = "apiextensions.k8s.io/v1"
		copied.TypeMeta.Kind = "CustomResourceDefinition"
		crds = append(crds, copied)
	}
	return crds
}

// applyKWOKNodeClass creates the NodeClass the NodePools name. Its Ready
// condition is the CRD's default: the kwok provider has nothing to resolve.
func applyKWOKNodeClass(ctx context.Context, cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: kwokapis.Group, Version: "v1alpha1", Resource: "kwoknodeclasses"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kwokapis.Group + "/v1alpha1",
		"kind":       "KWOKNodeClass",
		"metadata":   map[string]any{"name": kwokNodeClassName},
		"spec":       map[string]any{},
	}}
	_, err = dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{})
	return err
}
