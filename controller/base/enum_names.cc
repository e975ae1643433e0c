#include "base/enum_names.h"

#include <cctype>

namespace gpuplacement::base {

bool sameName(std::string_view input, std::string_view name) {
  std::size_t i = 0;
  std::size_t j = 0;
  const auto skip = [&] {
    while (i < input.size() && (input[i] == '-' || input[i] == '_')) {
      ++i;
    }
  };
  skip();
  while (i < input.size() && j < name.size()) {
    if (std::tolower(static_cast<unsigned char>(input[i])) !=
        std::tolower(static_cast<unsigned char>(name[j]))) {
      return false;
    }
    ++i;
    ++j;
    skip();
  }
  return i == input.size() && j == name.size();
}

}  // namespace gpuplacement::base
