#include "core/kinds/target_kind.h"

namespace gpuplacement::core {

std::optional<TargetKind> targetKindNamed(std::string_view kind) {
  for (const auto candidate : kTargetKinds) {
    if (base::nameOf(candidate) == kind) {
      return candidate;
    }
  }
  return std::nullopt;
}

std::string supportedTargets() {
  std::string text;
  for (std::size_t i = 0; i < kTargetKinds.size(); ++i) {
    if (i > 0) {
      text += i + 1 == kTargetKinds.size() ? " and " : ", ";
    }
    text += std::string(apiVersionOf(kTargetKinds[i])) + " " +
            std::string(base::nameOf(kTargetKinds[i]));
  }
  return text;
}

std::string describeTarget(TargetKind kind, const std::string& name) {
  return std::string(base::nameOf(kind)) + " " + name;
}

}  // namespace gpuplacement::core
