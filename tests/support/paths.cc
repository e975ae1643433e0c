#include "support/paths.h"

namespace gpuplacement::testing {

std::string repoRoot() {
  return GPUPLACEMENT_SOURCE_DIR;
}

std::string operatorBinary() {
  return GPUPLACEMENT_BINARY;
}

std::string buildDir() {
  return GPUPLACEMENT_BUILD_DIR;
}

}  // namespace gpuplacement::testing
