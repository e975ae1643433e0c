// /metrics behind authentication and authorization, without an API server:
// the bearer-token reading, the review cache (fake clock), the filter's
// answers with scripted reviewers that count what they are asked, the
// serving certificate, and the HTTPS server end to end with curl. The
// reviews against the real API server are in tests/integration/chart_test.cc.
#include "app/metrics_access.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <doctest/doctest.h>
#include <openssl/x509.h>

#include "app/serving_certificate.h"
#include "runtime/run_sync.h"
#include "support/command.h"
#include "support/fake_clock.h"
#include "support/temp_dir.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;
using testing::FakeClock;

TEST_CASE("the bearer token is read as the API server reads it") {
  CHECK(bearerToken("Bearer abc.def") == "abc.def");
  CHECK(bearerToken("bearer abc") == "abc");
  CHECK(bearerToken("  BEARER abc  ") == "abc");
  CHECK(bearerToken("") == "");
  CHECK(bearerToken("Bearer") == "");
  CHECK(bearerToken("Bearer ") == "");
  CHECK(bearerToken("Basic dXNlcjpwYXNz") == "");
  CHECK(bearerToken("Bearer two tokens") == "");
  CHECK(bearerToken("Bearerabc") == "");
}

TEST_CASE("review answers: authenticated needs a name, denied wins over allowed") {
  const auto user = kube::tokenReviewFrom(json::parse(R"({"status": {"authenticated": true,
      "user": {"username": "system:serviceaccount:monitoring:prometheus", "uid": "u-1",
               "groups": ["system:serviceaccounts", "system:authenticated"],
               "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]}}}})"));
  CHECK(user.authenticated);
  CHECK(user.user.username == "system:serviceaccount:monitoring:prometheus");
  CHECK(user.user.groups.size() == 2);
  CHECK(user.user.extra.at("authentication.kubernetes.io/pod-name").at(0) == "prometheus-0");
  CHECK_FALSE(
      kube::tokenReviewFrom(json::parse(R"({"status": {"authenticated": true}})")).authenticated);
  const auto refused = kube::tokenReviewFrom(
      json::parse(R"({"status": {"authenticated": false, "error": "token expired"}})"));
  CHECK_FALSE(refused.authenticated);
  CHECK(refused.error == "token expired");
  CHECK_FALSE(
      kube::tokenReviewFrom(json::parse(R"({"status": {"authenticated": "yes"}})")).authenticated);

  // The review asks about exactly this user: name, uid, groups and extra.
  const auto body = kube::accessReviewBody(user.user, "/metrics", "get");
  CHECK(body["kind"] == "SubjectAccessReview");
  CHECK(body["spec"]["user"] == "system:serviceaccount:monitoring:prometheus");
  CHECK(body["spec"]["uid"] == "u-1");
  CHECK(body["spec"]["groups"].size() == 2);
  CHECK(body["spec"]["extra"]["authentication.kubernetes.io/pod-name"][0] == "prometheus-0");
  CHECK(body["spec"]["nonResourceAttributes"] == json{{"path", "/metrics"}, {"verb", "get"}});
  CHECK(kube::tokenReviewBody("t")["spec"] == json{{"token", "t"}});

  CHECK(kube::accessReviewFrom(json::parse(R"({"status": {"allowed": true}})")).allowed);
  CHECK_FALSE(
      kube::accessReviewFrom(json::parse(R"({"status": {"allowed": true, "denied": true}})"))
          .allowed);
  const auto denied = kube::accessReviewFrom(
      json::parse(R"({"status": {"allowed": false, "reason": "no RBAC policy matched"}})"));
  CHECK_FALSE(denied.allowed);
  CHECK(denied.reason == "no RBAC policy matched");
}

TEST_CASE("the review cache: entries expire after the TTL and the size stays bounded") {
  FakeClock clock;
  ReviewCache cache(std::chrono::seconds(60), 3, clock);
  const auto key = ReviewCache::keyOf("secret-token", "get", "/metrics");
  CHECK(key.find("secret-token") == std::string::npos);  // a digest, not the token
  CHECK(key != ReviewCache::keyOf("secret-token", "head", "/metrics"));
  CHECK(key != ReviewCache::keyOf("other-token", "get", "/metrics"));
  CHECK_FALSE(cache.find(key));
  cache.store(key, ScrapeVerdict::Allowed, "prometheus");
  clock.advance(std::chrono::seconds(59));
  REQUIRE(cache.find(key));
  CHECK(cache.find(key)->verdict == ScrapeVerdict::Allowed);
  CHECK(cache.find(key)->username == "prometheus");
  clock.advance(std::chrono::seconds(1));
  CHECK_FALSE(cache.find(key));
  CHECK(cache.size() == 0);

  // Full: the entry nearest its expiry makes room.
  for (int i = 0; i < 3; ++i) {
    cache.store(ReviewCache::keyOf("t" + std::to_string(i), "get", "/metrics"),
                ScrapeVerdict::Forbidden, "u" + std::to_string(i));
    clock.advance(std::chrono::seconds(1));
  }
  cache.store(ReviewCache::keyOf("t3", "get", "/metrics"), ScrapeVerdict::Allowed, "u3");
  CHECK(cache.size() == 3);
  CHECK_FALSE(cache.find(ReviewCache::keyOf("t0", "get", "/metrics")));
  CHECK(cache.find(ReviewCache::keyOf("t1", "get", "/metrics")));
  CHECK(cache.find(ReviewCache::keyOf("t3", "get", "/metrics")));
  // A thousand distinct tokens never grow it past its bound.
  for (int i = 0; i < 1000; ++i) {
    cache.store(ReviewCache::keyOf("flood" + std::to_string(i), "get", "/metrics"),
                ScrapeVerdict::Unauthenticated, "");
  }
  CHECK(cache.size() == 3);
}

// Scripted reviewers: who each token is and what each user may do, and a
// count of every review asked for.
struct Reviewers {
  std::map<std::string, std::string> users = {{"reader-token", "system:serviceaccount:m:prom"},
                                              {"nobody-token", "system:serviceaccount:m:other"}};
  std::set<std::string> readers = {"system:serviceaccount:m:prom"};
  int tokenReviews = 0;
  int accessReviews = 0;
  bool failing = false;
  std::chrono::milliseconds delay{0};
  std::vector<std::string> asked;  // "user verb path"

  MetricsAccessFilter::TokenReviewer tokenReviewer() {
    return [this](std::string token) -> asio::awaitable<kube::ApiResult<kube::TokenReviewResult>> {
      ++tokenReviews;
      if (delay.count() > 0) {
        asio::steady_timer timer(co_await asio::this_coro::executor, delay);
        co_await timer.async_wait(asio::use_awaitable);
      }
      if (failing) {
        co_return kube::ApiError{503, "ServiceUnavailable", "etcd is down", {}, false};
      }
      kube::TokenReviewResult result;
      if (const auto it = users.find(token); it != users.end()) {
        result.authenticated = true;
        result.user.username = it->second;
      }
      co_return result;
    };
  }
  MetricsAccessFilter::AccessReviewer accessReviewer() {
    return [this](kube::UserInfo user, std::string path,
                  std::string verb) -> asio::awaitable<kube::ApiResult<kube::AccessReviewResult>> {
      ++accessReviews;
      asked.push_back(user.username + " " + verb + " " + path);
      co_return kube::AccessReviewResult{readers.count(user.username) == 1, ""};
    };
  }
};

HttpRequestHead scrape(const std::string& authorization, const std::string& verb = "get") {
  return {verb, "/metrics", authorization};
}

TEST_CASE("the filter: 401 without a valid token, 403 without permission, through with it") {
  asio::io_context context;
  FakeClock clock;
  Logger log(LogLevel::Error, LogFormat::Text);
  Reviewers reviewers;
  MetricsAccessFilter filter(reviewers.tokenReviewer(), reviewers.accessReviewer(), log, clock);
  const auto check = [&](HttpRequestHead request) {
    return runtime::runSync(context, filter.check(std::move(request)));
  };

  // No token: refused at once, nothing asked.
  auto answer = check(scrape(""));
  REQUIRE(answer);
  CHECK(answer->status == 401);
  CHECK(check(scrape("Basic dXNlcjpwYXNz"))->status == 401);
  CHECK(reviewers.tokenReviews == 0);

  // A token the API server does not know: one TokenReview, no access review.
  CHECK(check(scrape("Bearer forged"))->status == 401);
  CHECK(reviewers.tokenReviews == 1);
  CHECK(reviewers.accessReviews == 0);

  // Known, not allowed: 403 naming the user; the review was about get /metrics.
  answer = check(scrape("Bearer nobody-token"));
  REQUIRE(answer);
  CHECK(answer->status == 403);
  CHECK(answer->body == "Authorization denied for user system:serviceaccount:m:other\n");
  CHECK(reviewers.asked.back() == "system:serviceaccount:m:other get /metrics");

  // Allowed: through.
  CHECK_FALSE(check(scrape("Bearer reader-token")));
  CHECK(reviewers.asked.back() == "system:serviceaccount:m:prom get /metrics");
  CHECK(reviewers.tokenReviews == 3);
  CHECK(reviewers.accessReviews == 2);

  // Within the minute, every verdict comes from the cache.
  for (int i = 0; i < 3; ++i) {
    clock.advance(std::chrono::seconds(15));
    CHECK(check(scrape("Bearer forged"))->status == 401);
    CHECK(check(scrape("Bearer nobody-token"))->status == 403);
    CHECK_FALSE(check(scrape("Bearer reader-token")));
  }
  CHECK(reviewers.tokenReviews == 3);
  CHECK(reviewers.accessReviews == 2);
  CHECK(filter.cacheHits() == 9);
  // HEAD is its own verb, as in controller-runtime: reviewed apart.
  CHECK_FALSE(check(scrape("Bearer reader-token", "head")));
  CHECK(reviewers.accessReviews == 3);
  CHECK(reviewers.asked.back() == "system:serviceaccount:m:prom head /metrics");

  // A minute on, the token is reviewed again: a revoked role or token
  // stops working within the TTL.
  clock.advance(std::chrono::seconds(16));
  reviewers.readers.clear();
  CHECK(check(scrape("Bearer reader-token"))->status == 403);
  CHECK(filter.tokenReviews() == 5);
  CHECK(filter.accessReviews() == 4);
}

TEST_CASE("the filter: a failed review is a 500 and is not cached") {
  asio::io_context context;
  FakeClock clock;
  Logger log(LogLevel::Error, LogFormat::Text);
  Reviewers reviewers;
  reviewers.failing = true;
  MetricsAccessFilter filter(reviewers.tokenReviewer(), reviewers.accessReviewer(), log, clock);
  auto answer = runtime::runSync(context, filter.check(scrape("Bearer reader-token")));
  REQUIRE(answer);
  CHECK(answer->status == 500);
  reviewers.failing = false;
  CHECK_FALSE(runtime::runSync(context, filter.check(scrape("Bearer reader-token"))));
  CHECK(reviewers.tokenReviews == 2);
}

TEST_CASE("the cache's effect: a scrape every 15 s costs half a review a scrape") {
  asio::io_context context;
  FakeClock clock;
  Logger log(LogLevel::Error, LogFormat::Text);
  Reviewers reviewers;
  MetricsAccessFilter filter(reviewers.tokenReviewer(), reviewers.accessReviewer(), log, clock);
  // Two Prometheus replicas (one token each), ten minutes.
  reviewers.users["replica-b"] = "system:serviceaccount:m:prom";
  int scrapes = 0;
  for (int second = 0; second < 600; second += 15) {
    for (const char* token : {"Bearer reader-token", "Bearer replica-b"}) {
      CHECK_FALSE(runtime::runSync(context, filter.check(scrape(token))));
      ++scrapes;
    }
    clock.advance(std::chrono::seconds(15));
  }
  const int reviews = reviewers.tokenReviews + reviewers.accessReviews;
  MESSAGE(scrapes << " scrapes, " << reviews << " reviews");
  // Each token: one TokenReview and one SubjectAccessReview a minute, the
  // first scrape of the four in that minute.
  CHECK(scrapes == 80);
  CHECK(reviews == 40);
}

TEST_CASE("the filter: past the reviews in flight, a scrape is answered 429 at once") {
  asio::io_context context;
  FakeClock clock;
  Logger log(LogLevel::Error, LogFormat::Text);
  Reviewers reviewers;
  reviewers.delay = std::chrono::milliseconds(50);
  MetricsAccessOptions options;
  options.maxReviewsInFlight = 2;
  MetricsAccessFilter filter(reviewers.tokenReviewer(), reviewers.accessReviewer(), log, clock,
                             options);
  std::vector<unsigned> statuses;
  for (int i = 0; i < 4; ++i) {
    asio::co_spawn(
        context,
        [&, i]() -> asio::awaitable<void> {
          auto answer = co_await filter.check(scrape("Bearer unknown-" + std::to_string(i)));
          statuses.push_back(answer ? answer->status : 200);
        },
        asio::detached);
  }
  context.run();
  std::sort(statuses.begin(), statuses.end());
  CHECK(statuses == std::vector<unsigned>{401, 401, 429, 429});
  CHECK(reviewers.tokenReviews == 2);
}

// The certificate a context serves, as its subject and serial.
std::string servedIdentity(asio::ssl::context& context) {
  X509* certificate = SSL_CTX_get0_certificate(context.native_handle());
  REQUIRE(certificate);
  char subject[256];
  X509_NAME_oneline(X509_get_subject_name(certificate), subject, sizeof subject);
  BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get_serialNumber(certificate), nullptr);
  char* hex = BN_bn2hex(serial);
  std::string identity = std::string(subject) + " " + hex;
  OPENSSL_free(hex);
  BN_free(serial);
  return identity;
}

void makeCertificate(const std::string& dir, const std::string& name) {
  const auto made = testing::runCommand(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=" +
      name + " -keyout " + dir + "/tls.key.new -out " + dir + "/tls.crt.new 2>&1 && mv " + dir +
      "/tls.key.new " + dir + "/tls.key && mv " + dir + "/tls.crt.new " + dir + "/tls.crt");
  REQUIRE_MESSAGE(made.exitCode == 0, made.out);
}

TEST_CASE("the serving certificate: self-signed, or from a directory and re-read when renewed") {
  auto self = ServingCertificate::selfSigned("gpo-7d9f-abcde");
  REQUIRE(self.ok());
  CHECK((*self)->source() == "self-signed");
  CHECK(servedIdentity(*(*self)->current()).find("/CN=gpu-placement-operator") == 0);

  testing::TempDir dir;
  FakeClock clock;
  const auto missing = ServingCertificate::fromDirectory(dir.path(), clock);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().describe() == "--metrics-cert-dir: cannot read " + dir.path() + "/tls.crt");

  makeCertificate(dir.path(), "first");
  std::vector<std::string> said;
  auto served = ServingCertificate::fromDirectory(
      dir.path(), clock, [&said](const std::string& message) { said.push_back(message); });
  REQUIRE_MESSAGE(served.ok(), served.error().describe());
  const auto first = servedIdentity(*(*served)->current());
  CHECK(first.find("/CN=first") == 0);

  // cert-manager renews: the files change; the next check (10 s) serves it.
  makeCertificate(dir.path(), "second");
  CHECK(servedIdentity(*(*served)->current()) == first);
  clock.advance(std::chrono::seconds(10));
  CHECK(servedIdentity(*(*served)->current()).find("/CN=second") == 0);
  REQUIRE(said.size() == 1);
  CHECK(said[0].find("serving the renewed metrics certificate") == 0);

  // A key that does not match: said once, and the certificate in force stays.
  const auto second = servedIdentity(*(*served)->current());
  testing::TempDir other;
  makeCertificate(other.path(), "other");
  std::filesystem::copy_file(other.path() + "/tls.key", dir.path() + "/tls.key",
                             std::filesystem::copy_options::overwrite_existing);
  for (int i = 0; i < 3; ++i) {
    clock.advance(std::chrono::seconds(10));
    CHECK(servedIdentity(*(*served)->current()) == second);
  }
  REQUIRE(said.size() == 2);
  CHECK(said[1].find("keeping the one in force") != std::string::npos);
  CHECK(said[1].find("tls.key") != std::string::npos);
  // Garbage at start is refused, naming the file.
  dir.write("tls.crt", "not a certificate");
  const auto garbage = ServingCertificate::fromDirectory(dir.path(), clock);
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().message.find(dir.path() + "/tls.crt: not a PEM certificate") == 0);
}

TEST_CASE("HTTPS end to end: curl gets 401, 403 and the metrics, and only over TLS") {
  asio::io_context context;
  FakeClock clock;
  Logger log(LogLevel::Error, LogFormat::Text);
  Reviewers reviewers;
  MetricsAccessFilter filter(reviewers.tokenReviewer(), reviewers.accessReviewer(), log, clock);
  auto certificate = ServingCertificate::selfSigned("localhost");
  REQUIRE(certificate.ok());
  HttpServeOptions options;
  options.tls = [&] { return (*certificate)->current(); };
  options.filter = [&](HttpRequestHead request) { return filter.check(std::move(request)); };
  auto server = HttpServer::listen(context.get_executor(), "127.0.0.1:0",
                                   {{"/metrics",
                                     [] {
                                       return HttpAnswer{200, "# TYPE up gauge\nup 1\n"};
                                     }}},
                                   options);
  REQUIRE(server.ok());
  const std::string url = "https://127.0.0.1:" + std::to_string((*server)->port()) + "/metrics";
  asio::co_spawn(context, (*server)->run(), asio::detached);
  auto guard = asio::make_work_guard(context);
  std::thread loop([&] { context.run(); });

  const auto get = [&](const std::string& arguments) {
    return testing::runCommand("curl -s --max-time 5 -w '\\n%{http_code}' " + arguments + " " +
                               url);
  };
  CHECK(get("-k").out == "Unauthorized\n\n401");
  CHECK(get("-k -H 'Authorization: Bearer nobody-token'").out ==
        "Authorization denied for user system:serviceaccount:m:other\n\n403");
  CHECK(get("-k -H 'Authorization: Bearer reader-token'").out == "# TYPE up gauge\nup 1\n\n200");
  CHECK(get("-k -H 'Authorization: Bearer reader-token' -X POST").out.ends_with("405"));
  // Self-signed: a client that verifies refuses it; plain HTTP gets nothing.
  CHECK(get("").exitCode == 60);  // curl: peer certificate cannot be authenticated
  const auto plain =
      testing::runCommand("curl -s --max-time 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
                          std::to_string((*server)->port()) + "/metrics");
  CHECK(plain.out != "200");

  asio::post(context, [&] { (*server)->stop(); });
  guard.reset();
  context.stop();
  loop.join();
}

}  // namespace
}  // namespace gpuplacement::app
