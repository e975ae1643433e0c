// A kubeconfig file, as `--kubeconfig` or $KUBECONFIG names it. Files it
// names (certificate-authority, tokenFile, ...) are read relative to it;
// inputs naming device or /proc files are skipped, since reading one may
// never end (the operator trusts its own kubeconfig that far).
#include "kube/kubeconfig.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "fuzz_support.h"

namespace {

const std::string& scratchFile() {
  static const std::string path = [] {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpu-placement-fuzz-kubeconfig-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    return (dir / "config").string();
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const std::string input = fuzz::text(data, size);
  for (const char* unbounded : {"/dev", "/proc", "/sys", ".."}) {
    if (input.find(unbounded) != std::string::npos) {
      return 0;
    }
  }
  std::ofstream(scratchFile(), std::ios::binary | std::ios::trunc) << input;
  const auto config = kube::loadKubeconfigFiles({scratchFile()}, "");
  if (config) {
    fuzz::require(!config->server.empty());
  }
  (void)kube::decodeBase64(input);
  return 0;
}
