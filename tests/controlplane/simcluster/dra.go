package main

// What NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu) publishes
// for a node whose GPUs it serves: one ResourceSlice of driver
// gpu.nvidia.com in a pool named after the node, a device per GPU (type
// "gpu") or, where the MIG manager cut them, per MIG device (type "mig",
// with its profile), carrying the productName NVML reports and the memory;
// and the DeviceClasses gpu.nvidia.com and mig.nvidia.com the driver's Helm
// chart installs. For a Trainium or Inferentia node, what the AWS Neuron DRA
// driver publishes: one ResourceSlice of driver neuron.aws.com, a device per
// Neuron device with its index and the instance type, and the DeviceClass
// neuron.aws.com. The real kube-scheduler allocates claims from these; no
// driver prepares them, which kwok's nodes do not need.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	nvidiaDriver = "gpu.nvidia.com"
	neuronDriver = "neuron.aws.com"
)

func stringAttribute(value string) resourcev1.DeviceAttribute {
	return resourcev1.DeviceAttribute{StringValue: &value}
}

func resourceSlice(node string, in *instance, accel *accelerator, mig map[string]int) *resourcev1.ResourceSlice {
	if isNeuron(in) {
		return neuronSlice(node, in)
	}
	mib, _ := gpuMemoryMiB(accel) // checked when the node was built
	device := func(name, kind string, memoryMiB int64) resourcev1.Device {
		attributes := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":        stringAttribute(kind),
			"productName": stringAttribute(accel.ProductName),
		}
		return resourcev1.Device{
			Name:       name,
			Attributes: attributes,
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
				"memory": {Value: *resource.NewQuantity(memoryMiB<<20, resource.BinarySI)},
			},
		}
	}
	profiles := make([]string, 0, len(mig))
	for name := range mig {
		profiles = append(profiles, name)
	}
	sort.Strings(profiles)
	var devices []resourcev1.Device
	for gpu := 0; gpu < in.AcceleratorCount; gpu++ {
		if len(mig) == 0 {
			devices = append(devices, device(fmt.Sprintf("gpu-%d", gpu), "gpu", mib))
			continue
		}
		for _, name := range profiles {
			profile := accel.migProfile(name)
			for i := 0; i < mig[name]; i++ {
				d := device(fmt.Sprintf("gpu-%d-mig-%s-%d", gpu, strings.ReplaceAll(name, ".", ""), i),
					"mig", mib*int64(profile.MemoryEighths)/8)
				d.Attributes["profile"] = stringAttribute(name)
				devices = append(devices, d)
			}
		}
	}
	return nodeSlice(node, nvidiaDriver, devices)
}

func neuronSlice(node string, in *instance) *resourcev1.ResourceSlice {
	devices := make([]resourcev1.Device, 0, in.AcceleratorCount)
	for i := 0; i < in.AcceleratorCount; i++ {
		index := int64(i)
		devices = append(devices, resourcev1.Device{
			Name: fmt.Sprintf("neurondevice%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"deviceId":     {IntValue: &index},
				"instanceType": stringAttribute(in.Type),
			},
		})
	}
	return nodeSlice(node, neuronDriver, devices)
}

func nodeSlice(node, driver string, devices []resourcev1.Device) *resourcev1.ResourceSlice {
	nodeName := node
	return &resourcev1.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + strings.ReplaceAll(driver, ".", "-")},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: &nodeName,
			Devices:  devices,
		},
	}
}

// deviceClasses: the NVIDIA driver's chart's two, selecting its devices by
// type, and the Neuron driver's one.
func deviceClasses() []*resourcev1.DeviceClass {
	class := func(name, kind string) *resourcev1.DeviceClass {
		return &resourcev1.DeviceClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: fmt.Sprintf("device.driver == '%s' && device.attributes['%s'].type == '%s'", nvidiaDriver, nvidiaDriver, kind),
			}}}},
		}
	}
	neuron := &resourcev1.DeviceClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
		ObjectMeta: metav1.ObjectMeta{Name: neuronDriver},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == '%s'", neuronDriver),
		}}}},
	}
	return []*resourcev1.DeviceClass{class("gpu.nvidia.com", "gpu"), class("mig.nvidia.com", "mig"), neuron}
}

func publishDevices(ctx context.Context, kube kubernetes.Interface, slices []*resourcev1.ResourceSlice) error {
	for _, class := range deviceClasses() {
		if _, err := kube.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating DeviceClass %s: %w", class.Name, err)
		}
	}
	for _, slice := range slices {
		if _, err := kube.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating ResourceSlice %s: %w", slice.Name, err)
		}
	}
	return nil
}
