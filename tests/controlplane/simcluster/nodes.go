package main

// Builds the Node objects and Karpenter NodePools a pool file describes,
// with the labels, taints, capacity and allocatable that EKS, Karpenter,
// EKS Auto Mode, GPU Feature Discovery and the NVIDIA and Neuron device
// plugins put on real nodes. Where each comes from is noted next to it and
// in config/sim/default.yaml.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwokapis "sigs.k8s.io/karpenter/kwok/apis"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Label keys of the AWS Karpenter provider (aws/karpenter-provider-aws
// pkg/apis/v1/labels.go: LabelDomain "karpenter.k8s.aws" + "/instance-...")
// and their EKS Auto Mode twins (eks.amazonaws.com/instance-..., EKS user
// guide "Create a Node Pool for EKS Auto Mode", supported labels table).
const (
	karpenterAWSDomain = "karpenter.k8s.aws"
	autoModeDomain     = "eks.amazonaws.com"
	// The annotation kwok is started with --manage-nodes-with-annotation-selector
	// for: only nodes carrying it are made Ready by kwok.
	kwokAnnotation = "kwok.x-k8s.io/node"
)

// The instance-type grammar Karpenter's AWS provider parses category and
// generation with (pkg/providers/instancetype/types.go): letters, an
// optional "-<n>tb" (u-6tb1), then the generation digits.
var instanceTypeScheme = regexp.MustCompile(`^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.`)

type shape struct {
	family, size, category, generation string
}

func parseShape(instanceType string) shape {
	family, size, _ := strings.Cut(instanceType, ".")
	s := shape{family: family, size: size}
	if m := instanceTypeScheme.FindStringSubmatch(instanceType); m != nil {
		s.category, s.generation = m[1], m[3]
	}
	return s
}

// arch: Graviton families have a "g" right after the generation (m7g,
// c6gn, r8gd, g5g); every type in today's catalog is x86_64.
var gravitonFamily = regexp.MustCompile(`^[a-z]+[0-9]+g`)

func arch(s shape) string {
	if gravitonFamily.MatchString(s.family) {
		return "arm64"
	}
	return "amd64"
}

type generated struct {
	nodes     []*corev1.Node
	nodePools []*karpv1.NodePool
	// What NVIDIA's or Neuron's DRA driver would publish for the dra pools' nodes.
	slices []*resourcev1.ResourceSlice
	// The karpenter pools' capacity reservations, for the EC2NodeClass's
	// status (ec2nodeclass.go).
	reservations []reservationStatus
}

type builder struct {
	cat            *catalog
	file           *poolFile
	kubeletVersion string
	nodeIndex      int
	// Karpenter itself runs (scripts/controlplane start --karpenter): its
	// NodePools name the kwok provider's NodeClass.
	karpenter bool
}

func (b *builder) build() (*generated, error) {
	out := &generated{}
	for i := range b.file.Pools {
		p := &b.file.Pools[i]
		var poolNodes []*corev1.Node
		for n := 0; n < p.Nodes; n++ {
			in := b.cat.instByType[p.InstanceTypes[n%len(p.InstanceTypes)]]
			// Zones round-robin too, shifted once per pass over the types,
			// so that with 3 zones and 75 types every type still lands in
			// every zone.
			zone := p.Zones[(n+n/len(p.InstanceTypes))%len(p.Zones)]
			node, err := b.node(p, in, zone, n)
			if err != nil {
				return nil, err
			}
			poolNodes = append(poolNodes, node)
			if p.DRA {
				out.slices = append(out.slices, resourceSlice(node.Name, in, b.cat.accel(in), p.MIG))
			}
		}
		out.nodes = append(out.nodes, poolNodes...)
		if r := p.Reservation; r != nil && p.Provisioner == karpenterPool {
			out.reservations = append(out.reservations, reservationStatus{r, p.InstanceTypes[0], p.Zones[0]})
		}
		if p.Provisioner != managedNodeGroup {
			out.nodePools = append(out.nodePools, b.nodePool(p, poolNodes))
		}
	}
	return out, nil
}

// nodeName is the EC2 private DNS name EKS nodes are registered under:
// ip-a-b-c-d.ec2.internal in us-east-1, .<region>.compute.internal elsewhere.
func (b *builder) nodeAddress() (ip, name string) {
	i := b.nodeIndex
	b.nodeIndex++
	ip = fmt.Sprintf("10.0.%d.%d", 16+i/250, 4+i%250)
	domain := b.file.Region + ".compute.internal"
	if b.file.Region == "us-east-1" {
		domain = "ec2.internal"
	}
	return ip, "ip-" + strings.ReplaceAll(ip, ".", "-") + "." + domain
}

func instanceID(pool string, n int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", pool, n)))
	return "i-" + hex.EncodeToString(sum[:])[:17]
}

func (b *builder) node(p *pool, in *instance, zone string, n int) (*corev1.Node, error) {
	ip, name := b.nodeAddress()
	s := parseShape(in.Type)
	cpuArch := arch(s)
	labels := map[string]string{
		// kubelet's own labels.
		corev1.LabelHostname:      name,
		corev1.LabelArchStable:    cpuArch,
		corev1.LabelOSStable:      "linux",
		"beta.kubernetes.io/arch": cpuArch,
		"beta.kubernetes.io/os":   "linux",
		// The AWS cloud controller manager's (and Karpenter's, which sets
		// them up front from the NodeClaim).
		corev1.LabelInstanceTypeStable:      in.Type,
		corev1.LabelInstanceType:            in.Type,
		corev1.LabelTopologyRegion:          b.file.Region,
		corev1.LabelTopologyZone:            zone,
		corev1.LabelFailureDomainBetaRegion: b.file.Region,
		corev1.LabelFailureDomainBetaZone:   zone,
	}
	accel := b.cat.accel(in)

	switch p.Provisioner {
	case managedNodeGroup:
		// EKS user guide, managed node groups: eks.amazonaws.com/nodegroup and
		// eks.amazonaws.com/capacityType (ON_DEMAND | SPOT).
		labels["eks.amazonaws.com/nodegroup"] = p.Name
		labels["eks.amazonaws.com/capacityType"] = map[string]string{"onDemand": "ON_DEMAND", "spot": "SPOT", "reserved": "CAPACITY_BLOCK"}[p.CapacityType]
	case karpenterPool, autoMode:
		// kubernetes-sigs/karpenter pkg/apis/v1/labels.go.
		labels[karpv1.NodePoolLabelKey] = p.Name
		// A pool of both capacity types is pre-created on demand.
		labels[karpv1.CapacityTypeLabelKey] = map[string]string{"onDemand": karpv1.CapacityTypeOnDemand, "spot": karpv1.CapacityTypeSpot, "any": karpv1.CapacityTypeOnDemand, "reserved": karpv1.CapacityTypeReserved}[p.CapacityType]
		labels[karpv1.NodeRegisteredLabelKey] = "true"
		labels[karpv1.NodeInitializedLabelKey] = "true"
		domain := karpenterAWSDomain
		if p.Provisioner == autoMode {
			domain = autoModeDomain
			labels["eks.amazonaws.com/compute-type"] = "auto"
		} else {
			labels[karpenterAWSDomain+"/ec2nodeclass"] = "default"
		}
		if r := p.Reservation; r != nil {
			// Karpenter's AWS provider (pkg/apis/v1/labels.go, v1.14.1) and
			// Auto Mode (EKS user guide, auto-odcr), each under its domain.
			labels[domain+"/capacity-reservation-id"] = r.ID
			labels[domain+"/capacity-reservation-type"] = r.Type
			labels[domain+"/capacity-reservation-interruptible"] = strconv.FormatBool(r.Interruptible)
		}
		described, err := instanceLabels(domain, in, accel, p.Provisioner == karpenterPool)
		if err != nil {
			return nil, err
		}
		maps.Copy(labels, described)
	}

	if isNVIDIA(in) && p.GPUFeatureDiscovery {
		// NVIDIA/k8s-device-plugin docs/gfd_labels.md. gpu.memory is "MB" in
		// that table and NVML's total memory in MiB in the code; NVML reports a
		// little less than EC2's figure on real hardware (the driver reserves
		// some), which we cannot know here, so EC2's is used.
		mib, err := gpuMemoryMiB(accel)
		if err != nil {
			return nil, err
		}
		cc, ok := nvidiaCompute[accel.Name]
		if !ok {
			return nil, fmt.Errorf("no CUDA compute capability known for catalog accelerator %s", accel.Name)
		}
		labels["nvidia.com/gpu.product"] = accel.GPUProduct
		if p.TimeSlicing != nil {
			// GFD appends -SHARED to the product of a time-sliced GPU.
			labels["nvidia.com/gpu.product"] = accel.GPUProduct + "-SHARED"
			labels["nvidia.com/gpu.replicas"] = strconv.Itoa(p.TimeSlicing.Replicas)
			labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
		}
		labels["nvidia.com/gpu.count"] = strconv.Itoa(in.AcceleratorCount)
		labels["nvidia.com/gpu.memory"] = strconv.FormatInt(mib, 10)
		labels["nvidia.com/gpu.family"] = gpuFamily(cc[0], cc[1])
		labels["nvidia.com/gpu.compute.major"] = strconv.Itoa(cc[0])
		labels["nvidia.com/gpu.compute.minor"] = strconv.Itoa(cc[1])
		labels["nvidia.com/gpu.machine"] = in.Type // DMI product name, which is the instance type on EC2
	}

	if len(p.MIG) > 0 {
		// GPU Feature Discovery's labels under the mixed strategy
		// (NVIDIA/k8s-device-plugin docs/gfd_labels.md, "MIG 'mixed'
		// strategy"), and the MIG manager's nvidia.com/mig.config.
		labels["nvidia.com/mig.capable"] = "true"
		labels["nvidia.com/mig.strategy"] = "mixed"
		config := "custom"
		for name := range p.MIG {
			if len(p.MIG) == 1 {
				config = "all-" + name
			}
			profile := accel.migProfile(name)
			labels["nvidia.com/mig-"+name+".count"] = strconv.Itoa(p.MIG[name] * in.AcceleratorCount)
			mib, err := gpuMemoryMiB(accel)
			if err != nil {
				return nil, err
			}
			labels["nvidia.com/mig-"+name+".memory"] = strconv.FormatInt(mib*int64(profile.MemoryEighths)/8, 10)
		}
		labels["nvidia.com/mig.config"] = config
	}

	capacity, allocatable := b.resources(p, in)
	osImage := "Amazon Linux 2023"
	if p.Provisioner == autoMode {
		osImage = "Bottlerocket (EKS Auto, Standard)"
	}
	node := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: labels,
			Annotations: map[string]string{
				kwokAnnotation: "fake",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			ProviderID: "aws:///" + zone + "/" + instanceID(p.Name, n),
			Taints:     poolTaints(p, in),
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: allocatable,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip},
				{Type: corev1.NodeHostName, Address: name},
				{Type: corev1.NodeInternalDNS, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:            cpuArch,
				OperatingSystem:         "linux",
				OSImage:                 osImage,
				KubeletVersion:          b.kubeletVersion,
				KubeProxyVersion:        "",
				ContainerRuntimeVersion: "containerd://simulated",
			},
		},
	}
	return node, nil
}

// instanceLabels are the instance-* labels Karpenter's AWS provider (domain
// karpenter.k8s.aws) or Auto Mode (eks.amazonaws.com) puts on a node of
// this type. Auto Mode's supported-label list has no
// instance-accelerator-* labels; Neuron nodes there are told apart by
// family only (withAccelerators false).
func instanceLabels(domain string, in *instance, accel *accelerator, withAccelerators bool) (map[string]string, error) {
	s := parseShape(in.Type)
	labels := map[string]string{
		domain + "/instance-category":   s.category,
		domain + "/instance-family":     s.family,
		domain + "/instance-generation": s.generation,
		domain + "/instance-size":       s.size,
		domain + "/instance-cpu":        strconv.Itoa(in.VCPUs),
		domain + "/instance-memory":     strconv.FormatInt(int64(in.MemoryGiB*1024), 10),
	}
	if isNVIDIA(in) {
		mib, err := gpuMemoryMiB(accel)
		if err != nil {
			return nil, err
		}
		labels[domain+"/instance-gpu-name"] = accel.KarpenterName
		labels[domain+"/instance-gpu-manufacturer"] = "nvidia"
		labels[domain+"/instance-gpu-count"] = strconv.Itoa(in.AcceleratorCount)
		labels[domain+"/instance-gpu-memory"] = strconv.FormatInt(mib, 10)
	}
	if isNeuron(in) && withAccelerators {
		labels[domain+"/instance-accelerator-name"] = accel.KarpenterName
		labels[domain+"/instance-accelerator-manufacturer"] = "aws"
		labels[domain+"/instance-accelerator-count"] = strconv.Itoa(in.AcceleratorCount)
	}
	return labels, nil
}

// poolTaints: neither EKS, Karpenter nor Auto Mode taints accelerated nodes
// by themselves; the taint is whatever the node group or NodePool declares
// (EKS user guide node-taints-managed-node-groups, Karpenter NodePool
// spec.template.spec.taints). A pool without a taints field gets the one
// docs/operating/nodes.md asks operators to put on each tier.
func poolTaints(p *pool, in *instance) []corev1.Taint {
	var ts []taint
	switch {
	case p.Taints != nil:
		ts = *p.Taints
	case isNVIDIA(in):
		ts = []taint{{Key: "nvidia.com/gpu", Value: "true", Effect: "NoSchedule"}}
	case isNeuron(in):
		ts = []taint{{Key: "aws.amazon.com/neuron", Value: "true", Effect: "NoSchedule"}}
	}
	var out []corev1.Taint
	for _, t := range ts {
		out = append(out, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	return out
}

// maxPods: the EKS AMI gives kubelet the ENI-limited figure; a managed node
// group caps it at 110 below 30 vCPUs and 250 above ("Managed node groups
// enforces a maximum number on the value of maxPods", EKS user guide
// cni-increase-ip-addresses). Karpenter's default is the ENI-limited figure
// too; Auto Mode is assumed to do the same (not documented).
func maxPods(p *pool, in *instance) int {
	pods := eniMaxPods[in.Type]
	if p.Provisioner == managedNodeGroup {
		limit := 250
		if in.VCPUs < 30 {
			limit = 110
		}
		pods = min(pods, limit)
	}
	return pods
}

// resources computes capacity and allocatable the way kubelet on the EKS
// AMI ends up with them: allocatable = capacity - kube-reserved -
// system-reserved - eviction-hard, where nodeadm
// (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go) sets
// kube-reserved cpu by getCPUMillicoresToReserve (6% of the first core, 1%
// of the second, 0.5% of cores 3-4, 0.25% above), memory 11 MiB * maxPods
// + 255 MiB, ephemeral-storage 1 GiB, no system-reserved, and eviction-hard
// memory.available 100Mi, nodefs.available 10%.
//
// Memory capacity is what the hypervisor leaves of the nominal size;
// Karpenter models it as nominal - 7.5% (VM_MEMORY_OVERHEAD_PERCENT default
// 0.075), and so do we. Ephemeral-storage capacity is the root volume.
func (b *builder) resources(p *pool, in *instance) (corev1.ResourceList, corev1.ResourceList) {
	pods := int64(maxPods(p, in))
	cpuMilli := int64(in.VCPUs) * 1000
	memMiB := int64(in.MemoryGiB * 1024)
	memCapMiB := memMiB - (memMiB*75+999)/1000
	diskBytes := int64(p.DiskGiB) << 30

	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memCapMiB<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes, resource.BinarySI),
		"hugepages-1Gi":                 *resource.NewQuantity(0, resource.DecimalSI),
		"hugepages-2Mi":                 *resource.NewQuantity(0, resource.DecimalSI),
	}
	reservedMemMiB := 11*pods + 255 + 100
	reservedDisk := int64(1<<30) + diskBytes/10
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewMilliQuantity(cpuMilli-cpuReserveMilli(cpuMilli), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity((memCapMiB-reservedMemMiB)<<20, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(diskBytes-reservedDisk, resource.BinarySI),
		"hugepages-1Gi":                 *resource.NewQuantity(0, resource.DecimalSI),
		"hugepages-2Mi":                 *resource.NewQuantity(0, resource.DecimalSI),
	}
	// Device plugins advertise devices as capacity = allocatable.
	if in.AcceleratorCount > 0 {
		count := int64(in.AcceleratorCount)
		switch {
		case p.DRA:
			// The DRA driver publishes them (dra.go): no extended resource.
		case isNVIDIA(in) && p.TimeSlicing != nil:
			// renameByDefault: the replicas under their own name, no whole GPU.
			capacity["nvidia.com/gpu.shared"] = *resource.NewQuantity(count*int64(p.TimeSlicing.Replicas), resource.DecimalSI)
		case isNVIDIA(in) && len(p.MIG) > 0:
			// Every GPU is cut: one resource per profile, none whole.
			for name, perGPU := range p.MIG {
				capacity[corev1.ResourceName("nvidia.com/mig-"+name)] = *resource.NewQuantity(count*int64(perGPU), resource.DecimalSI)
			}
		case isNVIDIA(in):
			capacity["nvidia.com/gpu"] = *resource.NewQuantity(count, resource.DecimalSI)
		case isNeuron(in):
			// Neuron device plugin: aws.amazon.com/neuron (whole devices) and
			// aws.amazon.com/neuroncore (cores).
			cores := int64(neuronCoresPerDevice[b.cat.accel(in).Name])
			capacity["aws.amazon.com/neuron"] = *resource.NewQuantity(count, resource.DecimalSI)
			capacity["aws.amazon.com/neuroncore"] = *resource.NewQuantity(count*cores, resource.DecimalSI)
		}
		// The EFA device plugin: every interface the type takes.
		if in.Efa != nil && in.Efa.Interfaces > 0 {
			capacity["vpc.amazonaws.com/efa"] = *resource.NewQuantity(int64(in.Efa.Interfaces), resource.DecimalSI)
		}
		for r, q := range capacity {
			if strings.Contains(string(r), "/") {
				allocatable[r] = q.DeepCopy() // extended resources: the devices
			}
		}
	}
	return capacity, allocatable
}

func cpuReserveMilli(total int64) int64 {
	ranges := []int64{0, 1000, 2000, 4000, total}
	percentTimes100 := []int64{600, 100, 50, 25}
	var reserved int64
	for i, pct := range percentTimes100 {
		start, end := ranges[i], ranges[i+1]
		if start >= total {
			break
		}
		if end > total || i == len(percentTimes100)-1 {
			end = total
		}
		reserved += (end - start) * pct / 10000
	}
	return reserved
}

// nodePool is the karpenter.sh/v1 NodePool a real cluster would have
// created these nodes from: requirements on instance type, capacity type,
// zone, arch and OS, the pool's taints, and limits equal to what its nodes
// add up to, so it could not launch more than the simulated nodes.
func (b *builder) nodePool(p *pool, nodes []*corev1.Node) *karpv1.NodePool {
	limits := corev1.ResourceList{}
	arches := map[string]bool{}
	for _, n := range nodes {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nvidia.com/gpu", "aws.amazon.com/neuron"} {
			if q, ok := n.Status.Capacity[r]; ok {
				sum := limits[r]
				sum.Add(q)
				limits[r] = sum
			}
		}
		arches[n.Labels[corev1.LabelArchStable]] = true
	}
	archList := []string{}
	for a := range arches {
		archList = append(archList, a)
	}
	if len(archList) == 0 {
		archList = []string{"amd64"}
	}
	capacityTypes := map[string][]string{
		"onDemand": {karpv1.CapacityTypeOnDemand},
		"spot":     {karpv1.CapacityTypeSpot},
		"any":      {karpv1.CapacityTypeOnDemand, karpv1.CapacityTypeSpot},
		"reserved": {karpv1.CapacityTypeReserved},
	}[p.CapacityType]
	req := func(key string, values ...string) karpv1.NodeSelectorRequirementWithMinValues {
		return karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	// A Karpenter EC2NodeClass "default" or Auto Mode's built-in NodeClass
	// "default" (EKS user guide, create-node-pool).
	classRef := &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	if b.karpenter && p.Provisioner == karpenterPool {
		// Karpenter runs (its kwok provider): its own NodeClass kind.
		classRef = &karpv1.NodeClassReference{Group: kwokapis.Group, Kind: "KWOKNodeClass", Name: kwokNodeClassName}
	}
	expire := "720h" // Karpenter's default expireAfter
	if p.Provisioner == autoMode {
		classRef = &karpv1.NodeClassReference{Group: "eks.amazonaws.com", Kind: "NodeClass", Name: "default"}
		expire = "336h" // Auto Mode terminates nodes after 336 hours by default
	}
	var taints []corev1.Taint
	if len(nodes) > 0 {
		taints = nodes[0].Spec.Taints
	} else if len(p.InstanceTypes) > 0 {
		taints = poolTaints(p, b.cat.instByType[p.InstanceTypes[0]])
	}
	return &karpv1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: karpv1.NodePoolSpec{
			Template: karpv1.NodeClaimTemplate{
				Spec: karpv1.NodeClaimTemplateSpec{
					Taints: taints,
					Requirements: []karpv1.NodeSelectorRequirementWithMinValues{
						req(corev1.LabelInstanceTypeStable, p.InstanceTypes...),
						req(karpv1.CapacityTypeLabelKey, capacityTypes...),
						req(corev1.LabelTopologyZone, p.Zones...),
						req(corev1.LabelArchStable, archList...),
						req(corev1.LabelOSStable, "linux"),
					},
					NodeClassRef: classRef,
					ExpireAfter:  karpv1.MustParseNillableDuration(expire),
				},
			},
			Disruption: karpv1.Disruption{
				ConsolidationPolicy: karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				ConsolidateAfter:    karpv1.MustParseNillableDuration("0s"),
				Budgets:             []karpv1.Budget{{Nodes: "10%"}},
			},
			Limits: karpv1.Limits(poolLimits(p, limits)),
		},
	}
}
