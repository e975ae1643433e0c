package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A reserved node is labelled as the provisioner that made it labels it:
// Karpenter's AWS provider under karpenter.k8s.aws/, EKS Auto Mode under
// eks.amazonaws.com/, each with the reservation's id, type and whether its
// owner may take it back.
func TestReservedNodesCarryTheirProvisionersReservationLabels(t *testing.T) {
	c := testCatalog(t)
	path := filepath.Join(t.TempDir(), "pools.yaml")
	os.WriteFile(path, []byte(`pools:
  - name: karpenter-odcr
    instanceType: g6.xlarge
    nodes: 1
    provisioner: karpenter
    capacityType: reserved
    reservation: {id: cr-0aaa, type: default, interruptible: true}
  - name: auto-block
    instanceType: g6.xlarge
    nodes: 1
    provisioner: autoMode
    capacityType: reserved
    reservation: {id: cr-0bbb, type: capacity-block}
`), 0o644)
	file, err := loadPools(path, c)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := (&builder{cat: c, file: file, kubeletVersion: "v1.36.3"}).build()
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"karpenter.sh/capacity-type": "reserved",
			"karpenter.k8s.aws/capacity-reservation-id":            "cr-0aaa",
			"karpenter.k8s.aws/capacity-reservation-type":          "default",
			"karpenter.k8s.aws/capacity-reservation-interruptible": "true"},
		{"karpenter.sh/capacity-type": "reserved",
			"eks.amazonaws.com/capacity-reservation-id":            "cr-0bbb",
			"eks.amazonaws.com/capacity-reservation-type":          "capacity-block",
			"eks.amazonaws.com/capacity-reservation-interruptible": "false"},
	}
	for i, labels := range want {
		got := gen.nodes[i].Labels
		for key, value := range labels {
			if got[key] != value {
				t.Errorf("node %d: %s = %q, want %q", i, key, got[key], value)
			}
		}
	}
	if _, ok := gen.nodes[1].Labels["karpenter.k8s.aws/capacity-reservation-id"]; ok {
		t.Errorf("an Auto Mode node carries Karpenter's AWS provider's reservation label")
	}
}

// Only an On-Demand Capacity Reservation is interruptible.
func TestAnInterruptibleCapacityBlockIsRefused(t *testing.T) {
	p := &pool{Provisioner: karpenterPool, CapacityType: "reserved",
		Reservation: &reservation{ID: "cr-0ccc", Type: "capacity-block", Interruptible: true}}
	if err := checkReservation(p); err == nil {
		t.Fatal("an interruptible Capacity Block was accepted")
	}
}

// A node of a type with EFA advertises every interface as the EFA device
// plugin does, and so does Karpenter's description of the type; a type
// without EFA advertises none.
func TestNodesAdvertiseTheirTypesEFA(t *testing.T) {
	c := testCatalog(t)
	path := filepath.Join(t.TempDir(), "pools.yaml")
	os.WriteFile(path, []byte(`pools:
  - name: trainium
    instanceType: trn1.32xlarge
    nodes: 1
    provisioner: managedNodeGroup
  - name: l4
    instanceType: g6.xlarge
    nodes: 1
    provisioner: managedNodeGroup
`), 0o644)
	file, err := loadPools(path, c)
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{cat: c, file: file, kubeletVersion: "v1.36.3"}
	gen, err := b.build()
	if err != nil {
		t.Fatal(err)
	}
	efa := func(i int) string {
		q := gen.nodes[i].Status.Allocatable["vpc.amazonaws.com/efa"]
		return q.String()
	}
	if got := efa(0); got != "8" {
		t.Errorf("trn1.32xlarge node: vpc.amazonaws.com/efa = %s, want 8", got)
	}
	if got := efa(1); got != "0" {
		t.Errorf("g6.xlarge node: vpc.amazonaws.com/efa = %s, want none", got)
	}
	types, err := b.instanceTypes()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range types {
		if it.Name == "trn1.32xlarge" {
			found = true
			if it.Resources["vpc.amazonaws.com/efa"] != "8" {
				t.Errorf("Karpenter's trn1.32xlarge: vpc.amazonaws.com/efa = %q, want 8", it.Resources["vpc.amazonaws.com/efa"])
			}
		}
	}
	if !found {
		t.Errorf("no trn1.32xlarge among Karpenter's instance types")
	}
}
