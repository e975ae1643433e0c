#include "runtime/informer.h"

#include "base/json_access.h"

namespace gpuplacement::runtime {

std::string objectKey(const nlohmann::json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) {
    return "";
  }
  const std::string name = base::stringMember(*metadata, "name");
  const std::string ns = base::stringMember(*metadata, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

}  // namespace gpuplacement::runtime
