#include "app/metrics_access.h"

#include <algorithm>
#include <cctype>

#include <openssl/evp.h>

namespace gpuplacement::app {

std::string ReviewCache::keyOf(std::string_view token, std::string_view verb,
                               std::string_view path) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(token.data(), token.size(), digest, &length, EVP_sha256(), nullptr);
  std::string key(reinterpret_cast<const char*>(digest), length);
  key.append(1, '\0').append(verb).append(1, '\0').append(path);
  return key;
}

std::optional<ReviewCache::Entry> ReviewCache::find(const std::string& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    return std::nullopt;
  }
  if (it->second.expires <= clock_.monotonicNow()) {
    entries_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void ReviewCache::store(const std::string& key, ScrapeVerdict verdict, std::string username) {
  if (capacity_ == 0) {
    return;
  }
  const auto now = clock_.monotonicNow();
  if (entries_.size() >= capacity_ && !entries_.count(key)) {
    std::erase_if(entries_, [now](const auto& entry) { return entry.second.expires <= now; });
  }
  if (entries_.size() >= capacity_ && !entries_.count(key)) {
    entries_.erase(std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; }));
  }
  entries_[key] = Entry{verdict, std::move(username), now + ttl_};
}

std::string bearerToken(std::string_view authorization) {
  // k8s.io/apiserver's bearertoken authenticator: trimmed, then "Bearer"
  // (any case), one space, the token, nothing after it.
  const auto notSpace = [](char c) { return !std::isspace(static_cast<unsigned char>(c)); };
  const auto first = std::find_if(authorization.begin(), authorization.end(), notSpace);
  const auto last = std::find_if(authorization.rbegin(), authorization.rend(), notSpace).base();
  if (first >= last) {
    return {};
  }
  const std::string_view trimmed(&*first, static_cast<std::size_t>(last - first));
  const auto space = trimmed.find(' ');
  if (space == std::string_view::npos) {
    return {};
  }
  std::string scheme(trimmed.substr(0, space));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string_view token = trimmed.substr(space + 1);
  if (scheme != "bearer" || token.empty() || token.find(' ') != std::string_view::npos) {
    return {};
  }
  return std::string(token);
}

MetricsAccessFilter::MetricsAccessFilter(TokenReviewer reviewToken, AccessReviewer reviewAccess,
                                         Logger& log, const runtime::Clock& clock,
                                         MetricsAccessOptions options)
    : reviewToken_(std::move(reviewToken)),
      reviewAccess_(std::move(reviewAccess)),
      log_(log),
      options_(options),
      cache_(options.cacheTtl, options.cacheCapacity, clock) {}

MetricsAccessFilter::MetricsAccessFilter(kube::KubeClient& client, Logger& log,
                                         const runtime::Clock& clock, MetricsAccessOptions options)
    : MetricsAccessFilter(
          [&client](std::string token) { return kube::reviewToken(client, std::move(token)); },
          [&client](kube::UserInfo user, std::string path, std::string verb) {
            return kube::reviewNonResourceAccess(client, std::move(user), std::move(path),
                                                 std::move(verb));
          },
          log, clock, options) {}

std::optional<HttpAnswer> MetricsAccessFilter::answerFor(ScrapeVerdict verdict,
                                                         const std::string& username) {
  switch (verdict) {
    case ScrapeVerdict::Unauthenticated:
      return HttpAnswer{401, "Unauthorized\n"};
    case ScrapeVerdict::Forbidden:
      return HttpAnswer{403, "Authorization denied for user " + username + "\n"};
    case ScrapeVerdict::Allowed:
      break;
  }
  return std::nullopt;
}

asio::awaitable<std::optional<HttpAnswer>> MetricsAccessFilter::check(HttpRequestHead request) {
  std::string token = bearerToken(request.authorization);
  if (token.empty()) {
    co_return answerFor(ScrapeVerdict::Unauthenticated, "");
  }
  std::string key = ReviewCache::keyOf(token, request.verb, request.path);
  if (const auto cached = cache_.find(key)) {
    ++cacheHits_;
    co_return answerFor(cached->verdict, cached->username);
  }
  if (inFlight_ >= options_.maxReviewsInFlight) {
    co_return HttpAnswer{429, "too many scrapes awaiting review, try again\n"};
  }
  ++inFlight_;
  auto answer = co_await review(std::move(token), std::move(request), std::move(key));
  --inFlight_;
  co_return answer;
}

asio::awaitable<std::optional<HttpAnswer>> MetricsAccessFilter::review(std::string token,
                                                                       HttpRequestHead request,
                                                                       std::string key) {
  ++tokenReviews_;
  auto identity = co_await reviewToken_(std::move(token));
  if (!identity) {
    log_.warn("metrics: the TokenReview failed", {{"error", identity.error().describe()}});
    co_return HttpAnswer{500, "Authentication failed\n"};
  }
  if (!identity->authenticated) {
    log_.debug("metrics: token not authenticated", {{"reason", identity->error}});
    cache_.store(key, ScrapeVerdict::Unauthenticated, "");
    co_return answerFor(ScrapeVerdict::Unauthenticated, "");
  }
  const std::string username = identity->user.username;
  ++accessReviews_;
  auto access = co_await reviewAccess_(std::move(identity->user), request.path, request.verb);
  if (!access) {
    log_.warn("metrics: the SubjectAccessReview failed",
              {{"user", username}, {"error", access.error().describe()}});
    co_return HttpAnswer{500, "Authorization for user " + username + " failed\n"};
  }
  const auto verdict = access->allowed ? ScrapeVerdict::Allowed : ScrapeVerdict::Forbidden;
  if (!access->allowed) {
    log_.debug("metrics: access denied",
               {{"user", username}, {"path", request.path}, {"reason", access->reason}});
  }
  cache_.store(key, verdict, username);
  co_return answerFor(verdict, username);
}

}  // namespace gpuplacement::app
