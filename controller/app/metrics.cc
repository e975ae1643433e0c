#include "app/metrics.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <dirent.h>
#include <unistd.h>

namespace gpuplacement::app {
namespace {

// Appends to `out` throughout: a scrape renders every series, tens of
// thousands with a series per workload, so no piece is a string of its own.
void appendEscapedLabel(std::string& out, std::string_view value) {
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
}

void appendNumber(std::string& out, double value) {
  if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
    return;
  }
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  // The shortest %g text that reads back as the same double, as Go's
  // strconv (and so client_golang) writes it: 0.1, not 0.10000000000000001.
  char text[40];
  char* end = text;
  for (int precision = 15; precision <= 17; ++precision) {
    end = std::to_chars(text, text + sizeof text, value, std::chars_format::general, precision).ptr;
    double back = 0;
    std::from_chars(text, end, back);
    if (back == value) {
      break;
    }
  }
  out.append(text, end);
}

template <typename Values>
void appendLabelSet(std::string& out, const std::vector<std::string>& names, const Values& values,
                    std::string_view extraName = {}, std::string_view extraValue = {}) {
  bool first = true;
  const auto open = [&] {
    out.push_back(first ? '{' : ',');
    first = false;
  };
  auto value = values.begin();
  for (std::size_t i = 0; i < names.size() && value != values.end(); ++i, ++value) {
    open();
    out += names[i];
    out += "=\"";
    appendEscapedLabel(out, *value);
    out.push_back('"');
  }
  if (!extraName.empty()) {
    open();
    out += extraName;
    out += "=\"";
    out += extraValue;
    out.push_back('"');
  }
  if (!first) {
    out.push_back('}');
  }
}

}  // namespace

void MetricFamily::inc(const std::vector<std::string>& labelValues, double amount) {
  series_[labelValues].value += amount;
}

void MetricFamily::set(const std::vector<std::string>& labelValues, double value) {
  series_[labelValues].value = value;
}

void MetricFamily::observe(const std::vector<std::string>& labelValues, double value) {
  auto& series = series_[labelValues];
  if (series.bucketCounts.empty()) {
    series.bucketCounts.assign(buckets_.size(), 0);
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (value <= buckets_[i]) {
      ++series.bucketCounts[i];
    }
  }
  series.value += value;
  ++series.count;
}

double MetricFamily::value(const std::vector<std::string>& labelValues) const {
  const auto it = series_.find(labelValues);
  return it == series_.end() ? 0 : it->second.value;
}

void MetricFamily::render(std::string& out) const {
  const char* type = type_ == Type::Counter ? "counter"
                     : type_ == Type::Gauge ? "gauge"
                                            : "histogram";
  out += "# HELP ";
  out += name_;
  out += ' ';
  out += help_;
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type;
  out += '\n';
  // One sample line: name, suffix, labels (and `le`), the value.
  const auto line = [&](std::string_view suffix, const auto& values, std::string_view le,
                        const auto& writeValue) {
    out += name_;
    out += suffix;
    appendLabelSet(out, labels_, values, le.empty() ? std::string_view{} : "le", le);
    out += ' ';
    writeValue();
    out += '\n';
  };
  if (collect_) {
    collect_([&](std::initializer_list<std::string_view> values, double value) {
      line("", values, {}, [&] { appendNumber(out, value); });
    });
    return;
  }
  for (const auto& [values, series] : series_) {
    if (type_ != Type::Histogram) {
      line("", values, {}, [&] { appendNumber(out, series.value); });
      continue;
    }
    std::string bound;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      bound.clear();
      appendNumber(bound, buckets_[i]);
      line("_bucket", values, bound, [&] { out += std::to_string(series.bucketCounts[i]); });
    }
    line("_bucket", values, "+Inf", [&] { out += std::to_string(series.count); });
    line("_sum", values, {}, [&] { appendNumber(out, series.value); });
    line("_count", values, {}, [&] { out += std::to_string(series.count); });
  }
}

MetricFamily& MetricsRegistry::add(std::unique_ptr<MetricFamily> family) {
  for (const auto& existing : families_) {
    if (existing->name() == family->name()) {
      throw std::logic_error("metric " + family->name() + " registered twice");
    }
  }
  families_.push_back(std::move(family));
  return *families_.back();
}

MetricFamily& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                       std::vector<std::string> labels) {
  return add(
      std::make_unique<MetricFamily>(name, help, MetricFamily::Type::Counter, std::move(labels)));
}

MetricFamily& MetricsRegistry::gauge(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels) {
  return add(
      std::make_unique<MetricFamily>(name, help, MetricFamily::Type::Gauge, std::move(labels)));
}

MetricFamily& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                         std::vector<std::string> labels,
                                         std::vector<double> buckets) {
  return add(std::make_unique<MetricFamily>(name, help, MetricFamily::Type::Histogram,
                                            std::move(labels), std::move(buckets)));
}

void MetricsRegistry::gaugeFrom(const std::string& name, const std::string& help,
                                std::vector<std::string> labels, MetricFamily::Collect collect) {
  gauge(name, help, std::move(labels)).renderFrom(std::move(collect));
}

std::string MetricsRegistry::render() {
  for (auto& refresh : collectors_) {
    refresh();
  }
  std::string out;
  out.reserve(lastRenderBytes_ + lastRenderBytes_ / 8);  // grown once, not by doubling
  for (const auto& family : families_) {
    family->render(out);
  }
  lastRenderBytes_ = out.size();
  return out;
}

void registerProcessMetrics(MetricsRegistry& registry) {
  auto& resident =
      registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  auto& virtualMemory =
      registry.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  auto& cpu = registry.counter("process_cpu_seconds_total",
                               "Total user and system CPU time spent in seconds.");
  auto& start = registry.gauge("process_start_time_seconds",
                               "Start time of the process since unix epoch in seconds.");
  auto& fds = registry.gauge("process_open_fds", "Number of open file descriptors.");
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double pageSize = static_cast<double>(sysconf(_SC_PAGESIZE));
  double bootTime = 0;
  {
    std::ifstream stat("/proc/stat");
    std::string key;
    while (stat >> key) {
      if (key == "btime") {
        stat >> bootTime;
        break;
      }
    }
  }
  registry.onCollect([resident = &resident, virtualMemory = &virtualMemory, cpu = &cpu,
                      start = &start, fds = &fds, ticks, pageSize, bootTime] {
    std::ifstream in("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Fields after the command name, which may contain spaces, end with ')'.
    const auto close = text.rfind(')');
    if (close == std::string::npos) {
      return;
    }
    std::istringstream fields(text.substr(close + 2));
    std::vector<std::string> values;
    for (std::string value; fields >> value;) {
      values.push_back(value);
    }
    // /proc/[pid]/stat fields 14-15 utime, stime; 22 starttime; 23 vsize;
    // 24 rss (pages); numbered from 1 with the state at 3.
    if (values.size() < 22) {
      return;
    }
    const auto field = [&](int number) { return std::stod(values[number - 3]); };
    cpu->set({}, (field(14) + field(15)) / ticks);
    start->set({}, bootTime + field(22) / ticks);
    virtualMemory->set({}, field(23));
    resident->set({}, field(24) * pageSize);
    double open = 0;
    if (DIR* dir = opendir("/proc/self/fd")) {
      while (readdir(dir) != nullptr) {
        ++open;
      }
      closedir(dir);
      open -= 2;  // . and ..
    }
    fds->set({}, open);
  });
}

std::vector<double> reconcileBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
          0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
          6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
}

std::vector<double> latencyBuckets() {
  std::vector<double> buckets;
  for (double bound = 0.001; bound < 20; bound *= 2) {
    buckets.push_back(bound);
  }
  return buckets;
}

}  // namespace gpuplacement::app
