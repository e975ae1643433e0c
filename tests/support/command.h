#pragma once

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>

#include "support/temp_dir.h"

namespace gpuplacement::testing {

struct CommandResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

// Runs a shell command line, capturing stdout, stderr and the exit code.
inline CommandResult runCommand(const std::string& commandLine) {
  TempDir dir;
  const std::string errFile = dir.path() + "/stderr";
  CommandResult result;
  FILE* pipe = popen((commandLine + " 2>" + errFile).c_str(), "r");
  if (!pipe) {
    return result;
  }
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(errFile);
  std::ostringstream err;
  err << in.rdbuf();
  result.err = err.str();
  return result;
}

}  // namespace gpuplacement::testing
