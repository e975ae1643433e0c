// Numbers written by people: parameter counts ("7B", "1.3B", "7e9") and
// decimals (prices, "2.50"). A count that parses must format to text that
// parses back to the same count.
#include "base/decimal.h"
#include "core/catalog/quantity.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const std::string input = fuzz::text(data, size);
  if (const auto count = core::parseParameterCount(input)) {
    fuzz::require(*count <= core::kMaxParameterCount);
    const auto again = core::parseParameterCount(core::formatParameterCount(*count));
    fuzz::require(again.ok() && *again == *count);
  }
  if (const auto value = base::parseDecimal(input)) {
    fuzz::require(*value >= 0);
    (void)base::decimalString(*value, 4);
    (void)base::formatMoney(*value);
  }
  return 0;
}
