package main

// What the generator reads from config/catalog.yaml and config/sim/*.yaml,
// and the few facts about EC2 instance types that the catalog does not
// carry (ENI-limited pod counts, GPU compute capability, NeuronCores per
// device), each with its source.

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"
)

type catalog struct {
	Region       string        `json:"region"`
	Accelerators []accelerator `json:"accelerators"`
	Instances    []instance    `json:"instances"`

	accelByName map[string]*accelerator
	instByType  map[string]*instance
}

type accelerator struct {
	Name          string  `json:"name"`
	Vendor        string  `json:"vendor"`
	MemoryGiB     float64 `json:"memoryGiB"`
	EC2MemoryMiB  int64   `json:"ec2MemoryMiB"`
	KarpenterName string  `json:"karpenterName"`
	GPUProduct    string  `json:"gpuProduct"`
	ProductName   string  `json:"productName"`
	// The MIG profiles its GPUs can be cut into (NVIDIA's MIG user guide).
	MIGProfiles []migProfile `json:"migProfiles"`
	Sources     struct {
		Memory string `json:"memory"`
	} `json:"sources"`
}

type migProfile struct {
	Name            string `json:"name"`
	MemoryEighths   int    `json:"memoryEighths"`
	ComputeSevenths int    `json:"computeSevenths"`
	PerGPU          int    `json:"perGpu"`
}

type instance struct {
	Type             string  `json:"type"`
	Tier             string  `json:"tier"` // NVIDIA, Trainium, Inferentia, CPU
	Accelerator      string  `json:"accelerator"`
	AcceleratorCount int     `json:"acceleratorCount"`
	VCPUs            int     `json:"vcpus"`
	MemoryGiB        float64 `json:"memoryGiB"`
	OnDemand         float64 `json:"onDemand"` // USD per hour
	Spot             float64 `json:"spot"`     // 0: no spot offering
	// The Elastic Fabric Adapters its nodes advertise (the EFA device
	// plugin's vpc.amazonaws.com/efa); nil: none.
	Efa *struct {
		Interfaces int `json:"interfaces"`
	} `json:"efa"`
}

func loadCatalog(path string) (*catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c catalog
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.accelByName = map[string]*accelerator{}
	for i := range c.Accelerators {
		c.accelByName[c.Accelerators[i].Name] = &c.Accelerators[i]
	}
	c.instByType = map[string]*instance{}
	for i := range c.Instances {
		in := &c.Instances[i]
		if in.Accelerator != "" && c.accelByName[in.Accelerator] == nil {
			return nil, fmt.Errorf("%s: %s names unknown accelerator %q", path, in.Type, in.Accelerator)
		}
		c.instByType[in.Type] = in
	}
	if len(c.Instances) == 0 {
		return nil, fmt.Errorf("%s: no instances", path)
	}
	return &c, nil
}

func (c *catalog) accel(in *instance) *accelerator { return c.accelByName[in.Accelerator] }

func isNVIDIA(in *instance) bool { return in.Tier == "NVIDIA" }
func isNeuron(in *instance) bool { return in.Tier == "Trainium" || in.Tier == "Inferentia" }

// ec2MiBRe finds the EC2 API figure the catalog records in each GPU's
// sources.memory note ("EC2 GpuInfo 22888 MiB per GPU ..."), for catalogs
// without ec2MemoryMiB.
var ec2MiBRe = regexp.MustCompile(`EC2 GpuInfo (\d+) MiB`)

// gpuMemoryMiB is the per-GPU memory as EC2 DescribeInstanceTypes reports
// it (GpuInfo.Gpus[].MemoryInfo.SizeInMiB), which is what Karpenter's and
// Auto Mode's instance-gpu-memory label carry: the catalog's ec2MemoryMiB,
// the field the operator selects on. memoryGiB is the memory a workload
// can use (the lower of EC2's and nvidia-smi's figure: T4 15 GiB against
// EC2's 16384 MiB), so it cannot stand in for the label; it may only be
// lower than EC2's figure, never higher.
func gpuMemoryMiB(a *accelerator) (int64, error) {
	mib := a.EC2MemoryMiB
	if m := ec2MiBRe.FindStringSubmatch(a.Sources.Memory); m != nil {
		note, _ := strconv.ParseInt(m[1], 10, 64)
		if mib != 0 && mib != note {
			return 0, fmt.Errorf("catalog accelerator %s: ec2MemoryMiB %d disagrees with its source note (%d MiB)",
				a.Name, mib, note)
		}
		mib = note
	}
	if mib == 0 {
		return int64(math.Round(a.MemoryGiB * 1024)), nil
	}
	if a.MemoryGiB > float64(mib)/1024+0.01 {
		return 0, fmt.Errorf("catalog accelerator %s: memoryGiB %v is more than EC2's %d MiB",
			a.Name, a.MemoryGiB, mib)
	}
	return mib, nil
}

// nvidiaCompute is each catalog NVIDIA accelerator's CUDA compute capability
// (NVIDIA's CUDA GPUs table, developer.nvidia.com/cuda-gpus). GPU Feature
// Discovery derives nvidia.com/gpu.compute.major/minor from it and
// nvidia.com/gpu.family by getArchFamily() in NVIDIA/k8s-device-plugin
// internal/lm/resource.go: 7.0-7.4 volta, 7.5 turing, 8.0-8.8 ampere,
// 8.9 ada-lovelace, 9 hopper. Blackwell (10.0) is "blackwell" in releases
// that know it; older ones label it "undefined".
var nvidiaCompute = map[string][2]int{
	"T4":        {7, 5},
	"V100":      {7, 0},
	"V100-32GB": {7, 0},
	"A10G":      {8, 6},
	"A100-40GB": {8, 0},
	"A100-80GB": {8, 0},
	"L4":        {8, 9},
	"L40S":      {8, 9},
	"H100":      {9, 0},
	"H200":      {9, 0},
	"B200":      {10, 0},
}

func gpuFamily(major, minor int) string {
	switch {
	case major == 7 && minor < 5:
		return "volta"
	case major == 7:
		return "turing"
	case major == 8 && minor < 9:
		return "ampere"
	case major == 8:
		return "ada-lovelace"
	case major == 9:
		return "hopper"
	case major == 10:
		return "blackwell"
	}
	return "undefined"
}

// neuronCoresPerDevice is what the Neuron device plugin advertises as
// aws.amazon.com/neuroncore per aws.amazon.com/neuron device: Inferentia2
// and Trainium have 2 NeuronCore-v2 each, Trainium2 has 8 physical
// NeuronCore-v3 grouped by the default LNC=2 into 4 logical cores,
// Inferentia (inf1) 4 NeuronCore-v1 (Neuron docs, inferentia2.html,
// trainium.html, trainium2_arch.html, inferentia.html; see
// shared/research/aws-reference-catalog.md §5).
var neuronCoresPerDevice = map[string]int{
	"Inferentia":  4,
	"Inferentia2": 2,
	"Trainium":    2,
	"Trainium2":   4,
}

// eniMaxPods is "# of ENI * (# of IPv4 per ENI - 1) + 2" per instance type,
// as the EKS AMI ships it in awslabs/amazon-eks-ami
// nodeadm/internal/kubelet/eni-max-pods.txt
// (@264120506f12b7fb88ecde54418cef140b1e5194), computed there from the EC2
// API. The catalog has no ENI figures; a catalog type missing here is an
// error, not a guess.
var eniMaxPods = map[string]int{
	"c5.xlarge": 58, "c5.2xlarge": 58, "c5.4xlarge": 234, "c5.9xlarge": 234,
	"c7i.xlarge": 58, "c7i.2xlarge": 58, "c7i.4xlarge": 234, "c7i.8xlarge": 234,
	"g4dn.xlarge": 29, "g4dn.2xlarge": 29, "g4dn.4xlarge": 29, "g4dn.8xlarge": 58,
	"g4dn.12xlarge": 234, "g4dn.16xlarge": 58, "g4dn.metal": 737,
	"g5.xlarge": 58, "g5.2xlarge": 58, "g5.4xlarge": 234, "g5.8xlarge": 234,
	"g5.12xlarge": 737, "g5.16xlarge": 234, "g5.24xlarge": 737, "g5.48xlarge": 345,
	"g6.xlarge": 58, "g6.2xlarge": 58, "g6.4xlarge": 234, "g6.8xlarge": 234,
	"g6.12xlarge": 234, "g6.16xlarge": 737, "g6.24xlarge": 737, "g6.48xlarge": 737,
	"g6e.xlarge": 58, "g6e.2xlarge": 58, "g6e.4xlarge": 234, "g6e.8xlarge": 234,
	"g6e.12xlarge": 292, "g6e.16xlarge": 737, "g6e.24xlarge": 492, "g6e.48xlarge": 492,
	"inf2.xlarge": 58, "inf2.8xlarge": 234, "inf2.24xlarge": 737, "inf2.48xlarge": 737,
	"m5.large": 29, "m5.xlarge": 58, "m5.2xlarge": 58, "m5.4xlarge": 234, "m5.8xlarge": 234,
	"m7i.xlarge": 58, "m7i.2xlarge": 58, "m7i.4xlarge": 234, "m7i.8xlarge": 234,
	"p3.2xlarge": 58, "p3.8xlarge": 234, "p3.16xlarge": 234, "p3dn.24xlarge": 737,
	"p4d.24xlarge": 737, "p4de.24xlarge": 737, "p5.4xlarge": 118, "p5.48xlarge": 100,
	"p5e.48xlarge": 100, "p5en.48xlarge": 198, "p6-b200.48xlarge": 198,
	"r5.xlarge": 58, "r5.2xlarge": 58, "r5.4xlarge": 234, "r5.8xlarge": 234,
	"r7i.xlarge": 58, "r7i.2xlarge": 58, "r7i.4xlarge": 234, "r7i.8xlarge": 234,
	"trn1.2xlarge": 58, "trn1.32xlarge": 247, "trn1n.32xlarge": 247, "trn2.48xlarge": 100,
}

// The pool file: see config/sim/default.yaml for the annotated format.
type poolFile struct {
	Region string `json:"region"`
	Pools  []pool `json:"pools"`
}

type pool struct {
	Name          string   `json:"name"`
	InstanceType  string   `json:"instanceType"`
	InstanceTypes []string `json:"instanceTypes"` // ["*"] = every catalog type
	Nodes         int      `json:"nodes"`
	Provisioner   string   `json:"provisioner"`  // managedNodeGroup | karpenter | autoMode
	CapacityType  string   `json:"capacityType"` // onDemand | spot | any (NodePools: both) | reserved
	// capacityType reserved: the capacity reservation its nodes run in.
	Reservation         *reservation `json:"reservation"`
	Zones               []string     `json:"zones"`
	GPUFeatureDiscovery bool         `json:"gpuFeatureDiscovery"`
	Taints              *[]taint     `json:"taints"` // absent: the tier's taint; [] none
	DiskGiB             int          `json:"diskGiB"`
	// NodePool spec.limits (karpenter and autoMode pools): resource name to
	// quantity. Absent: what the pool's own nodes add up to.
	Limits map[string]string `json:"limits"`
	// MIG instances per GPU by profile, as NVIDIA's MIG manager cuts every
	// GPU of the node and the device plugin's mixed strategy advertises
	// them (nvidia.com/mig-<profile>); the nodes then have no whole
	// nvidia.com/gpu. Only nodes the file creates are cut: a node
	// Karpenter launches has whole GPUs.
	MIG map[string]int `json:"mig"`
	// The device plugin's sharing.timeSlicing with renameByDefault: each
	// GPU advertised as this many nvidia.com/gpu.shared replicas.
	TimeSlicing *timeSlicing `json:"timeSlicing"`
	// NVIDIA's DRA driver publishes the nodes' GPUs (or their MIG devices)
	// in ResourceSlices instead of the device plugin (dra.go).
	DRA bool `json:"dra"`
}

type timeSlicing struct {
	Replicas int `json:"replicas"`
}

// A capacity reservation as Karpenter's AWS provider labels the nodes it
// launches into one (karpenter.k8s.aws/capacity-reservation-id, -type and
// -interruptible), and EKS Auto Mode (the same under eks.amazonaws.com/).
type reservation struct {
	ID   string `json:"id"`   // cr-...
	Type string `json:"type"` // default | capacity-block
	// An interruptible On-Demand Capacity Reservation: its owner may take
	// the capacity back.
	Interruptible bool `json:"interruptible"`
	// When it ends (RFC 3339), as EC2 says and Karpenter's EC2NodeClass
	// status copies; empty: not stated.
	EndTime string `json:"endTime"`
}

type taint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

const (
	managedNodeGroup = "managedNodeGroup"
	karpenterPool    = "karpenter"
	autoMode         = "autoMode"
)

func loadPools(path string, c *catalog) (*poolFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f poolFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Region == "" {
		f.Region = c.Region
	}
	seen := map[string]bool{}
	for i := range f.Pools {
		p := &f.Pools[i]
		fail := func(format string, a ...any) error {
			return fmt.Errorf("%s: pool %q: %s", path, p.Name, fmt.Sprintf(format, a...))
		}
		if p.Name == "" || seen[p.Name] {
			return nil, fail("every pool needs a unique name")
		}
		seen[p.Name] = true
		if p.InstanceType != "" {
			p.InstanceTypes = append([]string{p.InstanceType}, p.InstanceTypes...)
		}
		if len(p.InstanceTypes) == 1 && p.InstanceTypes[0] == "*" {
			p.InstanceTypes = nil
			for _, in := range c.Instances {
				p.InstanceTypes = append(p.InstanceTypes, in.Type)
			}
		}
		if len(p.InstanceTypes) == 0 {
			return nil, fail("instanceType or instanceTypes is required")
		}
		for _, t := range p.InstanceTypes {
			if c.instByType[t] == nil {
				return nil, fail("instance type %s is not in the catalog", t)
			}
			if _, ok := eniMaxPods[t]; !ok {
				return nil, fail("no ENI max-pods figure for %s (add it from the EKS AMI's eni-max-pods.txt)", t)
			}
		}
		switch p.Provisioner {
		case managedNodeGroup, karpenterPool, autoMode:
		default:
			return nil, fail("provisioner must be managedNodeGroup, karpenter or autoMode, not %q", p.Provisioner)
		}
		switch p.CapacityType {
		case "":
			p.CapacityType = "onDemand"
		case "onDemand", "spot":
		case "any":
			if p.Provisioner == managedNodeGroup {
				return nil, fail("capacityType any is for NodePools; a node group is onDemand or spot")
			}
		case "reserved":
			if err := checkReservation(p); err != nil {
				return nil, fail("%v", err)
			}
		default:
			return nil, fail("capacityType must be onDemand, spot, any or reserved, not %q", p.CapacityType)
		}
		if p.Reservation != nil && p.CapacityType != "reserved" {
			return nil, fail("reservation is for capacityType reserved")
		}
		if err := checkMIG(p, c); err != nil {
			return nil, fail("%v", err)
		}
		if p.DRA {
			if p.TimeSlicing != nil {
				return nil, fail("dra: NVIDIA's DRA driver time-slices behind an alpha gate; not simulated")
			}
			for _, t := range p.InstanceTypes {
				in := c.instByType[t]
				if !isNeuron(in) && (!isNVIDIA(in) || c.accel(in).ProductName == "") {
					return nil, fail("dra: %s has neither Neuron devices nor an NVIDIA GPU with a productName in the catalog", t)
				}
			}
		}
		if t := p.TimeSlicing; t != nil {
			if t.Replicas < 2 {
				return nil, fail("timeSlicing.replicas must be 2 or more")
			}
			if len(p.MIG) > 0 {
				return nil, fail("a pool's GPUs are cut by MIG or time-sliced, not both")
			}
			for _, t := range p.InstanceTypes {
				if !isNVIDIA(c.instByType[t]) {
					return nil, fail("timeSlicing: %s has no NVIDIA GPU", t)
				}
			}
		}
		if err := parseLimits(p); err != nil {
			return nil, fail("%v", err)
		}
		if p.Limits != nil && p.Provisioner == managedNodeGroup {
			return nil, fail("limits are a NodePool's; a node group has none")
		}
		if p.Nodes < 0 {
			return nil, fail("nodes must not be negative")
		}
		if len(p.Zones) == 0 {
			p.Zones = []string{f.Region + "a", f.Region + "b", f.Region + "c"}
		}
		if p.DiskGiB == 0 {
			// The root volume each way of making nodes gives by default: a
			// managed node group's diskSize defaults to 20 GiB, Karpenter's
			// EC2NodeClass gives AL2023 a 20 GiB root volume, and an Auto Mode
			// NodeClass's ephemeralStorage defaults to 80 GiB.
			p.DiskGiB = map[string]int{managedNodeGroup: 20, karpenterPool: 20, autoMode: 80}[p.Provisioner]
		}
		if p.Taints != nil {
			for _, t := range *p.Taints {
				if t.Key == "" || (t.Effect != "NoSchedule" && t.Effect != "PreferNoSchedule" && t.Effect != "NoExecute") {
					return nil, fail("taint %+v needs a key and an effect NoSchedule, PreferNoSchedule or NoExecute", t)
				}
			}
		}
	}
	return &f, nil
}

// checkMIG: a layout the MIG user guide allows on every type of the pool:
// profiles the GPU has, no more instances than it holds, and within one
// GPU's 7 compute and 8 memory slices.
func checkMIG(p *pool, c *catalog) error {
	if len(p.MIG) == 0 {
		return nil
	}
	for _, t := range p.InstanceTypes {
		in := c.instByType[t]
		accel := c.accel(in)
		if accel == nil || len(accel.MIGProfiles) == 0 {
			return fmt.Errorf("mig: %s has no MIG-capable GPU", t)
		}
		compute, memory := 0, 0
		for name, count := range p.MIG {
			profile := accel.migProfile(name)
			if profile == nil {
				return fmt.Errorf("mig: %s has no MIG profile %s", accel.Name, name)
			}
			if count < 1 || count > profile.PerGPU {
				return fmt.Errorf("mig: %d instances of %s; one %s holds 1 to %d", count, name, accel.Name, profile.PerGPU)
			}
			compute += count * profile.ComputeSevenths
			memory += count * profile.MemoryEighths
		}
		if compute > 7 || memory > 8 {
			return fmt.Errorf("mig: the layout takes %d/7 of the SMs and %d/8 of the memory of one %s", compute, memory, accel.Name)
		}
	}
	return nil
}

func (a *accelerator) migProfile(name string) *migProfile {
	for i := range a.MIGProfiles {
		if a.MIGProfiles[i].Name == name {
			return &a.MIGProfiles[i]
		}
	}
	return nil
}

var reservationID = regexp.MustCompile(`^cr-[0-9a-z]+$`)

// checkReservation: a reserved pool names its reservation, as Karpenter's
// EC2NodeClass status does (id ^cr-[0-9a-z]+$, type default or
// capacity-block); a managed node group runs reserved only on a Capacity
// Block (eks.amazonaws.com/capacityType CAPACITY_BLOCK); only an
// On-Demand Capacity Reservation (default) is interruptible.
func checkReservation(p *pool) error {
	r := p.Reservation
	if r == nil {
		return fmt.Errorf("capacityType reserved needs reservation: {id: cr-..., type: default | capacity-block}")
	}
	if !reservationID.MatchString(r.ID) {
		return fmt.Errorf("reservation.id %q is not a capacity reservation id (cr-...)", r.ID)
	}
	if r.Type != "default" && r.Type != "capacity-block" {
		return fmt.Errorf("reservation.type must be default or capacity-block, not %q", r.Type)
	}
	if p.Provisioner == managedNodeGroup && r.Type != "capacity-block" {
		return fmt.Errorf("a node group runs reserved only on a Capacity Block (reservation.type capacity-block)")
	}
	if r.Interruptible && r.Type != "default" {
		return fmt.Errorf("reservation.interruptible is for an On-Demand Capacity Reservation (type default)")
	}
	if r.EndTime != "" {
		if _, err := time.Parse(time.RFC3339, r.EndTime); err != nil {
			return fmt.Errorf("reservation.endTime %q is not an RFC 3339 time", r.EndTime)
		}
		if p.Provisioner != karpenterPool {
			return fmt.Errorf("reservation.endTime is stated by Karpenter's EC2NodeClass: a karpenter pool's")
		}
	}
	return nil
}
