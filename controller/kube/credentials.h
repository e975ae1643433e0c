#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "kube/kubeconfig.h"
#include "runtime/asio.h"
#include "runtime/clock.h"

namespace gpuplacement::kube {

// Supplies the Authorization header. Client certificates need none; tokens
// may come from a string, a file that is rotated, or an exec plugin.
class CredentialSource {
 public:
  virtual ~CredentialSource() = default;
  // The header value ("Bearer ..."), or empty for none.
  virtual asio::awaitable<base::Result<std::string>> authorization() = 0;
  // The server answered 401: forget any cached credential.
  virtual void invalidate() {}
};

std::unique_ptr<CredentialSource> makeCredentialSource(const ClientConfig& config,
                                                       const runtime::Clock& clock);

// What an exec plugin printed: the token and, when given, when it expires.
struct ExecCredential {
  std::string token;
  std::optional<runtime::SystemTime> expiresAt;
};

// Parses an ExecCredential printed by a plugin; the error says which field.
base::Result<ExecCredential> parseExecCredential(const std::string& output,
                                                 const std::string& expectedApiVersion);

}  // namespace gpuplacement::kube
