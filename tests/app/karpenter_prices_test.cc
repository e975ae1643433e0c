// The refresh of Karpenter's prices on a fake clock and a scripted metrics
// page: what a read changes, what a failed one keeps, when the prices turn
// stale, and the flags that name the source.
#include "app/karpenter_prices.h"

#include <deque>

#include <doctest/doctest.h>

#include "core/cluster/node_overlays.h"
#include "runtime/run_sync.h"
#include "support/engine_fixture.h"
#include "support/fake_clock.h"

namespace gpuplacement::app::karpenter_prices_tests {
namespace {

std::string page(double g4dnPrice) {
  return std::string(core::kOfferingPriceMetric) +
         "{capacity_type=\"on-demand\",instance_type=\"g4dn.xlarge\",zone=\"us-east-1a\"} " +
         std::to_string(g4dnPrice) + "\n";
}

// Each read answers the next scripted page, or an error.
struct Script {
  std::deque<base::Result<std::string>> answers;
  int reads = 0;

  MetricsFetch fetch() {
    return [this]() -> asio::awaitable<base::Result<std::string>> {
      ++reads;
      auto answer = std::move(answers.front());
      answers.pop_front();
      co_return answer;
    };
  }
};

struct World {
  asio::io_context context;
  testing::FakeClock clock;
  Logger log{LogLevel::Error, LogFormat::Text};
  MetricsRegistry metrics;
  Script script;
  KarpenterPrices prices{
      script.fetch(),
      KarpenterPricesOptions{"", "http://127.0.0.1:8080/metrics", std::chrono::minutes(5)}, log,
      metrics, clock};

  KarpenterPrices::Change read() { return runtime::runSync(context, prices.readOnce()); }
  // The catalog priced by what was read, as the manager prices it.
  core::Catalog priced() const {
    return core::pricedAsKarpenter(*testing::shippedCatalog(), prices.offerings().get(),
                                   prices.pricesAsOf(), {});
  }
};

double g4dn(const World& world) {
  return world.priced().find("g4dn.xlarge")->onDemand.value_or(0);
}

}  // namespace

TEST_CASE("a read that changes the prices reprices the catalog; one that does not, nothing") {
  World world;
  const double shipped = g4dn(world);
  CHECK(world.prices.condition().reason == "NotRead");
  CHECK_FALSE(world.prices.offerings());

  world.script.answers = {page(0.6), page(0.6), page(0.7)};
  auto change = world.read();
  CHECK(change.prices);
  CHECK(change.condition);
  CHECK(g4dn(world) == 0.6);
  CHECK(g4dn(world) != shipped);
  CHECK(world.priced().pricesFrom == core::PricesFrom::Karpenter);
  CHECK(world.prices.condition().status == "True");
  const auto asOf = world.prices.pricesAsOf();
  CHECK(asOf == "2026-11-22T00:00:00Z");

  world.clock.advance(std::chrono::minutes(5));
  change = world.read();
  CHECK_FALSE(change.prices);  // the same prices: nothing to weigh again
  CHECK_FALSE(change.condition);
  CHECK(world.prices.pricesAsOf() == asOf);

  world.clock.advance(std::chrono::minutes(5));
  change = world.read();
  CHECK(change.prices);
  // The condition names no time: a status whose costs stay the same is
  // not rewritten when another type's price moves.
  CHECK_FALSE(change.condition);
  CHECK(g4dn(world) == 0.7);
  CHECK(world.prices.pricesAsOf() == "2026-11-22T00:10:00Z");
}

TEST_CASE("failed reads keep the last prices, and turn stale after an interval") {
  World world;
  world.script.answers = {page(0.6), base::Error{"http://127.0.0.1:8080/metrics", "refused"},
                          base::Error{"http://127.0.0.1:8080/metrics", "refused"},
                          std::string("not prometheus {"), page(0.6)};
  world.read();
  const auto current = world.prices.condition();

  world.clock.advance(std::chrono::minutes(5));
  auto change = world.read();  // one failure, one interval after the good read
  CHECK_FALSE(change.prices);
  CHECK_FALSE(change.condition);
  CHECK(world.prices.condition() == current);
  CHECK(g4dn(world) == 0.6);

  world.clock.advance(std::chrono::minutes(5));
  change = world.read();  // ten minutes without a good read
  CHECK(change.condition);
  const auto stale = world.prices.condition();
  CHECK(stale.status == "False");
  CHECK(stale.reason == "Stale");
  CHECK(stale.message.find("since 2026-11-22T00:05:00Z (http://127.0.0.1:8080/metrics: "
                           "refused)") != std::string::npos);
  CHECK(stale.message.find("as last read at 2026-11-22T00:00:00Z") != std::string::npos);
  CHECK(g4dn(world) == 0.6);

  world.clock.advance(std::chrono::minutes(5));
  change = world.read();  // a page that is not Prometheus text fails too, said as the first
  CHECK_FALSE(change.condition);
  CHECK(world.prices.condition() == stale);

  world.clock.advance(std::chrono::minutes(5));
  change = world.read();  // read again, the same prices: current, as of the first read
  CHECK_FALSE(change.prices);
  CHECK(change.condition);
  CHECK(world.prices.condition() == current);
  CHECK(world.script.reads == 5);
}

TEST_CASE("run reads on start and every interval, on its clock") {
  World world;
  world.script.answers = {page(0.6), page(0.7), page(0.7)};
  int changes = 0;
  asio::co_spawn(world.context, world.prices.run([&](KarpenterPrices::Change) { ++changes; }),
                 asio::detached);
  world.context.run_for(std::chrono::milliseconds(50));
  CHECK(world.script.reads == 1);
  CHECK(changes == 1);
  world.clock.advance(std::chrono::minutes(4));
  world.context.run_for(std::chrono::milliseconds(50));
  CHECK(world.script.reads == 1);
  world.clock.advance(std::chrono::minutes(1));
  world.context.run_for(std::chrono::milliseconds(50));
  CHECK(world.script.reads == 2);
  CHECK(changes == 2);
  world.prices.stop();
  world.context.run_for(std::chrono::milliseconds(50));
  CHECK(world.script.reads == 2);
}

TEST_CASE("the flags that name where Karpenter's prices are read") {
  struct Row {
    KarpenterPricesOptions options;
    std::string error;
  };
  const Row rows[] = {
      {{"karpenter/karpenter:8080", "", std::chrono::minutes(5)}, ""},
      {{"", "http://127.0.0.1:8000/metrics", std::chrono::seconds(10)}, ""},
      {{"karpenter:8080", "", std::chrono::minutes(5)},
       "--karpenter-service: \"karpenter:8080\" is not NAMESPACE/NAME:PORT (like "
       "karpenter/karpenter:8080)"},
      {{"karpenter/karpenter", "", std::chrono::minutes(5)},
       "--karpenter-service: \"karpenter/karpenter\" is not NAMESPACE/NAME:PORT (like "
       "karpenter/karpenter:8080)"},
      {{"karpenter/karpenter:8080", "http://x:1/metrics", std::chrono::minutes(5)},
       "--karpenter-metrics-url: read Karpenter's prices from a service or a URL, not both "
       "(--karpenter-service is set too)"},
      {{"", "ftp://x/metrics", std::chrono::minutes(5)},
       "--karpenter-metrics-url: \"ftp://x/metrics\" must start with https:// or http://"},
      {{"karpenter/karpenter:8080", "", std::chrono::seconds(5)},
       "--karpenter-prices-interval: must be at least 10s"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.options.service);
    const auto checked = checkKarpenterPricesOptions(row.options);
    CHECK(checked.ok() == row.error.empty());
    if (!checked.ok()) {
      CHECK(checked.error().describe() == row.error);
    }
  }
}

}  // namespace gpuplacement::app::karpenter_prices_tests
