#pragma once

#include <unordered_map>
#include <vector>

namespace gpuplacement::runtime {

// Which objects relate to which, by their keys (a TargetKey, a
// "namespace/name"): one hash node per pair and no container per key. Nearly every key has one
// partner (a Deployment, the GpuWorkload that targets it), where a map of sets paid for a tree and
// two nodes: about 190 bytes a pair instead of 96.
template <typename From, typename To>
class KeyIndex {
 public:
  // Adding a pair twice keeps one.
  void add(const From& from, const To& to) {
    const auto range = pairs_.equal_range(from);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == to) {
        return;
      }
    }
    pairs_.emplace(from, to);
  }

  void remove(const From& from, const To& to) {
    const auto range = pairs_.equal_range(from);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == to) {
        pairs_.erase(it);
        return;
      }
    }
  }

  // A copy: callers enqueue or write while the index may change.
  std::vector<To> of(const From& from) const {
    std::vector<To> partners;
    const auto range = pairs_.equal_range(from);
    for (auto it = range.first; it != range.second; ++it) {
      partners.push_back(it->second);
    }
    return partners;
  }

  std::size_t size() const { return pairs_.size(); }

 private:
  std::unordered_multimap<From, To> pairs_;
};

}  // namespace gpuplacement::runtime
