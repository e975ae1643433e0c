#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

// Prometheus' text exposition format (version 0.0.4, what every client
// library serves on /metrics), read one sample at a time: the operator
// reads a few gauges of another component's metrics, not the whole page.
namespace gpuplacement::base {

struct PrometheusSample {
  std::string_view name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written, unescaped
  double value = 0;                                         // NaN and ±Inf as written

  // The label's value; empty when the sample has no such label.
  std::string_view label(std::string_view key) const;
};

// Calls `onSample` for every sample whose metric name is one of `names`;
// other lines are skipped without reading their labels, comments (# HELP,
// # TYPE) and blank lines too. A malformed sample line of a wanted metric
// is an error naming its line number and what is wrong; nothing is
// reported after it.
Result<Ok> readPrometheusText(std::string_view text, std::initializer_list<std::string_view> names,
                              const std::function<void(const PrometheusSample&)>& onSample);

}  // namespace gpuplacement::base
