#include "runtime/text_compressor.h"

#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace gpuplacement::runtime {
namespace {

// A status of the shape a controller writes for each of thousands of
// objects: the same keys and sentences, other names, numbers and times.
std::string statusOf(int i) {
  const auto name = "w-" + std::to_string(10000 + i);
  nlohmann::json conditions = nlohmann::json::array();
  for (const char* type : {"Valid", "PricesForRegion", "Placed", "Applied", "Ready"}) {
    conditions.push_back(
        {{"type", type},
         {"status", "True"},
         {"reason", std::string(type) + "Reason"},
         {"lastTransitionTime", "2026-12-02T08:5" + std::to_string(i % 10) + ":54Z"},
         {"message", "placed on 1 of 1 NVIDIA A10G on a new g5.xlarge for " + name + " at $" +
                         std::to_string(1 + i % 7) +
                         ".006/h; the cluster runs in us-east-1 (its nodes' "
                         "topology.kubernetes.io/region), the region of the costs shown"}});
  }
  return nlohmann::json{{"conditions", conditions},
                        {"applied",
                         {{"targetName", name},
                          {"targetUid", "fbd51a31-3a84-4cd8-9652-" + std::to_string(100000 + i)},
                          {"targetGeneration", i % 3 + 1}}},
                        {"observedGeneration", 1}}
      .dump();
}

}  // namespace

TEST_CASE("texts packed against a reference come back whole, much smaller") {
  TextCompressor compressor;
  compressor.setReference(statusOf(0));
  std::size_t texts = 0;
  std::size_t packed = 0;
  for (int i = 1; i <= 100; ++i) {
    const auto text = statusOf(i);
    const auto kept = compressor.pack(text);
    CHECK(compressor.unpack(kept) == text);
    texts += text.size();
    packed += kept.size();
  }
  // Alike texts differ in a few dozen bytes: at least five times smaller.
  CHECK(packed * 5 < texts);
}

TEST_CASE("without a reference a text is compressed alone, and comes back") {
  TextCompressor compressor;
  for (const auto& text : {std::string(), std::string("x"), statusOf(3)}) {
    CHECK(compressor.unpack(compressor.pack(text)) == text);
  }
}

TEST_CASE("a text is refused under another reference than its own, never misread") {
  TextCompressor compressor;
  compressor.setReference(statusOf(0));
  const auto kept = compressor.pack(statusOf(1));
  compressor.setReference(statusOf(50) + " another reference");
  CHECK_FALSE(compressor.unpack(kept).has_value());
  CHECK_FALSE(compressor.unpack("not a packed text").has_value());
  CHECK_FALSE(compressor.unpack("").has_value());
}

}  // namespace gpuplacement::runtime
