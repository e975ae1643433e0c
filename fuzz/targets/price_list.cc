// AWS's Price List offer file for EC2 (`prices import --offer-file`),
// streamed, and the price list it writes (`--price-list`, the chart's
// priceList): what the reader keeps is a list the list's checks accept,
// with positive prices, and it writes back to the same list.
#include "core/catalog/price_list.h"

#include <sstream>

#include "app/price_import.h"
#include "base/io/yaml_json.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const std::string text = fuzz::text(data, size);
  std::istringstream in(text);
  const auto imported = app::importEc2OfferFile(in, "eu-central-1", "offer.json");
  if (imported) {
    if (imported->onDemand.empty()) {
      std::abort();  // an import with nothing in it is refused
    }
    for (const auto& [type, price] : imported->onDemand) {
      if (!(price > 0)) {
        std::abort();
      }
    }
    const auto again = core::parsePriceList(core::priceListJson(*imported));
    if (!again || !(*again == *imported)) {
      std::abort();  // what import writes, --price-list reads back the same
    }
  }
  const auto document = base::parseYaml(text, "price-list.yaml");
  if (document) {
    if (const auto list = core::parsePriceList(*document)) {
      const auto again = core::parsePriceList(core::priceListJson(*list));
      if (!again || !(*again == *list)) {
        std::abort();
      }
      (void)core::withPriceList(fuzz::catalog(), *list);
    }
  }
  return 0;
}
