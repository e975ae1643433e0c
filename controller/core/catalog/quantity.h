#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/catalog/types.h"

namespace gpuplacement::core {

// Bytes in a GiB: the engine sizes memory in GiB, Kubernetes in bytes.
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// The largest model the engine accepts: ten times today's largest published
// dense models. Anything above is a typo, not a workload.
inline constexpr std::uint64_t kMaxParameterCount = 100'000'000'000'000ULL;  // 100T

// Parses a parameter count as people write it: "7B", "1.3B", "350M", "70b",
// "1.5T", "125K", "7e9" or "7000000000". Fractions are exact: "1.3B" is
// 1,300,000,000, not a rounded double.
Result<std::uint64_t> parseParameterCount(std::string_view text);

// Formats a count the way parseParameterCount reads it back: 7000000000 ->
// "7B", 1300000000 -> "1.3B", 350000000 -> "350M".
std::string formatParameterCount(std::uint64_t count);

// A Kubernetes resource quantity ("4", "3920m", "15Gi", "1.5k", "2e3") in
// thousandths of its unit, rounded up as the API server rounds: CPUs in
// millicores, memory in milli-bytes. Negative and absurd values are errors.
Result<std::int64_t> parseResourceMilli(std::string_view text);

// A quantity as an object carries it: its text ("16Gi"), or an integer's
// digits (a manifest may write `nvidia.com/gpu: 1`).
std::string quantityTextOf(const nlohmann::json& value);

}  // namespace gpuplacement::core
