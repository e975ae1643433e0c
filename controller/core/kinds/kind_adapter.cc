#include "core/kinds/kind_adapter.h"

#include <algorithm>

namespace gpuplacement::core {
namespace {

// "/spec/workerGroupSpecs/0/template" as a field path:
// "spec.workerGroupSpecs[0].template".
std::string fieldPathOf(const std::string& pointer) {
  std::string path;
  std::size_t start = 1;
  while (start <= pointer.size()) {
    auto end = pointer.find('/', start);
    if (end == std::string::npos) {
      end = pointer.size();
    }
    const auto token = pointer.substr(start, end - start);
    const bool index = !token.empty() && std::all_of(token.begin(), token.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    path += index ? "[" + token + "]" : (path.empty() ? "" : ".") + token;
    start = end + 1;
  }
  return path;
}

}  // namespace

std::string KindAdapter::templateOps(const TargetState& live, std::size_t index,
                                     const nlohmann::json& before, const nlohmann::json& after,
                                     nlohmann::json& ops) const {
  const auto& pointer = live.podSets.at(index).templatePointer;
  for (auto op : nlohmann::json::diff(before, after)) {
    op["path"] = pointer + op["path"].get<std::string>();
    ops.push_back(std::move(op));
  }
  return "";
}

std::string KindAdapter::fieldOf(const TargetState& live, std::size_t index,
                                 std::string_view field) const {
  constexpr std::string_view kTemplate = "spec.template";
  return fieldPathOf(live.podSets.at(index).templatePointer) +
         std::string(field.starts_with(kTemplate) ? field.substr(kTemplate.size()) : field);
}

}  // namespace gpuplacement::core
