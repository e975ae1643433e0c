#include "runtime/informer.h"

namespace gpuplacement::runtime {

std::string objectKey(const nlohmann::json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) {
    return "";
  }
  const std::string name = metadata->value("name", "");
  const std::string ns = metadata->value("namespace", "");
  return ns.empty() ? name : ns + "/" + name;
}

}  // namespace gpuplacement::runtime
