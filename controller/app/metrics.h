#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplacement::app {

// Writes one sample of a family rendered from the caller's state: its
// label values, in the order the family declares its labels, and value.
using SampleSink = std::function<void(std::initializer_list<std::string_view>, double)>;

// A small Prometheus registry: counters, gauges and histograms with labels,
// rendered in the text exposition format (0.0.4). Used from the event loop
// only, so it needs no locks.
class MetricFamily {
 public:
  enum class Type { Counter, Gauge, Histogram };
  using Collect = std::function<void(const SampleSink&)>;

  MetricFamily(std::string name, std::string help, Type type, std::vector<std::string> labels,
               std::vector<double> buckets = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        type_(type),
        labels_(std::move(labels)),
        buckets_(std::move(buckets)) {}

  void inc(const std::vector<std::string>& labelValues, double amount = 1);
  void set(const std::vector<std::string>& labelValues, double value);
  void observe(const std::vector<std::string>& labelValues, double value);
  // Drops every series (for gauges recomputed from scratch).
  void clear() { series_.clear(); }
  double value(const std::vector<std::string>& labelValues) const;
  void render(std::string& out) const;
  const std::string& name() const { return name_; }
  // Samples written by `collect` at each render instead of stored series.
  void renderFrom(Collect collect) { collect_ = std::move(collect); }

 private:
  struct Series {
    double value = 0;
    std::vector<std::uint64_t> bucketCounts;
    std::uint64_t count = 0;
  };
  std::string name_;
  std::string help_;
  Type type_;
  std::vector<std::string> labels_;
  std::vector<double> buckets_;
  std::map<std::vector<std::string>, Series> series_;
  Collect collect_;
};

class MetricsRegistry {
 public:
  // Registering a name twice is a bug (a scrape would carry two families
  // of that name, which Prometheus rejects): throws std::logic_error.
  MetricFamily& counter(const std::string& name, const std::string& help,
                        std::vector<std::string> labels = {});
  MetricFamily& gauge(const std::string& name, const std::string& help,
                      std::vector<std::string> labels = {});
  MetricFamily& histogram(const std::string& name, const std::string& help,
                          std::vector<std::string> labels, std::vector<double> buckets);
  // A gauge whose samples `collect` writes straight into each scrape from
  // the caller's own state: nothing is kept between scrapes, so a series
  // per object (per GpuWorkload) costs no memory beside the object's, and
  // a series goes as soon as its object does.
  void gaugeFrom(const std::string& name, const std::string& help, std::vector<std::string> labels,
                 MetricFamily::Collect collect);
  // Runs before every scrape, to refresh gauges computed from state.
  void onCollect(std::function<void()> refresh) { collectors_.push_back(std::move(refresh)); }
  std::string render();

 private:
  MetricFamily& add(std::unique_ptr<MetricFamily> family);

  std::size_t lastRenderBytes_ = 0;
  std::vector<std::unique_ptr<MetricFamily>> families_;
  std::vector<std::function<void()>> collectors_;
};

// The standard process_* metrics of Prometheus clients, from /proc/self:
// resident and virtual memory, CPU seconds, start time, open descriptors.
void registerProcessMetrics(MetricsRegistry& registry);

// controller-runtime's reconcile-time buckets, and exponential ones for
// short client-side latencies.
std::vector<double> reconcileBuckets();
std::vector<double> latencyBuckets();

}  // namespace gpuplacement::app
