package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testCatalog(t *testing.T) *catalog {
	t.Helper()
	c, err := loadCatalog(filepath.Join("..", "..", "..", "config", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPolicyPricesReplaceTheCatalogs(t *testing.T) {
	c := testCatalog(t)
	spotBefore := c.instByType["g6.xlarge"].Spot
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	os.WriteFile(policy, []byte(`apiVersion: gpuplacement.io/v1alpha1
kind: PlacementPolicy
metadata: {name: default}
spec:
  prices:
    - instanceType: g6.xlarge
      onDemand: "1.25"
    - instanceType: inf2.xlarge
      onDemand: "0.5"
      spot: "0.2"
`), 0o644)
	if err := applyPolicyPrices(c, policy); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		instanceType   string
		onDemand, spot float64
	}{{"g6.xlarge", 1.25, spotBefore}, {"inf2.xlarge", 0.5, 0.2}} {
		in := c.instByType[want.instanceType]
		if in.OnDemand != want.onDemand || in.Spot != want.spot {
			t.Errorf("%s: on-demand %v, spot %v; want %v, %v", want.instanceType, in.OnDemand, in.Spot,
				want.onDemand, want.spot)
		}
	}
}

func TestPolicyPricesRefuseWhatTheyCannotApply(t *testing.T) {
	for _, c := range []struct {
		prices []priceOverride
		field  string
	}{
		{[]priceOverride{{InstanceType: "g9.huge", OnDemand: "1"}}, "spec.prices[0].instanceType"},
		{[]priceOverride{{InstanceType: "g6.xlarge"}}, "spec.prices[0]: set onDemand"},
		{[]priceOverride{{InstanceType: "g6.xlarge", OnDemand: "1"}, {InstanceType: "g5.xlarge", Spot: "cheap"}},
			"spec.prices[1].spot"},
	} {
		err := applyPrices(testCatalog(t), c.prices, "policy.yaml")
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%v: got %v, want an error naming %s", c.prices, err, c.field)
		}
	}
}
