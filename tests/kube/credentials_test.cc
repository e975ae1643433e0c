#include "kube/credentials.h"

#include <fstream>

#include <doctest/doctest.h>

#include "runtime/run_sync.h"
#include "support/fake_clock.h"
#include "support/temp_dir.h"
#include "support/why_not.h"

namespace gpuplacement::kube {
namespace {

using testing::FakeClock;
using testing::TempDir;

int countRuns(const std::string& file) {
  std::ifstream in(file);
  int runs = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++runs;
  }
  return runs;
}

// A real plugin: a shell script that counts its runs and prints a token that
// expires at the time given in EXPIRY.
std::string writePlugin(const TempDir& dir, const std::string& expiry) {
  return dir.write(
      "plugin.sh",
      "#!/bin/sh\n"
      "echo run >> \"" +
          dir.path() +
          "/runs\"\n"
          "test -n \"$KUBERNETES_EXEC_INFO\" || exit 9\n"
          "n=$(wc -l < \"" +
          dir.path() +
          "/runs\")\n"
          "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
          "\"ExecCredential\",\"status\":{\"token\":\"token-%s\",\"expirationTimestamp\":"
          "\"" +
          expiry + "\"}}' \"$n\"\n",
      /*executable=*/true);
}

std::string header(CredentialSource& source, asio::io_context& context) {
  auto result = runtime::runSync(context, source.authorization());
  REQUIRE_MESSAGE(result.ok(), gpuplacement::testing::whyNot(result));
  return *result;
}

}  // namespace

TEST_CASE("exec plugin token is cached until it nearly expires, and after a 401") {
  TempDir dir;
  FakeClock clock;  // 2026-11-22T00:00:00Z
  ClientConfig config;
  config.server = "https://example";
  config.exec = ExecPlugin{writePlugin(dir, "2026-11-22T00:15:00Z"), {}, {},
                           "client.authentication.k8s.io/v1",        "", true};
  auto source = makeCredentialSource(config, clock);
  asio::io_context context;

  CHECK(header(*source, context) == "Bearer token-1");
  CHECK(header(*source, context) == "Bearer token-1");
  CHECK(countRuns(dir.path() + "/runs") == 1);

  clock.advance(std::chrono::minutes(14));  // within 30 s of expiry: refresh
  clock.advance(std::chrono::seconds(40));
  CHECK(header(*source, context) == "Bearer token-2");
  CHECK(countRuns(dir.path() + "/runs") == 2);

  source->invalidate();
  CHECK(header(*source, context) == "Bearer token-3");
}

TEST_CASE("exec plugin failures are errors that say what to do") {
  TempDir dir;
  FakeClock clock;
  asio::io_context context;
  ClientConfig config;

  config.exec =
      ExecPlugin{"gpu-placement-no-such-plugin", {},   {}, "client.authentication.k8s.io/v1",
                 "Install the AWS CLI v2.",      false};
  auto missing = makeCredentialSource(config, clock);
  auto result = runtime::runSync(context, missing->authorization());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message.find("Install the AWS CLI v2.") != std::string::npos);

  config.exec->command = dir.write("fail.sh", "#!/bin/sh\nexit 3\n", true);
  auto failing = makeCredentialSource(config, clock);
  result = runtime::runSync(context, failing->authorization());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message.find("exited with status 3") != std::string::npos);
}

TEST_CASE("ExecCredential parsing") {
  const std::string v1 = "client.authentication.k8s.io/v1";
  auto good = parseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
      R"("status":{"token":"k8s-aws-v1.abc","expirationTimestamp":"2026-11-22T00:14:00Z"}})",
      v1);
  REQUIRE(good.ok());
  CHECK(good->token == "k8s-aws-v1.abc");
  REQUIRE(good->expiresAt.has_value());

  auto noExpiry = parseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}})",
      v1);
  REQUIRE(noExpiry.ok());
  CHECK_FALSE(noExpiry->expiresAt.has_value());

  struct Case {
    const char* output;
    const char* field;
  };
  const Case cases[] = {
      {"not json", "exec"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Other"})", "exec.kind"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential"})",
       "exec.apiVersion"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})",
       "exec.status"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
       "exec.status.token"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
       R"("status":{"clientCertificateData":"x"}})",
       "exec.status.clientCertificateData"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
       R"("status":{"token":"t","expirationTimestamp":"tomorrow"}})",
       "exec.status.expirationTimestamp"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.output);
    auto parsed = parseExecCredential(c.output, v1);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().field == c.field);
  }
}

TEST_CASE("service-account token file is re-read after a minute, for rotation") {
  TempDir dir;
  FakeClock clock;
  asio::io_context context;
  const auto token = dir.write("token", "first\n");
  ClientConfig config;
  config.tokenFile = token;
  auto source = makeCredentialSource(config, clock);
  CHECK(header(*source, context) == "Bearer first");
  dir.write("token", "second");
  CHECK(header(*source, context) == "Bearer first");
  clock.advance(std::chrono::seconds(61));
  CHECK(header(*source, context) == "Bearer second");
}

}  // namespace gpuplacement::kube
