#include "core/kinds/toleration.h"

#include "base/json_access.h"

namespace gpuplacement::core {

Toleration tolerationFromJson(const nlohmann::json& item) {
  Toleration toleration;
  toleration.key = base::stringMember(item, "key");
  toleration.op = base::stringOf(base::memberOf(item, "operator"), "Equal");
  toleration.value = base::stringMember(item, "value");
  toleration.effect = base::stringMember(item, "effect");
  if (const auto& seconds = base::memberOf(item, "tolerationSeconds");
      seconds.is_number_integer()) {
    toleration.seconds = seconds.get<std::int64_t>();
  }
  return toleration;
}

nlohmann::json tolerationToJson(const Toleration& toleration) {
  nlohmann::json item = {{"operator", toleration.op}};
  if (!toleration.key.empty()) {
    item["key"] = toleration.key;
  }
  if (!toleration.value.empty()) {
    item["value"] = toleration.value;
  }
  if (!toleration.effect.empty()) {
    item["effect"] = toleration.effect;
  }
  if (toleration.seconds) {
    item["tolerationSeconds"] = *toleration.seconds;
  }
  return item;
}

}  // namespace gpuplacement::core
