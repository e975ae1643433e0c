#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace gpuplacement::runtime {

// Names one object of a kind: namespace and name, the namespace empty for
// cluster-scoped kinds (controller-runtime's types.NamespacedName).
struct ObjectKey {
  std::string ns;
  std::string name;

  bool operator==(const ObjectKey&) const = default;

  // "namespace/name", or "name": the form informers and logs use.
  std::string str() const { return ns.empty() ? name : ns + "/" + name; }
  static ObjectKey parse(std::string_view text) {
    const auto slash = text.find('/');
    if (slash == std::string_view::npos) {
      return {"", std::string(text)};
    }
    return {std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
  }
};

}  // namespace gpuplacement::runtime

template <>
struct std::hash<gpuplacement::runtime::ObjectKey> {
  std::size_t operator()(const gpuplacement::runtime::ObjectKey& key) const noexcept {
    const std::size_t ns = std::hash<std::string>{}(key.ns);
    return ns ^
           (std::hash<std::string>{}(key.name) + 0x9e3779b97f4a7c15ULL + (ns << 6) + (ns >> 2));
  }
};
