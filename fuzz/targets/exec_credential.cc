// What an exec credential plugin (`aws eks get-token`) prints.
#include "fuzz_support.h"
#include "kube/credentials.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const auto credential =
      kube::parseExecCredential(fuzz::text(data, size), "client.authentication.k8s.io/v1");
  if (credential) {
    fuzz::require(!credential->token.empty());
  }
  return 0;
}
