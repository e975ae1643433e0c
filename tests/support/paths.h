#pragma once

#include <string>

namespace gpuplacement::testing {

// Where the tests find the repository and what this build made. The
// absolute paths are compiled into support/paths.cc alone, so that every
// other object is the same in any clone and ccache shares it between them.
std::string repoRoot();
// bin/gpu-placement of this build tree.
std::string operatorBinary();
// This build tree.
std::string buildDir();

}  // namespace gpuplacement::testing
