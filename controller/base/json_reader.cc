#include "base/json_reader.h"

#include <cstdio>

#include "base/decimal.h"

namespace gpuplacement::base {

Result<std::optional<double>> ObjectReader::optionalNumber(std::string_view key, double min,
                                                           double max) const {
  if (!has(key)) {
    return std::optional<double>();
  }
  const auto& field = at(key);
  double value = 0;
  if (field.is_number()) {
    value = field.get<double>();
  } else if (field.is_string()) {
    auto parsed = parseDecimal(field.get<std::string>());
    if (!parsed) {
      return Error{fieldPath(key), parsed.error().message};
    }
    value = *parsed;
  } else {
    return Error{fieldPath(key), "must be a number"};
  }
  if (!std::isfinite(value) || value < min || value > max) {
    char bounds[96];
    std::snprintf(bounds, sizeof bounds, "must be between %g and %g, not %g", min, max, value);
    return Error{fieldPath(key), bounds};
  }
  return std::optional<double>(value);
}

}  // namespace gpuplacement::base
