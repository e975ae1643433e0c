// A kubeconfig file, as `--kubeconfig` or $KUBECONFIG names it. Files it
// names (certificate-authority, tokenFile, ...) are read relative to it;
// inputs naming device or /proc files are skipped, since reading one may
// never end (the operator trusts its own kubeconfig that far).
#include "kube/kubeconfig.h"

#include <filesystem>
#include <fstream>

#include "fuzz_support.h"

namespace {

const std::string& scratchFile() {
  static const std::string path =
      (gpuplacement::fuzz::scratchDirectory("kubeconfig") / "config").string();
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
