#pragma once

// Shared by the fuzz targets: the built-in catalog and rules (what the
// operator decodes specs against), and the input as text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <unistd.h>

#include "app/placement_config.h"

namespace gpuplacement::fuzz {

inline const core::Catalog& catalog() {
  static const auto loaded = app::loadCatalog("");
  if (!loaded) {
    std::abort();  // the built-in catalog always loads; a fuzz run cannot start without it
  }
  return **loaded;
}

inline const core::RuleSet& rules() {
  static const auto loaded = app::loadRules("", catalog());
  if (!loaded) {
    std::abort();
  }
  return **loaded;
}

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A directory of this process's own under the temporary directory, removed
// when the fuzzer exits (a run ends in exit(), which runs static
// destructors), so replays in ctest leave nothing behind in /tmp.
inline const std::filesystem::path& scratchDirectory(std::string_view target) {
  struct Scratch {
    std::filesystem::path path;
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Scratch scratch{[target] {
    auto path = std::filesystem::temp_directory_path() /
                ("gpu-placement-fuzz-" + std::string(target) + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(path);
    return path;
  }()};
  return scratch.path;
}

// A property the decoder promises; a failed one is reported as a crash.
inline void require(bool holds) {
  if (!holds) {
    std::abort();
  }
}

}  // namespace gpuplacement::fuzz
