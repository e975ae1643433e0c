#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

// A pod's toleration, as the pod templates the operator places carry them
// and as a policy's tiers name them. Its own header, below the policy: the
// targets read and write tolerations without reading a policy.
namespace gpuplacement::core {

struct Toleration {
  std::string key;
  std::string op = "Exists";  // Exists or Equal
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute, or empty for all
  // tolerationSeconds (NoExecute): kept as written. Dropping it would turn
  // a pod's default not-ready and unreachable tolerations (300 s) into
  // tolerating a dead node for ever.
  std::optional<std::int64_t> seconds{};

  bool operator==(const Toleration&) const = default;
  auto operator<=>(const Toleration&) const = default;
};

// A toleration as the API writes it (empty fields left out), and back.
nlohmann::json tolerationToJson(const Toleration& toleration);
Toleration tolerationFromJson(const nlohmann::json& item);

}  // namespace gpuplacement::core
