package main

// The EC2NodeClass the karpenter pools' nodes name (karpenter.k8s.aws/
// ec2nodeclass=default), where a pool runs in a capacity reservation: the
// real CRD of Karpenter's AWS provider (github.com/aws/karpenter-provider-
// aws v1.14.1, the release of the core Karpenter pinned here), and in its
// status the reservations as the provider lists them from EC2
// (capacityReservations: id, type, zone, instance type, end). No AWS
// provider runs here to fill it, so simcluster writes that status, as the
// pool file states it.

import (
	"context"
	"fmt"

	awsapis "github.com/aws/karpenter-provider-aws/pkg/apis"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// A reservation a karpenter pool's nodes run in, where.
type reservationStatus struct {
	*reservation
	instanceType string
	zone         string
}

func applyEC2NodeClass(ctx context.Context, cfg *rest.Config, reservations []reservationStatus) error {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(awsapis.EC2NodeClassCRD, &crd); err != nil {
		return fmt.Errorf("the EC2NodeClass CRD: %w", err)
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := ensureCRD(ctx, ext, &crd); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
	terms := []any{}
	listed := []any{}
	for _, r := range reservations {
		terms = append(terms, map[string]any{"id": r.ID})
		status := map[string]any{
			"id":                    r.ID,
			"availabilityZone":      r.zone,
			"instanceType":          r.instanceType,
			"instanceMatchCriteria": "targeted",
			"ownerID":               "123456789012",
			"reservationType":       r.Type,
			"state":                 "active",
		}
		if r.EndTime != "" {
			status["endTime"] = r.EndTime
		}
		listed = append(listed, status)
	}
	discovery := map[string]any{"tags": map[string]any{"karpenter.sh/discovery": "simulated"}}
	nodeClass := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.k8s.aws/v1",
		"kind":       "EC2NodeClass",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{
			"role":                             "KarpenterNodeRole-simulated",
			"amiSelectorTerms":                 []any{map[string]any{"alias": "al2023@latest"}},
			"subnetSelectorTerms":              []any{discovery},
			"securityGroupSelectorTerms":       []any{discovery},
			"capacityReservationSelectorTerms": terms,
		},
	}}
	created, err := dyn.Resource(gvr).Create(ctx, nodeClass, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating the EC2NodeClass: %w", err)
	}
	created.Object["status"] = map[string]any{"capacityReservations": listed}
	if _, err := dyn.Resource(gvr).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("writing the EC2NodeClass's status: %w", err)
	}
	return nil
}
