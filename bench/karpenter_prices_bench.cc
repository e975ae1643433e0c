// What one refresh of Karpenter's prices costs the operator: the metrics
// page's size and the CPU to read its two offering gauges and price the
// catalog by them, at 120 instance types (a GPU cluster's NodePools) and at
// 900 (every type of a region, what Karpenter's AWS provider publishes
// when nothing narrows it), in 6 zones, on-demand, spot and reserved, beside
// 474 KB of Karpenter's other metrics (the size of its page measured on the
// simulated cluster). Then what Karpenter's NodeOverlays add to each
// repricing (a read that changed a price, or an overlay that changed): the
// offerings of 120 types in 6 zones with 0, 10 and 100 overlays, each
// selecting one type at one capacity type, as a policy's shared prices do.
// Prints figures; it passes or fails nothing.
//   build/bin/karpenter_prices_bench [reads]   (default 50 per size)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "app/placement_config.h"
#include "core/catalog/offering_prices.h"
#include "core/cluster/node_overlays.h"

namespace {

using namespace gpuplacement;

// Karpenter's other series: histogram buckets and counters, skipped
// unparsed by the reader. Built by appending: g++ 12's -Wrestrict misfires
// on "text" + std::string at -O3 (GCC bug 105651).
void otherMetrics(std::string& page, std::size_t bytes) {
  for (int i = 0; page.size() < bytes; ++i) {
    page +=
        "karpenter_scheduler_scheduling_duration_seconds_bucket{controller=\"provisioner\",le=\"";
    page += std::to_string(i % 40);
    page += "\"} ";
    page += std::to_string(i);
    page += '\n';
  }
}

std::string metricsPage(const std::vector<std::string>& types, int zones) {
  std::string page;
  otherMetrics(page, 474'000);
  const char* const capacities[] = {"on-demand", "spot", "reserved"};
  for (const std::string_view metric :
       {core::kOfferingAvailableMetric, core::kOfferingPriceMetric}) {
    page += "# HELP ";
    page += metric;
    page += " ...\n# TYPE ";
    page += metric;
    page += " gauge\n";
    for (const auto& type : types) {
      for (const char* capacity : capacities) {
        for (int zone = 0; zone < zones; ++zone) {
          page += metric;
          page += "{capacity_type=\"";
          page += capacity;
          page += "\",instance_type=\"";
          page += type;
          page += "\",zone=\"us-east-1";
          page += static_cast<char>('a' + zone);
          page += "\"} ";
          page += metric == core::kOfferingPriceMetric ? "1.2345\n" : "1\n";
        }
      }
    }
  }
  return page;
}

// The catalog priced at Karpenter's offerings with `count` NodeOverlays.
int overlaysCost(const core::Catalog& catalog, int reads) {
  std::vector<std::string> types;
  for (const auto& instance : catalog.instances) {
    types.push_back(instance.type);
  }
  auto read = core::offeringPricesFromMetrics(metricsPage(types, 6));
  if (!read) {
    std::fprintf(stderr, "%s\n", read.error().describe().c_str());
    return 1;
  }
  std::printf("\n%-9s %10s %12s %16s\n", "overlays", "offerings", "priced", "CPU ms/repricing");
  for (const int count : {0, 10, 100}) {
    std::vector<core::NodeOverlay> overlays;
    for (int i = 0; i < count; ++i) {
      core::NodeOverlay overlay;
      overlay.name = "overlay-" + std::to_string(i);
      overlay.requirements = {{"node.kubernetes.io/instance-type",
                               "In",
                               {types[static_cast<std::size_t>(i) % types.size()]}},
                              {"karpenter.sh/capacity-type",
                               "In",
                               {i < static_cast<int>(types.size()) ? "on-demand" : "spot"}}};
      overlay.price = "0.5";
      overlay.weight = 1000;
      overlay.validated = true;  // Karpenter accepted it
      overlays.push_back(std::move(overlay));
    }
    int priced = 0;
    const std::clock_t cpu = std::clock();
    for (int i = 0; i < reads; ++i) {
      const auto catalogPriced =
          core::pricedAsKarpenter(catalog, &*read, "2026-12-01T20:00:00Z", overlays);
      priced = catalogPriced.nodeOverlays.offeringsPriced;
    }
    const double cpuMs = 1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC / reads;
    std::printf("%-9d %10zu %12d %16.2f\n", count, read->offerings.size(), priced, cpuMs);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int reads = argc > 1 ? std::atoi(argv[1]) : 50;
  auto engine = app::loadEngine({});  // the built-in catalog
  if (!engine) {
    std::fprintf(stderr, "error: %s\n", engine.error().describe().c_str());
    return 1;
  }
  const auto* catalog = &(*engine)->catalog();
  std::printf("%-6s %-6s %10s %10s %12s %12s\n", "types", "zones", "page KB", "offerings",
              "ms per read", "CPU ms/read");
  for (const int count : {120, 900}) {
    std::vector<std::string> types;
    for (const auto& instance : catalog->instances) {
      types.push_back(instance.type);  // the catalog's own first: they are priced
    }
    for (int i = 0; static_cast<int>(types.size()) < count; ++i) {
      std::string type = "x";
      type += std::to_string(i);
      type += ".xlarge";
      types.push_back(std::move(type));
    }
    types.resize(count);
    const auto page = metricsPage(types, 6);
    std::size_t offerings = 0;
    const auto wall = std::chrono::steady_clock::now();
    const std::clock_t cpu = std::clock();
    for (int i = 0; i < reads; ++i) {
      auto read = core::offeringPricesFromMetrics(page);
      if (!read) {
        std::fprintf(stderr, "%s\n", read.error().describe().c_str());
        return 1;
      }
      offerings = read->offerings.size();
      const auto priced = core::withOfferingPrices(*catalog, *read, "2026-12-01T20:00:00Z");
      if (priced.instances.empty()) {
        return 1;
      }
    }
    const double wallMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count() /
        reads;
    const double cpuMs = 1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC / reads;
    std::printf("%-6d %-6d %10.0f %10zu %12.2f %12.2f\n", count, 6,
                static_cast<double>(page.size()) / 1000, offerings, wallMs, cpuMs);
  }
  return overlaysCost(*catalog, reads);
}
