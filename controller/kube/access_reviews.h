#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/client.h"

namespace gpuplacement::kube {

// A user as the API server's authenticators know it (authentication.k8s.io
// UserInfo): what a SubjectAccessReview asks about.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

struct TokenReviewResult {
  bool authenticated = false;
  UserInfo user;
  std::string error;  // the server's reason when not authenticated
};

struct AccessReviewResult {
  bool allowed = false;
  std::string reason;
};

// Who a bearer token belongs to: a TokenReview (create
// tokenreviews.authentication.k8s.io), the audiences left to the server's
// own, as controller-runtime's metrics filter does.
asio::awaitable<ApiResult<TokenReviewResult>> reviewToken(KubeClient& client, std::string token);

// Whether `user` may `verb` the non-resource URL `path` (e.g. get
// /metrics): a SubjectAccessReview (create
// subjectaccessreviews.authorization.k8s.io).
asio::awaitable<ApiResult<AccessReviewResult>> reviewNonResourceAccess(KubeClient& client,
                                                                       UserInfo user,
                                                                       std::string path,
                                                                       std::string verb);

// The bodies sent and the answers read, apart so that they can be checked
// without a server.
nlohmann::json tokenReviewBody(const std::string& token);
TokenReviewResult tokenReviewFrom(const nlohmann::json& answer);
nlohmann::json accessReviewBody(const UserInfo& user, const std::string& path,
                                const std::string& verb);
AccessReviewResult accessReviewFrom(const nlohmann::json& answer);

}  // namespace gpuplacement::kube
