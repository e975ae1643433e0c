// The Prometheus text format as scrapers parse it, and the registry's
// guard against one name registered twice.
#include "app/metrics.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include <doctest/doctest.h>

namespace gpuplacement::app {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("counters, gauges and histograms render in the text exposition format") {
  MetricsRegistry registry;
  auto& requests = registry.counter("requests_total", "Requests", {"verb", "code"});
  auto& depth = registry.gauge("queue_depth", "Depth");
  auto& latency = registry.histogram("latency_seconds", "Latency", {"name"}, {0.1, 1});
  requests.inc({"get", "200"});
  requests.inc({"get", "200"}, 2);
  requests.inc({"patch", "409"});
  depth.set({}, 7);
  latency.observe({"w"}, 0.05);
  latency.observe({"w"}, 0.5);
  latency.observe({"w"}, 5);

  const std::string text = registry.render();
  CHECK(contains(text, "# HELP requests_total Requests\n# TYPE requests_total counter\n"));
  CHECK(contains(text, "requests_total{verb=\"get\",code=\"200\"} 3\n"));
  CHECK(contains(text, "requests_total{verb=\"patch\",code=\"409\"} 1\n"));
  CHECK(contains(text, "# TYPE queue_depth gauge\nqueue_depth 7\n"));
  CHECK(contains(text, "latency_seconds_bucket{name=\"w\",le=\"0.1\"} 1\n"));
  CHECK(contains(text, "latency_seconds_bucket{name=\"w\",le=\"1\"} 2\n"));
  CHECK(contains(text, "latency_seconds_bucket{name=\"w\",le=\"+Inf\"} 3\n"));
  CHECK(contains(text, "latency_seconds_sum{name=\"w\"} 5.55\n"));
  CHECK(contains(text, "latency_seconds_count{name=\"w\"} 3\n"));
  CHECK(requests.value({"get", "200"}) == 3);
}

TEST_CASE("numbers are the shortest text that reads back the same, as client_golang writes them") {
  MetricsRegistry registry;
  auto& value = registry.gauge("value", "Value", {"case"});
  value.set({"tenth"}, 0.1);
  value.set({"third"}, 1.0 / 3);
  value.set({"large"}, 48234496);
  value.set({"tiny"}, 1e-7);
  value.set({"nan"}, std::nan(""));
  value.set({"inf"}, -HUGE_VAL);
  const std::string text = registry.render();
  CHECK(contains(text, "value{case=\"tenth\"} 0.1\n"));
  CHECK(contains(text, "value{case=\"third\"} 0.3333333333333333\n"));
  CHECK(contains(text, "value{case=\"large\"} 48234496\n"));
  CHECK(contains(text, "value{case=\"tiny\"} 1e-07\n"));
  CHECK(contains(text, "value{case=\"nan\"} NaN\n"));
  CHECK(contains(text, "value{case=\"inf\"} -Inf\n"));
}

TEST_CASE("label values are escaped; collectors refresh gauges before each scrape") {
  MetricsRegistry registry;
  auto& info = registry.gauge("info", "Info", {"message"});
  int scrapes = 0;
  registry.onCollect([&] { info.set({"say \"hi\"\\\nbye"}, ++scrapes); });
  CHECK(contains(registry.render(), "info{message=\"say \\\"hi\\\"\\\\\\nbye\"} 1\n"));
  CHECK(contains(registry.render(), "} 2\n"));
}

TEST_CASE("a gauge rendered from state: one series per object, gone with the object") {
  MetricsRegistry registry;
  std::map<std::string, double> costs = {{"a\"b", 1.5}, {"team/llm", 2.25}};
  registry.gaugeFrom("per_object", "Per object", {"name", "kind"}, [&](const SampleSink& sample) {
    for (const auto& [name, cost] : costs) {
      sample({name, "GpuWorkload"}, cost);
    }
  });
  std::string text = registry.render();
  CHECK(contains(text, "# HELP per_object Per object\n# TYPE per_object gauge\n"));
  CHECK(contains(text, "per_object{name=\"a\\\"b\",kind=\"GpuWorkload\"} 1.5\n"));
  CHECK(contains(text, "per_object{name=\"team/llm\",kind=\"GpuWorkload\"} 2.25\n"));
  costs.erase("a\"b");
  costs["team/llm"] = 3;
  text = registry.render();
  CHECK_FALSE(contains(text, "a\\\"b"));
  CHECK(contains(text, "per_object{name=\"team/llm\",kind=\"GpuWorkload\"} 3\n"));
  costs.clear();
  CHECK(registry.render() == "# HELP per_object Per object\n# TYPE per_object gauge\n");
  CHECK_THROWS_AS(registry.gaugeFrom("per_object", "again", {}, [](const SampleSink&) {}),
                  std::logic_error);
}

TEST_CASE("a name registered twice is refused: one scrape, one family per name") {
  MetricsRegistry registry;
  registry.gauge("workqueue_depth", "Current depth of workqueue", {"name"});
  CHECK_THROWS_AS(registry.gauge("workqueue_depth", "again", {"name"}), std::logic_error);
  CHECK_THROWS_AS(registry.counter("workqueue_depth", "again"), std::logic_error);
}

}  // namespace
}  // namespace gpuplacement::app
