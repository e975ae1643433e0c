#include "core/catalog/region_name.h"

#include <algorithm>
#include <vector>

namespace gpuplacement::core {

bool isRegionName(std::string_view name) {
  const auto lowercase = [](std::string_view word) {
    return !word.empty() &&
           std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  };
  const auto digits = [](std::string_view word) {
    return !word.empty() &&
           std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<std::string_view> words;
  for (std::size_t start = 0;;) {
    const auto dash = name.find('-', start);
    words.push_back(name.substr(start, dash == std::string_view::npos ? dash : dash - start));
    if (dash == std::string_view::npos) {
      break;
    }
    start = dash + 1;
  }
  if (words.size() < 3 || words.front().size() != 2 || !digits(words.back())) {
    return false;
  }
  return std::all_of(words.begin(), words.end() - 1, lowercase);
}

}  // namespace gpuplacement::core
