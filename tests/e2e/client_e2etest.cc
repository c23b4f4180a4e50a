// SPDX-License-Identifier: Apache-2.0
// The runner's client against a real perfwarden-server (server::App on an ephemeral loopback port,
// real PostgreSQL): spooled runs are pushed and read back, re-posts count as already present,
// bad uploads move to rejected/ with the server's error, and when the server is down, the token
// is wrong or PostgreSQL is away, nothing leaves the spool; afterwards every run is stored
// exactly once. Retries wait on a fake sleeper, so no test sleeps through a backoff.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/server_config.h"
#include "core/version.h"
#include "net/http_client.h"
#include "net/retry.h"
#include "runner/client/spool.h"
#include "runner/client/uploader.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/test_server.h"

namespace perfwarden::client {
// The HTTP client and its retries are net/'s.
using net::HttpClient;
using net::HttpClientOptions;
using net::HttpRequest;
using net::RetryPolicy;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

std::string RunId(int n) { return testing::TestRunId(n); }

std::string Upload(int n, const std::string& project = "proj") {
  char sha[48];
  std::snprintf(sha, sizeof(sha), "%040x", n + 0xabc);
  return json{{"id", RunId(n)},
              {"project", project},
              {"branch", "main"},
              {"commit", {{"sha", sha}, {"subject", "commit"}}},
              {"testbed", {{"name", "bed-1"}, {"fingerprint", {{"cores", 2}}}}},
              {"results",
               {{{"suite", "s"},
                 {"benchmark", "BM_A"},
                 {"metric", "real_time"},
                 {"unit", "ns"},
                 {"direction", "lower"},
                 {"values", {1.0 + n, 2.0 + n, 3.0 + n}}}}}}
      .dump();
}

// A loopback port that nothing listens on (bound, then released).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ClientE2eTest : public perfwarden::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    char pattern[] = "/tmp/perfwarden-client-e2e-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    temp_ = pattern;
    admin_ = auth::GenerateToken().value();
    config::ServerConfig config = perfwarden::testing::TestServerConfig(dsn_, admin_);
    config.pool_size = 2;
    auto app = server::App::Start(config);
    ASSERT_TRUE(app.has_value()) << app.error().ToString();
    app_ = std::move(*app);
    url_ = "http://127.0.0.1:" + std::to_string(app_->port());
    admin_http_ =
        std::make_unique<perfwarden::testing::HttpClient>(static_cast<std::uint16_t>(app_->port()));
    ASSERT_EQ(admin_http_->Post("/api/v1/projects", R"({"name":"proj"})", admin_).status, 201);
    token_ = CreateToken({"ingest", "read"});
    auto spool = Spool::Open(temp_ / "spool");
    ASSERT_TRUE(spool.has_value()) << spool.error().ToString();
    spool_.emplace(std::move(*spool));
    auto http = HttpClient::Create();
    ASSERT_TRUE(http.has_value()) << http.error().ToString();
    http_.emplace(std::move(*http));
    policy_.max_attempts = 3;
    options_.sleep = [this](milliseconds delay) { slept_.push_back(delay.count()); };
    options_.seed = 7;
  }

  void TearDown() override {
    admin_http_.reset();
    if (app_) app_->Stop();
    if (!temp_.empty()) fs::remove_all(temp_);
  }

  std::string CreateToken(const std::vector<std::string>& scopes) {
    auto answer = admin_http_->Post("/api/v1/projects/proj/tokens",
                                    json{{"name", "t"}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(answer.status, 201) << answer.body;
    return answer.Json().value("token", "");
  }

  size_t RunCount() {
    auto answer = admin_http_->Get("/api/v1/projects/proj/runs?limit=1000", admin_);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return answer.Json()["runs"].size();
  }

  void SpoolRuns(std::initializer_list<int> numbers) {
    for (int n : numbers) ASSERT_TRUE(spool_->Put(RunId(n), Upload(n)).has_value());
  }

  Result<PushReport> Push(const std::string& url, const std::string& token,
                          std::vector<PushEvent>* events = nullptr) {
    PushProgress progress;
    if (events != nullptr) progress = [events](const PushEvent& e) { events->push_back(e); };
    return PushAll(*spool_, *http_, url, token, policy_, progress, options_);
  }

  fs::path temp_;
  std::string admin_, token_, url_;
  std::unique_ptr<server::App> app_;
  std::unique_ptr<perfwarden::testing::HttpClient> admin_http_;
  std::optional<Spool> spool_;
  std::optional<HttpClient> http_;
  RetryPolicy policy_;
  PushOptions options_;
  std::vector<int64_t> slept_;
};

TEST_F(ClientE2eTest, PushesSpooledRunsAndReadsThemBack) {
  SpoolRuns({1, 2, 3});
  std::vector<PushEvent> events;
  auto report = Push(url_ + "/", token_, &events);
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sent, 3u);
  EXPECT_EQ(report->already_present + report->rejected + report->remaining, 0u);
  EXPECT_TRUE(spool_->List().value().empty());
  ASSERT_EQ(events.size(), 3u);
  for (const PushEvent& event : events) EXPECT_EQ(event.kind, PushEvent::Kind::kSent);
  for (int n : {1, 2, 3}) {
    auto got = admin_http_->Get("/api/v1/projects/proj/runs/" + RunId(n), token_);
    ASSERT_EQ(got.status, 200) << got.body;
    EXPECT_EQ(got.Json()["upload"]["results"], json::parse(Upload(n))["results"]);
  }
  EXPECT_TRUE(slept_.empty());

  // The same run spooled again (a runner that crashed after the post, before the removal).
  SpoolRuns({2});
  report = Push(url_, token_);
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->already_present, 1u);
  EXPECT_EQ(report->sent, 0u);
  EXPECT_TRUE(spool_->List().value().empty());
  EXPECT_EQ(RunCount(), 3u);
}

TEST_F(ClientE2eTest, AWrongServerPathStopsAndKeepsEverything) {
  SpoolRuns({1, 2});
  // A URL with a path prefix the server does not have: 404 for every upload.
  auto report = Push(url_ + "/perf", token_);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(spool_->List().value().size(), 2u);
  EXPECT_TRUE(spool_->ListRejected().value().empty());
  EXPECT_EQ(RunCount(), 0u);
}

TEST_F(ClientE2eTest, RejectedUploadsMoveAsideAndTheOthersAreSent) {
  SpoolRuns({1, 3});
  json bad = json::parse(Upload(2));
  bad["commit"]["sha"] = "not-a-sha";
  ASSERT_TRUE(spool_->Put(RunId(2), bad.dump()).has_value());
  // Same id as a stored run, other values: the server answers 409.
  ASSERT_EQ(admin_http_->Post("/api/v1/projects/proj/runs", Upload(4), token_).status, 201);
  json conflicting = json::parse(Upload(4));
  conflicting["results"][0]["values"][0] = 99.0;
  ASSERT_TRUE(spool_->Put(RunId(4), conflicting.dump()).has_value());

  auto report = Push(url_, token_);
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sent, 2u);
  EXPECT_EQ(report->rejected, 2u);
  EXPECT_TRUE(spool_->List().value().empty());
  ASSERT_EQ(report->messages.size(), 2u);
  const std::string why = Slurp(spool_->dir() / "rejected" / (RunId(2) + ".error.txt"));
  EXPECT_NE(why.find("HTTP 400 INVALID_ARGUMENT"), std::string::npos) << why;
  EXPECT_NE(why.find("field: commit.sha"), std::string::npos) << why;
  EXPECT_EQ(Slurp(spool_->dir() / "rejected" / (RunId(2) + ".json")), bad.dump());
  const std::string conflict = Slurp(spool_->dir() / "rejected" / (RunId(4) + ".error.txt"));
  EXPECT_NE(conflict.find("HTTP 409 CONFLICT"), std::string::npos) << conflict;
  EXPECT_EQ(RunCount(), 3u);    // 1, 3 and the first 4
  EXPECT_TRUE(slept_.empty());  // 4xx are never retried
}

TEST_F(ClientE2eTest, NothingLeavesTheSpoolUntilTheServerTakesIt) {
  SpoolRuns({1, 2, 3});
  const int port = FreePort();
  ASSERT_GT(port, 0);

  // Nothing listens: a transport error after max_attempts, and the runs stay.
  auto down = Push("http://127.0.0.1:" + std::to_string(port), token_);
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(down.error().message.find("3 still spooled"), std::string::npos)
      << down.error().message;
  EXPECT_EQ(slept_.size(), 2u);  // 3 attempts of the first run, then stop
  EXPECT_EQ(spool_->List().value().size(), 3u);

  // A token the server does not know, and one without the ingest scope.
  const std::string unknown = auth::GenerateToken().value();
  auto unauthenticated = Push(url_, unknown);
  ASSERT_FALSE(unauthenticated.has_value());
  EXPECT_EQ(unauthenticated.error().code, ErrorCode::kUnauthenticated);
  EXPECT_EQ(unauthenticated.error().message.find(unknown), std::string::npos);
  auto forbidden = Push(url_, CreateToken({"read"}));
  ASSERT_FALSE(forbidden.has_value());
  EXPECT_EQ(forbidden.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(spool_->List().value().size(), 3u);
  EXPECT_TRUE(spool_->ListRejected().value().empty());
  EXPECT_EQ(RunCount(), 0u);

  // PostgreSQL away: the server answers 503 with Retry-After: 1, which the retries honour.
  ASSERT_TRUE(cluster_->Stop().has_value());
  slept_.clear();
  auto unavailable = Push(url_, token_);
  ASSERT_TRUE(cluster_->Start().has_value());
  ASSERT_FALSE(unavailable.has_value());
  EXPECT_EQ(unavailable.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(unavailable.error().message.find("HTTP 503"), std::string::npos)
      << unavailable.error().message;
  EXPECT_EQ(slept_, (std::vector<int64_t>{1000, 1000}));
  EXPECT_EQ(spool_->List().value().size(), 3u);

  // Server up, right token: every run is stored exactly once, then there is nothing left.
  auto report = Push(url_, token_);
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sent, 3u);
  EXPECT_EQ(report->already_present, 0u);
  EXPECT_TRUE(spool_->List().value().empty());
  EXPECT_EQ(RunCount(), 3u);
  report = Push(url_, token_);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->sent + report->already_present, 0u);
  EXPECT_EQ(RunCount(), 3u);
}

TEST_F(ClientE2eTest, HttpClientTalksToTheServer) {
  HttpRequest request;
  request.url = url_ + "/healthz";
  auto health = http_->Send(request);
  ASSERT_TRUE(health.has_value()) << health.error().ToString();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body),
            (json{{"status", "ok"}, {"version", std::string(Version())}}));
  EXPECT_EQ(health->headers["content-type"].rfind("application/json", 0), 0u);

  // Any status is a response, not an error; the same handle is reused (keep-alive).
  request.url = url_ + "/api/v1/projects/proj";
  auto anonymous = http_->Send(request);
  ASSERT_TRUE(anonymous.has_value());
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->headers["www-authenticate"], "Bearer");
  request.bearer_token = token_;
  auto authorised = http_->Send(request);
  ASSERT_TRUE(authorised.has_value());
  EXPECT_EQ(authorised->status, 200) << authorised->body;

  request.method = "DELETE";
  request.url = url_ + "/api/v1/projects/proj/runs";
  auto not_allowed = http_->Send(request);
  ASSERT_TRUE(not_allowed.has_value());
  EXPECT_EQ(not_allowed->status, 405);

  request.method = "GET";
  request.url = url_ + "/healthz";
  HttpClientOptions small;
  small.max_response_bytes = 4;
  auto limited_client = HttpClient::Create(small);
  ASSERT_TRUE(limited_client.has_value());
  auto too_large = limited_client->Send(request);
  ASSERT_FALSE(too_large.has_value());
  EXPECT_EQ(too_large.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(too_large.error().message.find("exceeds 4 bytes"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::client
