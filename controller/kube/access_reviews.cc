#include "kube/access_reviews.h"

#include "base/json_access.h"

namespace gpuplacement::kube {

using json = nlohmann::json;

json tokenReviewBody(const std::string& token) {
  return {{"apiVersion", "authentication.k8s.io/v1"},
          {"kind", "TokenReview"},
          {"spec", {{"token", token}}}};
}

TokenReviewResult tokenReviewFrom(const json& answer) {
  const auto& status = base::memberOf(answer, "status");
  TokenReviewResult result;
  result.authenticated = base::memberOf(status, "authenticated") == true;
  result.error = base::stringMember(status, "error");
  const auto& user = base::memberOf(status, "user");
  result.user.username = base::stringMember(user, "username");
  result.user.uid = base::stringMember(user, "uid");
  for (const auto& group : base::memberOf(user, "groups")) {
    if (group.is_string()) {
      result.user.groups.push_back(group.get<std::string>());
    }
  }
  const auto& extra = base::memberOf(user, "extra");
  if (extra.is_object()) {
    for (const auto& [key, values] : extra.items()) {
      auto& into = result.user.extra[key];
      for (const auto& value : values) {
        if (value.is_string()) {
          into.push_back(value.get<std::string>());
        }
      }
    }
  }
  // An answer that names nobody authenticates nobody.
  result.authenticated = result.authenticated && !result.user.username.empty();
  return result;
}

json accessReviewBody(const UserInfo& user, const std::string& path, const std::string& verb) {
  json spec = {{"user", user.username},
               {"nonResourceAttributes", {{"path", path}, {"verb", verb}}}};
  if (!user.uid.empty()) {
    spec["uid"] = user.uid;
  }
  if (!user.groups.empty()) {
    spec["groups"] = user.groups;
  }
  if (!user.extra.empty()) {
    spec["extra"] = user.extra;
  }
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"spec", std::move(spec)}};
}

AccessReviewResult accessReviewFrom(const json& answer) {
  const auto& status = base::memberOf(answer, "status");
  AccessReviewResult result;
  // `denied` wins over `allowed`: an authorizer that denies outright ends
  // the chain.
  result.allowed =
      base::memberOf(status, "allowed") == true && base::memberOf(status, "denied") != true;
  result.reason = base::stringMember(status, "reason");
  if (const auto error = base::stringMember(status, "evaluationError"); !error.empty()) {
    result.reason += (result.reason.empty() ? "" : "; ") + error;
  }
  return result;
}

asio::awaitable<ApiResult<TokenReviewResult>> reviewToken(KubeClient& client, std::string token) {
  auto answer =
      co_await client.create("/apis/authentication.k8s.io/v1/tokenreviews", tokenReviewBody(token));
  if (!answer) {
    co_return std::move(answer).error();
  }
  co_return tokenReviewFrom(*answer);
}

asio::awaitable<ApiResult<AccessReviewResult>> reviewNonResourceAccess(KubeClient& client,
                                                                       UserInfo user,
                                                                       std::string path,
                                                                       std::string verb) {
  auto answer = co_await client.create("/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                       accessReviewBody(user, path, verb));
  if (!answer) {
    co_return std::move(answer).error();
  }
  co_return accessReviewFrom(*answer);
}

}  // namespace gpuplacement::kube
