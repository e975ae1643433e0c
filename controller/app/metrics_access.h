#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "app/http_server.h"
#include "app/logging.h"
#include "kube/access_reviews.h"
#include "runtime/clock.h"

namespace gpuplacement::app {

// What the two reviews said of one bearer token, for one verb and path.
enum class ScrapeVerdict { Unauthenticated, Forbidden, Allowed };

// Review verdicts kept for a short while, so that a scraper every 15 s
// costs the API server two reviews a minute instead of two a scrape. Keyed
// by a SHA-256 of the token with the verb and path, never the token itself;
// bounded: when full, the expired entries go, then the one nearest expiry.
class ReviewCache {
 public:
  struct Entry {
    ScrapeVerdict verdict;
    std::string username;
    runtime::MonotonicTime expires;
  };

  ReviewCache(std::chrono::seconds ttl, std::size_t capacity, const runtime::Clock& clock)
      : ttl_(ttl), capacity_(capacity), clock_(clock) {}

  static std::string keyOf(std::string_view token, std::string_view verb, std::string_view path);
  // The entry while it is fresh; an expired one is forgotten.
  std::optional<Entry> find(const std::string& key);
  void store(const std::string& key, ScrapeVerdict verdict, std::string username);
  std::size_t size() const { return entries_.size(); }

 private:
  std::chrono::seconds ttl_;
  std::size_t capacity_;
  const runtime::Clock& clock_;
  std::unordered_map<std::string, Entry> entries_;
};

// The token of an "Authorization: Bearer TOKEN" header, read as the API
// server's bearer-token authenticator reads it; empty when there is none.
std::string bearerToken(std::string_view authorization);

struct MetricsAccessOptions {
  std::chrono::seconds cacheTtl{60};
  std::size_t cacheCapacity = 1024;
  // Scrapes waiting on a review at once; more are answered 429, so a flood
  // of unknown tokens cannot spend the operator's request budget.
  int maxReviewsInFlight = 8;
};

// controller-runtime's filters.WithAuthenticationAndAuthorization: a
// request needs a bearer token that the API server authenticates (a
// TokenReview; 401 otherwise) for a user it allows to `verb` the path (a
// SubjectAccessReview for the non-resource URL; 403 otherwise). Reviews
// are coroutines on the event loop like every other API call, and their
// verdicts are cached (ReviewCache); a review that fails is answered 500
// and not cached.
class MetricsAccessFilter {
 public:
  using TokenReviewer =
      std::function<asio::awaitable<kube::ApiResult<kube::TokenReviewResult>>(std::string)>;
  using AccessReviewer = std::function<asio::awaitable<kube::ApiResult<kube::AccessReviewResult>>(
      kube::UserInfo, std::string path, std::string verb)>;

  MetricsAccessFilter(TokenReviewer reviewToken, AccessReviewer reviewAccess, Logger& log,
                      const runtime::Clock& clock, MetricsAccessOptions options = {});
  // Reviews by the API server `client` talks to.
  MetricsAccessFilter(kube::KubeClient& client, Logger& log, const runtime::Clock& clock,
                      MetricsAccessOptions options = {});

  // nullopt lets the request through; otherwise the answer to send instead.
  asio::awaitable<std::optional<HttpAnswer>> check(HttpRequestHead request);

  // What the reviews cost: requests sent to the API server, and requests
  // answered from the cache.
  std::uint64_t tokenReviews() const { return tokenReviews_; }
  std::uint64_t accessReviews() const { return accessReviews_; }
  std::uint64_t cacheHits() const { return cacheHits_; }

 private:
  asio::awaitable<std::optional<HttpAnswer>> review(std::string token, HttpRequestHead request,
                                                    std::string key);
  static std::optional<HttpAnswer> answerFor(ScrapeVerdict verdict, const std::string& username);

  TokenReviewer reviewToken_;
  AccessReviewer reviewAccess_;
  Logger& log_;
  MetricsAccessOptions options_;
  ReviewCache cache_;
  int inFlight_ = 0;
  std::uint64_t tokenReviews_ = 0;
  std::uint64_t accessReviews_ = 0;
  std::uint64_t cacheHits_ = 0;
};

}  // namespace gpuplacement::app
