package main

// GpuWorkload as a kubebuilder project would declare it (api/v1alpha1),
// written by hand instead of generated: the spec the CRD has, a small
// status, and the deep copies controller-runtime needs. The spec is typed
// in full because the finalizer is added with an Update, which sends the
// whole object back: a field missing here would be dropped on the server.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

var GroupVersion = schema.GroupVersion{Group: "gpuplacement.io", Version: "v1alpha1"}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &GpuWorkload{}, &GpuWorkloadList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}

type GpuWorkload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GpuWorkloadSpec   `json:"spec"`
	Status            GpuWorkloadStatus `json:"status,omitempty"`
}

type GpuWorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GpuWorkload `json:"items"`
}

type GpuWorkloadSpec struct {
	TargetRef   TargetRef    `json:"targetRef"`
	Containers  []string     `json:"containers,omitempty"`
	Workload    WorkloadKind `json:"workload"`
	Model       Model        `json:"model"`
	Objective   string       `json:"objective,omitempty"`
	Constraints *Constraints `json:"constraints,omitempty"`
	PolicyRef   *PolicyRef   `json:"policyRef,omitempty"`
	Mode        string       `json:"mode,omitempty"`
}

type TargetRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

type WorkloadKind struct {
	Kind            string `json:"kind"`
	LatencyTargetMs *int64 `json:"latencyTargetMs,omitempty"`
}

type Model struct {
	Parameters   intstr.IntOrString `json:"parameters"`
	Precision    string             `json:"precision,omitempty"`
	Framework    string             `json:"framework,omitempty"`
	Architecture string             `json:"architecture,omitempty"`
}

type Constraints struct {
	Tiers                 []string `json:"tiers,omitempty"`
	InstanceTypes         []string `json:"instanceTypes,omitempty"`
	ExcludedInstanceTypes []string `json:"excludedInstanceTypes,omitempty"`
	MaxHourlyCost         string   `json:"maxHourlyCost,omitempty"`
	CapacityType          string   `json:"capacityType,omitempty"`
}

type PolicyRef struct {
	Name string `json:"name,omitempty"`
}

// The status this reactor writes: which generation it saw, where the
// workload goes, and two conditions.
type GpuWorkloadStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Placement          *Placement         `json:"placement,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type Placement struct {
	Tier             string `json:"tier,omitempty"`
	InstanceType     string `json:"instanceType,omitempty"`
	AcceleratorCount int    `json:"acceleratorCount,omitempty"`
}

// Deep copies, as controller-gen would write them.

func (in *GpuWorkload) DeepCopyInto(out *GpuWorkload) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

func (in *GpuWorkload) DeepCopy() *GpuWorkload {
	if in == nil {
		return nil
	}
	out := new(GpuWorkload)
	in.DeepCopyInto(out)
	return out
}

func (in *GpuWorkload) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

func (in *GpuWorkloadList) DeepCopyInto(out *GpuWorkloadList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]GpuWorkload, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

func (in *GpuWorkloadList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(GpuWorkloadList)
	in.DeepCopyInto(out)
	return out
}

func (in *GpuWorkloadSpec) DeepCopyInto(out *GpuWorkloadSpec) {
	*out = *in
	out.Containers = copyStrings(in.Containers)
	if in.Workload.LatencyTargetMs != nil {
		v := *in.Workload.LatencyTargetMs
		out.Workload.LatencyTargetMs = &v
	}
	if in.Constraints != nil {
		c := *in.Constraints
		c.Tiers = copyStrings(in.Constraints.Tiers)
		c.InstanceTypes = copyStrings(in.Constraints.InstanceTypes)
		c.ExcludedInstanceTypes = copyStrings(in.Constraints.ExcludedInstanceTypes)
		out.Constraints = &c
	}
	if in.PolicyRef != nil {
		p := *in.PolicyRef
		out.PolicyRef = &p
	}
}

func (in *GpuWorkloadStatus) DeepCopyInto(out *GpuWorkloadStatus) {
	*out = *in
	if in.Placement != nil {
		p := *in.Placement
		out.Placement = &p
	}
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

func copyStrings(in []string) []string {
	if in == nil {
		return nil
	}
	return append([]string(nil), in...)
}

func (in *GpuWorkloadStatus) DeepCopy() *GpuWorkloadStatus {
	if in == nil {
		return nil
	}
	out := new(GpuWorkloadStatus)
	in.DeepCopyInto(out)
	return out
}
