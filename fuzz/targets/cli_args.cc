// The command line: recommend, analyze, catalog and version with fuzzed
// arguments (split at NUL or newline). `run` and `--server` would reach for
// a cluster, and arguments holding '/' would read any file: both are left
// out. Files named without a '/' are read from an empty directory.
#include <filesystem>
#include <iostream>
#include <streambuf>
#include <vector>

#include "app/cli.h"
#include "fuzz_support.h"

namespace {

class Discard final : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static Discard discard;
  std::cout.rdbuf(&discard);
  std::cerr.rdbuf(&discard);
  std::filesystem::current_path(gpuplacement::fuzz::scratchDirectory("cli"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  if (size == 0) {
    return 0;
  }
  static const char* const kCommands[] = {"recommend", "analyze", "catalog", "version"};
  std::vector<std::string> args = {"gpu-placement", kCommands[data[0] % 4]};
  const std::string input = fuzz::text(data + 1, size - 1);
  std::size_t start = 0;
  while (start <= input.size() && args.size() < 32) {
    const auto end = input.find_first_of(std::string("\0\n", 2), start);
    std::string arg = input.substr(start, end == std::string::npos ? end : end - start);
    if (arg != "run" && arg.find("server") == std::string::npos &&
        arg.find('/') == std::string::npos) {
      args.push_back(std::move(arg));
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  std::vector<char*> argv;
  for (auto& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  const int code = app::runCli(static_cast<int>(args.size()), argv.data());
  fuzz::require(code >= 0 && code <= 3);
  return 0;
}
