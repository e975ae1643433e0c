#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gpuplacement::base {

using Timestamp = std::chrono::system_clock::time_point;

// RFC 3339 in UTC with second precision, as Kubernetes writes metav1.Time:
// "2026-11-22T10:15:00Z".
std::string formatRfc3339(Timestamp time);

// Reads RFC 3339 with "Z" or a numeric offset and optional fractional
// seconds (client-go ExecCredential and metav1.MicroTime both occur).
Result<Timestamp> parseRfc3339(std::string_view text);

// Parses a Go-style duration as Kubernetes APIs write them: "90s", "15m",
// "1h30m", "500ms". Negative durations are rejected.
Result<std::chrono::milliseconds> parseDuration(std::string_view text);

// "1h30m0s" style, the inverse of parseDuration for whole seconds.
std::string formatDuration(std::chrono::seconds duration);

}  // namespace gpuplacement::base
