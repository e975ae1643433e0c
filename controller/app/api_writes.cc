#include "app/api_writes.h"

#include "app/resource_paths.h"
#include "base/json_access.h"
#include "base/time_format.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

// "deployments.apps", "jobs.batch": as RBAC names the resource.
std::string rbacResource(core::TargetKind kind) {
  const auto version = core::apiVersionOf(kind);
  return std::string(core::resourceOf(kind)) + "." +
         std::string(version.substr(0, version.find('/')));
}

// The operator's writes to the team's objects go under its own field
// manager, the name GitOps tools are told to leave alone.
std::string asFieldManager(std::string path) {
  return path + "?fieldManager=" + core::kFieldManager;
}

json replaceStatus(const json& status) {
  return json::array({{{"op", "add"}, {"path", "/status"}, {"value", status}}});
}

// replaceStatus's patch around a status already JSON text (the writer's
// held statuses are sent as they are, not parsed and turned to text
// again). A status computed for one object must not land on another that
// took its name (deleted and created again while the status waited): the
// patch first tests the uid, and the server refuses it whole when that
// fails.
std::string replaceStatusTextOf(const std::string& uid, const std::string& statusText) {
  std::string patch = "[";
  if (!uid.empty()) {
    patch += json{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid}}.dump();
    patch += ",";
  }
  patch += R"({"op":"add","path":"/status","value":)";
  patch += statusText;
  patch += "}]";
  return patch;
}

// kube-apiserver answers a JSON Patch it cannot apply with a bare 422 and
// this message, where a status that fails validation gets "... is invalid:"
// and its fields. `add /status` always applies: what failed is the test.
bool uidTestFailed(const kube::ApiError& error) {
  return error.status == 422 &&
         error.message == "the server rejected our request due to an error in our request";
}

TargetRead targetRead(core::TargetKind kind, const json& object) {
  return {core::targetFromJson(kind, object),
          base::stringMember(base::memberOf(object, "metadata"), "resourceVersion"),
          core::lastTemplateWriter(object, core::kFieldManager)};
}

}  // namespace

asio::awaitable<kube::ApiResult<TargetRead>> ApiWrites::readTarget(TargetKey target) {
  // With managedFields: who else writes the pod template is named from them.
  // Each path is a named local, never a temporary of the co_await
  // expression: g++ 12 frees a braced temporary ({ns, name}) there twice.
  const std::string path = targetPath(target);
  auto result = co_await client_.get(path, kube::KubeClient::Keep::All);
  if (!result) {
    co_return result.error();
  }
  co_return targetRead(target.kind, *result);
}

asio::awaitable<kube::ApiResult<TargetRead>> ApiWrites::patchTarget(TargetKey target, json patch) {
  const std::string path = asFieldManager(targetPath(target));
  const auto type = core::traitsOf(target.kind).write == core::WriteMethod::JsonPatch
                        ? kube::PatchType::Json
                        : kube::PatchType::Strategic;
  auto result = co_await client_.patch(path, patch, type, kube::KubeClient::Keep::All);
  noteRefusal("patch " + rbacResource(target.kind), target.object.ns,
              !result && result.error().forbidden());
  if (!result) {
    co_return result.error();
  }
  co_return targetRead(target.kind, *result);
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::patchPod(std::string ns, std::string name,
                                                               json patch) {
  const std::string path = asFieldManager(podPath({ns, name}));
  auto result = co_await client_.patch(path, patch, kube::PatchType::Strategic);
  noteRefusal("patch pods", ns, !result && result.error().forbidden());
  if (!result) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::applyKueueStatus(std::string statusPath,
                                                                       json body, std::string what,
                                                                       std::string ns) {
  const std::string path = asFieldManager(std::move(statusPath)) + "&force=true";
  auto result = co_await client_.patch(path, body, kube::PatchType::Apply);
  noteRefusal(what, ns, !result && result.error().forbidden());
  if (!result) {
    co_return result.error();
  }
  co_return base::Ok{};
}

void ApiWrites::noteRefusal(const std::string& what, const std::string& ns, bool forbidden) {
  const std::string key = what + "|" + ns;
  if (forbidden) {
    refused_[key] = ns.empty() ? what : what + " in namespace " + ns;
  } else {
    refused_.erase(key);
  }
}

std::string ApiWrites::refusals() const {
  std::string text;
  for (const auto& [key, description] : refused_) {
    text += (text.empty() ? "" : ", ") + description;
  }
  return text;
}

asio::awaitable<kube::ApiResult<json>> ApiWrites::replaceWorkloadStatusText(
    std::string ns, std::string name, std::string uid, std::string statusText) {
  const std::string path = workloadPath({ns, name}) + "/status";
  // Only the status of the answer is read: the rest comes by the watch.
  auto result =
      co_await client_.patchText(path, replaceStatusTextOf(uid, statusText), kube::PatchType::Json,
                                 kube::KubeClient::Keep::StatusOnly);
  noteRefusal("patch gpuworkloads.gpuplacement.io/status", ns,
              !result && result.error().forbidden());
  if (!result) {
    auto error = std::move(result).error();
    if (uidTestFailed(error)) {
      // The object the status was for is gone; another has its name.
      error.status = 404;
      error.reason = "NotFound";
      error.message = "GpuWorkload " + ns + "/" + name + " is no longer the object of uid " + uid;
    }
    co_return error;
  }
  co_return base::memberOf(*result, "status");  // as the server stored it
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::replacePolicyStatus(std::string name,
                                                                          json status) {
  const std::string path = policyPath(name) + "/status";
  const auto patch = replaceStatus(status);
  auto result = co_await client_.patch(path, patch, kube::PatchType::Json,
                                       kube::KubeClient::Keep::StatusOnly);
  if (!result) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::createNodeOverlay(json object) {
  auto result = co_await client_.create(nodeOverlaysPath(), object);
  noteRefusal("create nodeoverlays.karpenter.sh", "", !result && result.error().forbidden());
  // Already there: written by the last reconcile, not yet in the cache
  // (whose it is, the next reconcile reads from the cache).
  if (!result && !result.error().alreadyExists()) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::patchNodeOverlaySpec(std::string name,
                                                                           json spec) {
  json patch = json::object();
  patch["spec"] = std::move(spec);
  auto result = co_await client_.patch(nodeOverlayPath(name), patch, kube::PatchType::Merge);
  noteRefusal("patch nodeoverlays.karpenter.sh", "", !result && result.error().forbidden());
  if (!result) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::deleteNodeOverlay(std::string name) {
  auto result = co_await client_.remove(nodeOverlayPath(name));
  noteRefusal("delete nodeoverlays.karpenter.sh", "", !result && result.error().forbidden());
  if (!result && !result.error().notFound()) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::createClaimTemplate(json object) {
  const std::string ns = object["metadata"]["namespace"].get<std::string>();
  auto result = co_await client_.create(claimTemplatesPath(ns), object);
  noteRefusal("create resourceclaimtemplates.resource.k8s.io", ns,
              !result && result.error().forbidden());
  if (!result && !result.error().alreadyExists()) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::deleteClaimTemplate(std::string ns,
                                                                          std::string name) {
  auto result = co_await client_.remove(claimTemplatePath(ns, name));
  noteRefusal("delete resourceclaimtemplates.resource.k8s.io", ns,
              !result && result.error().forbidden());
  if (!result && !result.error().notFound()) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<kube::ApiResult<base::Ok>> ApiWrites::setFinalizers(
    std::string ns, std::string name, std::string resourceVersion,
    std::vector<std::string> finalizers) {
  const json patch = {
      {"metadata", {{"resourceVersion", resourceVersion}, {"finalizers", finalizers}}}};
  const std::string path = workloadPath({ns, name});
  auto result = co_await client_.patch(path, patch, kube::PatchType::Merge);
  if (!result) {
    co_return result.error();
  }
  co_return base::Ok{};
}

asio::awaitable<void> ApiWrites::recordEvent(std::string ns, std::string name, std::string uid,
                                             core::Event event, int count) {
  const std::string now = base::formatRfc3339(clock_.systemNow());
  const json body = {{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata", {{"generateName", name + "."}, {"namespace", ns}}},
                     {"involvedObject",
                      {{"apiVersion", "gpuplacement.io/v1alpha1"},
                       {"kind", "GpuWorkload"},
                       {"namespace", ns},
                       {"name", name},
                       {"uid", uid}}},
                     {"reason", event.reason},
                     {"message", event.message.substr(0, 1024)},
                     {"type", event.type},
                     {"source", {{"component", "gpu-placement-operator"}}},
                     {"reportingComponent", "gpuplacement.io/operator"},
                     {"reportingInstance", instance_},
                     {"firstTimestamp", now},
                     {"lastTimestamp", now},
                     {"count", count}};
  const std::string path = eventsPath(ns);
  auto result = co_await client_.create(path, body);
  if (!result) {
    log_.warn("cannot record event", {{"namespace", ns},
                                      {"name", name},
                                      {"reason", event.reason},
                                      {"error", result.error().describe()}});
  }
}

}  // namespace gpuplacement::app
