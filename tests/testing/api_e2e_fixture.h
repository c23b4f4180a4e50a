// SPDX-License-Identifier: Apache-2.0
// Fixture of the API v1 end-to-end tests (tests/e2e/api*_e2etest.cc): a whole perfwarden-server
// (server::App) on an ephemeral loopback port over a fresh database of the test PostgreSQL
// cluster, an admin token, helpers for projects, tokens and runs over real HTTP, and run uploads
// built from series.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/test_server.h"

namespace perfwarden::api_e2e {

using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;

inline constexpr std::size_t kBodyLimit = 256 * 1024;
inline constexpr int kJsonDepth = 32;

inline std::string RunId(int n) { return testing::TestRunId(n); }

inline std::string Sha(int n) { return testing::TestSha(n, 0xabc); }

struct SeriesSpec {
  std::string benchmark;
  std::vector<double> values;
  std::string metric = "real_time";
  std::string unit = "ns";
  std::string direction = "lower";
  std::string suite = "suite";
};

inline json Upload(const std::string& id, const std::string& project, const std::string& branch,
                   const std::string& sha, const std::vector<SeriesSpec>& series,
                   const std::string& testbed = "bed-1") {
  json results = json::array();
  for (const SeriesSpec& s : series) {
    results.push_back({{"suite", s.suite},
                       {"benchmark", s.benchmark},
                       {"metric", s.metric},
                       {"unit", s.unit},
                       {"direction", s.direction},
                       {"values", s.values}});
  }
  return {{"id", id},
          {"project", project},
          {"branch", branch},
          {"commit", {{"sha", sha}, {"subject", "commit " + sha.substr(0, 7)}}},
          {"testbed", {{"name", testbed}, {"fingerprint", {{"cores", 2}}}}},
          {"results", results}};
}

inline std::string Describe(const HttpResponse& response) {
  return "status " + std::to_string(response.status) + ": " + response.body.substr(0, 600);
}

class ApiE2eTest : public testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto admin = auth::GenerateToken();
    ASSERT_TRUE(admin.has_value());
    admin_ = *admin;
    config::ServerConfig config = testing::TestServerConfig(dsn_, admin_);
    config.threads = 4;
    config.limits.body_bytes = BodyLimit();
    config.limits.json_depth = kJsonDepth;
    auto app = server::App::Start(config);
    ASSERT_TRUE(app.has_value()) << app.error().ToString();
    app_ = std::move(*app);
    client_ = std::make_unique<HttpClient>(static_cast<std::uint16_t>(app_->port()));
  }

  void TearDown() override {
    client_.reset();
    if (app_) app_->Stop();
  }

  HttpClient& http() { return *client_; }

  // The server's body_bytes limit; a test that sends a larger body overrides it.
  virtual std::size_t BodyLimit() const { return kBodyLimit; }

  void CreateProject(const std::string& name, bool public_read = false) {
    HttpResponse response = http().Post(
        "/api/v1/projects", json{{"name", name}, {"public_read", public_read}}.dump(), admin_);
    ASSERT_EQ(response.status, 201) << Describe(response);
  }

  // A new token of `project` with `scopes`; "" (and a test failure) when refused.
  std::string CreateToken(const std::string& project, const std::vector<std::string>& scopes,
                          json* answer = nullptr) {
    HttpResponse response = http().Post("/api/v1/projects/" + project + "/tokens",
                                        json{{"name", "t"}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(response.status, 201) << Describe(response);
    json body = response.Json();
    if (answer != nullptr) *answer = body;
    if (!body.is_object() || !body.contains("token") || !body["token"].is_string()) return "";
    return body["token"].get<std::string>();
  }

  HttpResponse PostRun(const std::string& project, const std::string& body,
                       const std::string& token) {
    return http().Post("/api/v1/projects/" + project + "/runs", body, token);
  }

  // Every run of the project (admin view), walking the cursor.
  std::vector<json> AllRuns(const std::string& project) {
    std::vector<json> runs;
    std::string cursor;
    for (int page = 0; page < 100; ++page) {
      std::string target = "/api/v1/projects/" + project + "/runs?limit=1000";
      if (!cursor.empty()) target += "&cursor=" + cursor;
      HttpResponse response = http().Get(target, admin_);
      EXPECT_EQ(response.status, 200) << Describe(response);
      json body = response.Json();
      if (!body.is_object() || !body["runs"].is_array()) break;
      for (const json& run : body["runs"]) runs.push_back(run);
      if (!body["next_cursor"].is_string()) break;
      cursor = body["next_cursor"].get<std::string>();
    }
    return runs;
  }
  std::size_t RunCount(const std::string& project) { return AllRuns(project).size(); }

  std::size_t BenchmarkCount(const std::string& project) {
    HttpResponse response = http().Get("/api/v1/projects/" + project + "/benchmarks", admin_);
    EXPECT_EQ(response.status, 200) << Describe(response);
    json body = response.Json();
    return body.is_object() && body["benchmarks"].is_array() ? body["benchmarks"].size() : 0;
  }

  std::string admin_;
  std::unique_ptr<server::App> app_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace perfwarden::api_e2e
