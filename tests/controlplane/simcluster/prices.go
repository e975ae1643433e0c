package main

// A PlacementPolicy's price overrides (spec.prices) applied to the catalog
// before Karpenter's instance-types file is written, so that the nodes
// Karpenter launches are priced as the operator prices them when a test or
// the demo starts with negotiated rates: the launched-node cost and the
// statuses' claim then compare like for like.

import (
	"fmt"
	"os"
	"strconv"

	"sigs.k8s.io/yaml"
)

type priceOverride struct {
	InstanceType string `json:"instanceType"`
	OnDemand     string `json:"onDemand"`
	Spot         string `json:"spot"`
}

// applyPolicyPrices reads spec.prices of the PlacementPolicy manifest at
// path and writes them over the catalog's prices.
func applyPolicyPrices(c *catalog, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var policy struct {
		Kind string `json:"kind"`
		Spec struct {
			Prices []priceOverride `json:"prices"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &policy); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if policy.Kind != "PlacementPolicy" {
		return fmt.Errorf("%s: kind %q, not a PlacementPolicy", path, policy.Kind)
	}
	return applyPrices(c, policy.Spec.Prices, path)
}

func applyPrices(c *catalog, prices []priceOverride, source string) error {
	for i, override := range prices {
		field := fmt.Sprintf("%s: spec.prices[%d]", source, i)
		in := c.instByType[override.InstanceType]
		if in == nil {
			return fmt.Errorf("%s.instanceType: %q is not in the catalog", field, override.InstanceType)
		}
		if override.OnDemand == "" && override.Spot == "" {
			return fmt.Errorf("%s: set onDemand, spot or both", field)
		}
		for _, price := range []struct {
			name, text string
			into       *float64
		}{{"onDemand", override.OnDemand, &in.OnDemand}, {"spot", override.Spot, &in.Spot}} {
			if price.text == "" {
				continue
			}
			value, err := strconv.ParseFloat(price.text, 64)
			if err != nil || value < 0 {
				return fmt.Errorf("%s.%s: %q is not a price in USD per hour", field, price.name, price.text)
			}
			*price.into = value
		}
	}
	return nil
}
