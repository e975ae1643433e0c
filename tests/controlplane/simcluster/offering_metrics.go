package main

// What Karpenter's AWS provider publishes and its kwok provider does not
// (sigs.k8s.io/karpenter v1.14.1): every offering's price and availability,
// karpenter_cloudprovider_instance_type_offering_price_estimate and
// karpenter_cloudprovider_instance_type_offering_available, labelled by
// instance_type, capacity_type and zone. Served here from the kwok
// provider's own instance-types file, read again on every scrape, so that
// a test changes a price or marks an offering unavailable (as an
// insufficient-capacity error would) by rewriting that file.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

var (
	offeringPrice = prometheus.NewDesc("karpenter_cloudprovider_instance_type_offering_price_estimate",
		"Instance type offering estimated hourly price used when making informed decisions on node cost calculation, based on instance type, capacity type, and zone.",
		[]string{"instance_type", "capacity_type", "zone"}, nil)
	offeringAvailable = prometheus.NewDesc("karpenter_cloudprovider_instance_type_offering_available",
		"Instance type offering availability, based on instance type, capacity type, and zone",
		[]string{"instance_type", "capacity_type", "zone"}, nil)
)

// offeringCollector reads the instance-types file on every Collect.
type offeringCollector struct{ path string }

func (c offeringCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- offeringPrice
	ch <- offeringAvailable
}

func (c offeringCollector) Collect(ch chan<- prometheus.Metric) {
	types, err := readInstanceTypes(c.path)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(offeringPrice, err)
		return
	}
	for _, it := range types {
		for _, offering := range it.Offerings {
			capacityType, zone := requirement(offering, karpv1.CapacityTypeLabelKey), requirement(offering, corev1.LabelTopologyZone)
			available := 0.0
			if offering.Available {
				available = 1
			}
			ch <- prometheus.MustNewConstMetric(offeringPrice, prometheus.GaugeValue, offering.Price, it.Name, capacityType, zone)
			ch <- prometheus.MustNewConstMetric(offeringAvailable, prometheus.GaugeValue, available, it.Name, capacityType, zone)
		}
	}
}

func requirement(offering kwokOffering, key string) string {
	for _, r := range offering.Requirements {
		if r.Key == key && len(r.Values) == 1 {
			return r.Values[0]
		}
	}
	return ""
}

func readInstanceTypes(path string) ([]kwokInstanceType, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var types []kwokInstanceType
	if err := json.Unmarshal(data, &types); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return types, nil
}

// serveOfferingMetrics serves /metrics on addr (port 0: any free one) and
// writes the port it listens on to portFile.
func serveOfferingMetrics(instanceTypesPath, addr, portFile string) error {
	if _, err := readInstanceTypes(instanceTypesPath); err != nil {
		return err
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(offeringCollector{instanceTypesPath})
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	port := listener.Addr().(*net.TCPAddr).Port
	if portFile != "" {
		if err := os.WriteFile(portFile, []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil {
			return err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	return http.Serve(listener, mux)
}
