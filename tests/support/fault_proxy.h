#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/asio.h"

namespace gpuplacement::testing {

// What the proxy does to a request a rule matches.
enum class Fault {
  Respond,             // answer `status` itself (with Retry-After); the server never sees it
  ResetBeforeForward,  // reset the connection; the server never sees the request
  ResetAfterForward,  // forward, let the server answer, reset: the server acted, the answer is lost
  Delay,              // hold the server's answer for `delay`
  TruncateStream,     // relay a streamed answer's header, then half of its next chunk, then close
  ResetMidStream,     // relay a streamed answer's header and first chunk, then reset
};

// A fault for the next `times` requests that match. method: "GET", "PATCH",
// ..., "WATCH" (a GET with watch=1) or "" for any; path: a substring of the
// target, "" for any.
struct FaultRule {
  std::string method;
  std::string path;
  Fault fault = Fault::Respond;
  unsigned status = 503;
  int retryAfterSeconds = -1;  // -1: no Retry-After header
  std::chrono::milliseconds delay{0};
  int times = 1;  // -1: until clearRules()
};

// One request as the proxy saw it.
struct ProxiedRequest {
  std::string method;  // as sent; watches are "GET"
  std::string target;
  bool watch = false;
  std::chrono::steady_clock::time_point at;  // when the whole request had arrived
  unsigned status = 0;  // the server's answer (also when the client never got it); 0: none
  std::string fault;    // the fault applied, "" for none
  std::string userAgent;
};

// A TLS-terminating proxy on loopback between the operator and the real API
// server, with the serving certificate of the control plane (valid for
// 127.0.0.1), so a kubeconfig pointing at it differs only in the port. It
// forwards Authorization as it is, so token credentials pass; client
// certificates do not. It runs on a thread of its own: tests drive it from
// theirs while the operator runs as another process.
//
// Each client connection gets its own connection to the server, so a reset
// on one side is a reset of exactly one exchange.
class FaultProxy {
 public:
  // `upstream`: "https://127.0.0.1:PORT"; `pkiDir` holds apiserver.crt/.key.
  FaultProxy(const std::string& upstream, const std::string& pkiDir);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  // A copy of `kubeconfig` whose server is this proxy.
  std::string kubeconfigThrough(const std::string& kubeconfig, const std::string& path) const;

  void addRule(FaultRule rule);
  void clearRules();
  // Every watch stream open now stops relaying (both ways quiet, connection
  // open) until the proxy stops or the client gives up; new ones are not.
  int stallOpenStreams();
  // Every watch stream open now is reset (TCP RST to the client).
  int resetOpenStreams();
  int openStreams();

  std::vector<ProxiedRequest> requests() const;
  int rulesLeft() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  unsigned short port_ = 0;
  std::thread thread_;
};

// Whether `requests` ever exceeded a token bucket of `qps` and `burst`
// (client-go's and ours): in every window, at most burst + qps x its length
// (plus `slack` requests for timestamps taken at the proxy, not the client).
// Returns a description of the worst window when exceeded, "" when not.
std::string exceedsRate(const std::vector<ProxiedRequest>& requests, double qps, int burst,
                        int slack);

}  // namespace gpuplacement::testing
