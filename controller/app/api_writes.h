#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/logging.h"
#include "app/target_key.h"
#include "core/kinds/target.h"
#include "core/plan/workload_plan.h"
#include "kube/client.h"
#include "runtime/clock.h"

namespace gpuplacement::app {

// A target as the server answered, with the resourceVersion a
// precondition needs.
struct TargetRead {
  core::TargetState state;
  std::string resourceVersion;
  std::string templateWriter;  // core::lastTemplateWriter: who else wrote the pod template
};

// The operator's requests to the API server, one request each: typed
// results, errors as values. Deciding what to send, and what to do about a
// 409, is the reconcilers' job.
class ApiWrites {
 public:
  ApiWrites(kube::KubeClient& client, Logger& log, const runtime::Clock& clock,
            std::string instance)
      : client_(client), log_(log), clock_(clock), instance_(std::move(instance)) {}

  asio::awaitable<kube::ApiResult<TargetRead>> readTarget(TargetKey target);
  // A strategic merge patch, or a JSON patch for a kind written so
  // (core::WriteMethod); its resourceVersion is the precondition.
  asio::awaitable<kube::ApiResult<TargetRead>> patchTarget(TargetKey target, nlohmann::json patch);
  // A strategic merge patch of a pod (its resourceVersion is the precondition).
  asio::awaitable<kube::ApiResult<base::Ok>> patchPod(std::string ns, std::string name,
                                                      nlohmann::json patch);
  // Replaces the whole status, given as JSON text (a JSON Patch "add" of
  // /status, so fields the new one lacks do not linger); answers the status
  // as the server stored it. Only on the object of `uid` (none: any): on
  // another that has taken the name since, it writes nothing and answers 404.
  asio::awaitable<kube::ApiResult<nlohmann::json>> replaceWorkloadStatusText(
      std::string ns, std::string name, std::string uid, std::string statusText);
  asio::awaitable<kube::ApiResult<base::Ok>> replacePolicyStatus(std::string name,
                                                                 nlohmann::json status);
  // The NodeOverlays sharing a policy's prices (core/plan/price_sharing.h): a
  // whole object created (409: already there), a spec merged in, one
  // deleted (404: already gone).
  asio::awaitable<kube::ApiResult<base::Ok>> createNodeOverlay(nlohmann::json object);
  asio::awaitable<kube::ApiResult<base::Ok>> patchNodeOverlaySpec(std::string name,
                                                                  nlohmann::json spec);
  asio::awaitable<kube::ApiResult<base::Ok>> deleteNodeOverlay(std::string name);
  // A workload's ResourceClaimTemplate (core/cluster/dra.h): created whole (409:
  // already there, its name says it is the same), deleted (404: gone).
  asio::awaitable<kube::ApiResult<base::Ok>> createClaimTemplate(nlohmann::json object);
  asio::awaitable<kube::ApiResult<base::Ok>> deleteClaimTemplate(std::string ns, std::string name);
  // A server-side apply of a Kueue object's status (a Workload's admission
  // check state, an AdmissionCheck's Active condition) at `statusPath`,
  // under the operator's field manager, forced: Kueue writes the check's
  // entry first (Pending), and the answer is the operator's to give.
  // `what` names the permission for /readyz ("patch workloads/status.kueue.x-k8s.io").
  asio::awaitable<kube::ApiResult<base::Ok>> applyKueueStatus(std::string statusPath,
                                                              nlohmann::json body, std::string what,
                                                              std::string ns);
  // The whole finalizer list, with a resourceVersion precondition.
  asio::awaitable<kube::ApiResult<base::Ok>> setFinalizers(std::string ns, std::string name,
                                                           std::string resourceVersion,
                                                           std::vector<std::string> finalizers);
  // Best effort: an Event that cannot be written is logged, never an error.
  // `count`: how many times it happened (identical ones folded together).
  asio::awaitable<void> recordEvent(std::string ns, std::string name, std::string uid,
                                    core::Event event, int count = 1);

  // The writes the server refused with 403 and has not allowed since, for
  // /readyz ("patch jobs.batch in namespace ml"); empty when none.
  std::string refusals() const;

 private:
  // Notes a 403 on `what` in `ns`, or forgets it once the write went through.
  void noteRefusal(const std::string& what, const std::string& ns, bool forbidden);

  kube::KubeClient& client_;
  Logger& log_;
  const runtime::Clock& clock_;
  std::string instance_;                        // this replica, for Events
  std::map<std::string, std::string> refused_;  // "what|ns" -> "what in namespace ns"
};

}  // namespace gpuplacement::app
