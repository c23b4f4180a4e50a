// API v1 end to end: a whole perfgate-server (server::App) on an ephemeral loopback port over a
// fresh database of the test PostgreSQL cluster, driven over real HTTP. Covers every endpoint,
// the auth matrix, the bad-input matrix (each rejection must also store nothing) and a
// PostgreSQL restart. No assertion depends on timing; socket timeouts are safety nets only.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/test_server.h"

namespace perfgate {
namespace {

using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;

constexpr std::size_t kBodyLimit = 256 * 1024;
constexpr int kJsonDepth = 32;

std::string RunId(int n) { return testing::TestRunId(n); }

std::string Sha(int n) { return testing::TestSha(n, 0xabc); }

struct SeriesSpec {
  std::string benchmark;
  std::vector<double> values;
  std::string metric = "real_time";
  std::string unit = "ns";
  std::string direction = "lower";
  std::string suite = "suite";
};

json Upload(const std::string& id, const std::string& project, const std::string& branch,
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

// 20 repetitions around `center` with about 1% spread, deterministic.
std::vector<double> Noisy(double center, int salt = 0) {
  std::vector<double> values;
  for (int i = 0; i < 20; ++i) {
    values.push_back(center * (1.0 + 0.002 * static_cast<double>((i * 7 + salt) % 11 - 5)));
  }
  return values;
}

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(PERFGATE_FIXTURES_DIR) + "/wire/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Describe(const HttpResponse& response) {
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
    config.limits.body_bytes = kBodyLimit;
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

// --- Operational endpoints ---------------------------------------------------------------

TEST_F(ApiE2eTest, HealthReadinessMetricsAndOpenApi) {
  HttpResponse health = http().Get("/healthz");
  ASSERT_EQ(health.status, 200) << Describe(health);
  EXPECT_EQ(health.Json(), (json{{"status", "ok"}}));

  HttpResponse ready = http().Get("/readyz");
  ASSERT_EQ(ready.status, 200) << Describe(ready);
  EXPECT_EQ(ready.Json(), (json{{"status", "ready"}}));

  HttpResponse openapi = http().Get("/api/v1/openapi.yaml");
  ASSERT_EQ(openapi.status, 200) << Describe(openapi);
  EXPECT_NE(openapi.body.find("openapi: 3"), std::string::npos) << openapi.body.substr(0, 200);
  EXPECT_NE(openapi.body.find("paths:"), std::string::npos);

  HttpResponse metrics = http().Get("/metrics");
  ASSERT_EQ(metrics.status, 200) << Describe(metrics);
  EXPECT_EQ(metrics.headers["content-type"].rfind("text/plain", 0), 0u);
  EXPECT_NE(metrics.body.find("perfgate_http_requests_total"), std::string::npos);
  EXPECT_NE(metrics.body.find("perfgate_db_pool_connections"), std::string::npos);

  HttpResponse missing = http().Get("/api/v1/nothing-here");
  EXPECT_EQ(missing.status, 404) << Describe(missing);
}

// --- Projects and tokens ------------------------------------------------------------------

TEST_F(ApiE2eTest, ProjectsAndTokensLifecycle) {
  HttpResponse created = http().Post(
      "/api/v1/projects", json{{"name", "alpha"}, {"public_read", false}}.dump(), admin_);
  ASSERT_EQ(created.status, 201) << Describe(created);
  json project = created.Json()["project"];
  EXPECT_EQ(project["name"], "alpha");
  EXPECT_EQ(project["public_read"], false);
  EXPECT_TRUE(project["created_at"].is_string());

  HttpResponse duplicate = http().Post("/api/v1/projects", json{{"name", "alpha"}}.dump(), admin_);
  EXPECT_EQ(duplicate.status, 409) << Describe(duplicate);
  EXPECT_EQ(duplicate.ErrorCode(), "CONFLICT");

  HttpResponse bad_name = http().Post("/api/v1/projects", json{{"name", "a/b"}}.dump(), admin_);
  EXPECT_EQ(bad_name.status, 400) << Describe(bad_name);
  EXPECT_EQ(bad_name.ErrorField(), "name");

  CreateProject("beta", /*public_read=*/true);
  HttpResponse list = http().Get("/api/v1/projects", admin_);
  ASSERT_EQ(list.status, 200) << Describe(list);
  std::set<std::string> names;
  const json listed_projects = list.Json();
  for (const json& p : listed_projects["projects"]) names.insert(p["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"alpha", "beta"}));

  // Without a token only public projects are listed.
  HttpResponse anonymous = http().Get("/api/v1/projects");
  ASSERT_EQ(anonymous.status, 200) << Describe(anonymous);
  ASSERT_EQ(anonymous.Json()["projects"].size(), 1u) << anonymous.body;
  EXPECT_EQ(anonymous.Json()["projects"][0]["name"], "beta");

  json token_answer;
  const std::string token = CreateToken("alpha", {"ingest", "read"}, &token_answer);
  ASSERT_TRUE(auth::IsWellFormedToken(token)) << token_answer.dump();
  EXPECT_EQ(token_answer["project"], "alpha");
  EXPECT_EQ(token_answer["scopes"], (json{"ingest", "read"}));
  EXPECT_EQ(token.rfind(token_answer["prefix"].get<std::string>(), 0), 0u);
  EXPECT_TRUE(token_answer["id"].is_number_integer());
  EXPECT_TRUE(token_answer["created_at"].is_string());

  HttpResponse own = http().Get("/api/v1/projects/alpha", token);
  ASSERT_EQ(own.status, 200) << Describe(own);
  EXPECT_EQ(own.Json()["project"]["name"], "alpha");
  HttpResponse unknown = http().Get("/api/v1/projects/gamma", admin_);
  EXPECT_EQ(unknown.status, 404) << Describe(unknown);

  // The listing never shows a token, only its prefix.
  HttpResponse tokens = http().Get("/api/v1/projects/alpha/tokens", admin_);
  ASSERT_EQ(tokens.status, 200) << Describe(tokens);
  EXPECT_EQ(tokens.body.find(token), std::string::npos);
  ASSERT_EQ(tokens.Json()["tokens"].size(), 1u) << tokens.body;
  json listed = tokens.Json()["tokens"][0];
  EXPECT_EQ(listed["id"], token_answer["id"]);
  EXPECT_EQ(listed["revoked"], false);
  EXPECT_FALSE(listed.contains("token"));

  const std::string id = std::to_string(token_answer["id"].get<int64_t>());
  HttpResponse revoked = http().Delete("/api/v1/tokens/" + id, admin_);
  ASSERT_EQ(revoked.status, 200) << Describe(revoked);
  EXPECT_EQ(revoked.Json(), (json{{"revoked", true}}));
  EXPECT_EQ(http().Get("/api/v1/projects/alpha", token).status, 401);
  tokens = http().Get("/api/v1/projects/alpha/tokens", admin_);
  EXPECT_EQ(tokens.Json()["tokens"][0]["revoked"], true) << tokens.body;
  EXPECT_EQ(http().Delete("/api/v1/tokens/987654", admin_).status, 404);

  HttpResponse bad_scope = http().Post("/api/v1/projects/alpha/tokens",
                                       json{{"name", "x"}, {"scopes", {"root"}}}.dump(), admin_);
  EXPECT_EQ(bad_scope.status, 400) << Describe(bad_scope);
  EXPECT_EQ(bad_scope.ErrorField().rfind("scopes", 0), 0u) << bad_scope.body;  // "scopes[0]"
}

// --- Ingest and reads -----------------------------------------------------------------------

TEST_F(ApiE2eTest, IngestIsIdempotentAndReadsBack) {
  CreateProject("myproj");
  const std::string token = CreateToken("myproj", {"ingest", "read"});
  const std::string body = ReadFixture("full.json");
  ASSERT_FALSE(body.empty());

  HttpResponse first = PostRun("myproj", body, token);
  ASSERT_EQ(first.status, 201) << Describe(first);
  json run = first.Json()["run"];
  EXPECT_EQ(first.Json()["created"], true);
  EXPECT_EQ(run["id"], "6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3");  // stored lower case
  EXPECT_EQ(run["project"], "myproj");
  EXPECT_EQ(run["branch"], "feature/faster-sort");
  EXPECT_EQ(run["commit"], "3b18e512dba79e4c8300dd08aeb37f8e728b8dad");
  EXPECT_EQ(run["testbed"], "ci-x86-1");
  EXPECT_EQ(run["pr"], 123);
  EXPECT_EQ(run["sample_count"], 9);
  for (const char* key : {"started_at", "finished_at", "created_at"}) {
    EXPECT_TRUE(run[key].is_string()) << key << " in " << run.dump();
  }

  HttpResponse again = PostRun("myproj", body, token);
  ASSERT_EQ(again.status, 200) << Describe(again);
  EXPECT_EQ(again.Json()["created"], false);
  EXPECT_EQ(again.Json()["run"]["id"], run["id"]);
  EXPECT_EQ(again.Json()["run"]["sample_count"], 9);

  // Same id, different body: a conflict, and nothing changes.
  json changed = json::parse(body);
  changed["results"][0]["values"][0] = 1.5;
  HttpResponse conflict = PostRun("myproj", changed.dump(), token);
  EXPECT_EQ(conflict.status, 409) << Describe(conflict);
  EXPECT_EQ(conflict.ErrorCode(), "CONFLICT");

  std::vector<json> runs = AllRuns("myproj");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["sample_count"], 9);

  HttpResponse got =
      http().Get("/api/v1/projects/myproj/runs/" + run["id"].get<std::string>(), token);
  ASSERT_EQ(got.status, 200) << Describe(got);
  EXPECT_EQ(got.Json()["run"], runs[0]);
  json upload = got.Json()["upload"];
  json sent = json::parse(body);
  EXPECT_EQ(upload["id"], run["id"]);
  EXPECT_EQ(upload["results"], sent["results"]);
  EXPECT_EQ(upload["testbed"], sent["testbed"]);
  EXPECT_EQ(upload["commit"], sent["commit"]);
  EXPECT_EQ(upload["ci"]["workflow"], "bench");  // extra CI keys are kept

  EXPECT_EQ(http().Get("/api/v1/projects/myproj/runs/" + RunId(99), token).status, 404);

  // The minimal upload needs a branch on this endpoint.
  json minimal = json::parse(ReadFixture("minimal.json"));
  HttpResponse no_branch = PostRun("myproj", minimal.dump(), token);
  EXPECT_EQ(no_branch.status, 400) << Describe(no_branch);
  EXPECT_EQ(no_branch.ErrorField(), "branch");
  minimal["branch"] = "main";
  HttpResponse with_branch = PostRun("myproj", minimal.dump(), token);
  EXPECT_EQ(with_branch.status, 201) << Describe(with_branch);
  EXPECT_EQ(RunCount("myproj"), 2u);
}

TEST_F(ApiE2eTest, ListRunsFiltersAndPages) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  // 5 runs on main (commits 0..4, bed-1), 2 on dev (commit 10, bed-2).
  for (int i = 0; i < 5; ++i) {
    HttpResponse r =
        PostRun("p", Upload(RunId(i), "p", "main", Sha(i), {{"BM_A", {1, 2, 3}}}).dump(), token);
    ASSERT_EQ(r.status, 201) << Describe(r);
  }
  for (int i = 5; i < 7; ++i) {
    HttpResponse r = PostRun(
        "p", Upload(RunId(i), "p", "dev", Sha(10), {{"BM_A", {1, 2}}}, "bed-2").dump(), token);
    ASSERT_EQ(r.status, 201) << Describe(r);
  }
  auto count = [&](const std::string& query) -> int {
    HttpResponse r = http().Get("/api/v1/projects/p/runs?" + query, token);
    EXPECT_EQ(r.status, 200) << query << ": " << Describe(r);
    json body = r.Json();
    return body.is_object() && body["runs"].is_array() ? static_cast<int>(body["runs"].size()) : -1;
  };
  EXPECT_EQ(count("limit=1000"), 7);
  EXPECT_EQ(count("branch=main"), 5);
  EXPECT_EQ(count("branch=dev"), 2);
  EXPECT_EQ(count("branch=nope"), 0);
  EXPECT_EQ(count("commit=" + Sha(3)), 1);
  EXPECT_EQ(count("commit=" + Sha(10) + "&branch=dev"), 2);
  EXPECT_EQ(count("testbed=bed-2"), 2);
  EXPECT_EQ(count("testbed=bed-1&branch=main"), 5);
  EXPECT_EQ(count("since=2000-01-01T00:00:00Z"), 7);
  EXPECT_EQ(count("since=2999-01-01T00:00:00Z"), 0);
  EXPECT_EQ(count("until=2000-01-01T00:00:00Z"), 0);

  // Paging: pages of 2 walk every run exactly once, newest first.
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  while (pages < 10) {
    std::string target = "/api/v1/projects/p/runs?limit=2";
    if (!cursor.empty()) target += "&cursor=" + cursor;
    HttpResponse r = http().Get(target, token);
    ASSERT_EQ(r.status, 200) << Describe(r);
    json body = r.Json();
    ++pages;
    EXPECT_LE(body["runs"].size(), 2u);
    for (const json& run : body["runs"]) seen.push_back(run["id"].get<std::string>());
    if (body["next_cursor"].is_null()) break;
    cursor = body["next_cursor"].get<std::string>();
  }
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 7u);
  EXPECT_EQ(seen.back(), RunId(0));  // the oldest comes last

  // Query-parameter errors name the parameter.
  for (const auto& [query, field] :
       std::vector<std::pair<std::string, std::string>>{{"limit=0", "limit"},
                                                        {"limit=1001", "limit"},
                                                        {"limit=ten", "limit"},
                                                        {"since=yesterday", "since"},
                                                        {"until=2024-01-01", "until"},
                                                        {"brnach=main", "brnach"},
                                                        {"cursor=%00garbage", "cursor"}}) {
    HttpResponse r = http().Get("/api/v1/projects/p/runs?" + query, token);
    EXPECT_EQ(r.status, 400) << query << ": " << Describe(r);
    EXPECT_EQ(r.ErrorField(), field) << query << ": " << r.body;
  }
}

TEST_F(ApiE2eTest, BenchmarksMetricsAndSeries) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  for (int i = 0; i < 3; ++i) {
    json upload = Upload(RunId(i), "p", "main", Sha(i),
                         {{"BM_A", Noisy(100.0 + i)},
                          {"BM_A", {5e6, 5.1e6}, "items_per_second", "items/s", "higher"},
                          {"BM_B", {7.0}}});
    HttpResponse r = PostRun("p", upload.dump(), token);
    ASSERT_EQ(r.status, 201) << Describe(r);
  }
  // A second run at the last commit pools into the same point.
  HttpResponse extra =
      PostRun("p", Upload(RunId(50), "p", "main", Sha(2), {{"BM_A", {1000.0}}}).dump(), token);
  ASSERT_EQ(extra.status, 201) << Describe(extra);

  HttpResponse benchmarks = http().Get("/api/v1/projects/p/benchmarks", token);
  ASSERT_EQ(benchmarks.status, 200) << Describe(benchmarks);
  std::set<std::string> names;
  const json benchmark_list = benchmarks.Json();
  for (const json& b : benchmark_list["benchmarks"]) {
    EXPECT_EQ(b["suite"], "suite");
    names.insert(b["name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"BM_A", "BM_B"}));

  HttpResponse metrics = http().Get("/api/v1/projects/p/metrics", token);
  ASSERT_EQ(metrics.status, 200) << Describe(metrics);
  std::set<std::string> metric_rows;
  const json metric_list = metrics.Json();
  for (const json& m : metric_list["metrics"]) {
    metric_rows.insert(m["name"].get<std::string>() + "|" + m["unit"].get<std::string>() + "|" +
                       m["direction"].get<std::string>());
  }
  EXPECT_EQ(metric_rows,
            (std::set<std::string>{"real_time|ns|lower", "items_per_second|items/s|higher"}));

  HttpResponse series =
      http().Get("/api/v1/projects/p/series?benchmark=BM_A&metric=real_time&branch=main", token);
  ASSERT_EQ(series.status, 200) << Describe(series);
  json s = series.Json();
  EXPECT_EQ(s["benchmark"], "BM_A");
  EXPECT_EQ(s["suite"], "suite");
  EXPECT_EQ(s["metric"], "real_time");
  EXPECT_EQ(s["unit"], "ns");
  EXPECT_EQ(s["direction"], "lower");
  EXPECT_EQ(s["branch"], "main");
  ASSERT_EQ(s["points"].size(), 3u) << series.body.substr(0, 500);
  for (int i = 0; i < 3; ++i) {
    const json& point = s["points"][static_cast<std::size_t>(i)];
    EXPECT_EQ(point["commit"], Sha(i));  // oldest first
    EXPECT_TRUE(point["ci"].is_array() && point["ci"].size() == 2) << point.dump();
    EXPECT_FALSE(point.contains("values"));
    EXPECT_LE(point["min"].get<double>(), point["median"].get<double>());
    EXPECT_LE(point["median"].get<double>(), point["max"].get<double>());
  }
  EXPECT_EQ(s["points"][0]["n"], 20);
  EXPECT_NEAR(s["points"][0]["median"].get<double>(), 100.0, 1.0);
  EXPECT_EQ(s["points"][2]["n"], 21);
  EXPECT_EQ(s["points"][2]["runs"].size(), 2u);
  EXPECT_EQ(s["points"][2]["max"], 1000.0);

  HttpResponse raw = http().Get(
      "/api/v1/projects/p/series?benchmark=BM_B&metric=real_time&branch=main&raw=1", token);
  ASSERT_EQ(raw.status, 200) << Describe(raw);
  ASSERT_EQ(raw.Json()["points"].size(), 3u);
  EXPECT_EQ(raw.Json()["points"][0]["values"], (json{7.0}));
  EXPECT_TRUE(raw.Json()["points"][0]["ci"].is_null());  // n < 2

  HttpResponse no_branch =
      http().Get("/api/v1/projects/p/series?benchmark=BM_A&metric=real_time", token);
  EXPECT_EQ(no_branch.status, 400) << Describe(no_branch);
  EXPECT_EQ(no_branch.ErrorField(), "branch");
  HttpResponse bad_limit = http().Get(
      "/api/v1/projects/p/series?benchmark=BM_A&metric=real_time&branch=main&limit=0", token);
  EXPECT_EQ(bad_limit.status, 400) << Describe(bad_limit);
  EXPECT_EQ(bad_limit.ErrorField(), "limit");
}

TEST_F(ApiE2eTest, CompareFindsAPlantedRegression) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  HttpResponse base = PostRun(
      "p",
      Upload(RunId(1), "p", "main", Sha(1), {{"BM_Slow", Noisy(100.0)}, {"BM_Same", Noisy(50.0)}})
          .dump(),
      token);
  ASSERT_EQ(base.status, 201) << Describe(base);
  HttpResponse contender =
      PostRun("p",
              Upload(RunId(2), "p", "main", Sha(2),
                     {{"BM_Slow", Noisy(110.0, 3)}, {"BM_Same", Noisy(50.0, 3)}})
                  .dump(),
              token);
  ASSERT_EQ(contender.status, 201) << Describe(contender);

  HttpResponse compare =
      http().Get("/api/v1/projects/p/compare?base=" + RunId(1) + "&contender=" + RunId(2), token);
  ASSERT_EQ(compare.status, 200) << Describe(compare);
  json report = compare.Json();
  EXPECT_EQ(report["metric"], "real_time");
  EXPECT_EQ(report["threshold"], 0.05);
  EXPECT_EQ(report["counts"]["regression"], 1) << compare.body;
  std::map<std::string, std::string> verdicts;
  for (const json& b : report["benchmarks"]) {
    verdicts[b["name"].get<std::string>()] = b["verdict"].get<std::string>();
  }
  EXPECT_EQ(verdicts["BM_Slow"], "REGRESSION") << compare.body;
  EXPECT_NE(verdicts["BM_Same"], "REGRESSION") << compare.body;
  const double change = report["benchmarks"][0]["name"] == "BM_Slow"
                            ? report["benchmarks"][0]["change"].get<double>()
                            : report["benchmarks"][1]["change"].get<double>();
  EXPECT_NEAR(change, 0.10, 0.01);

  // A 15% threshold makes the same change acceptable.
  HttpResponse loose = http().Get(
      "/api/v1/projects/p/compare?base=" + RunId(1) + "&contender=" + RunId(2) + "&threshold=15%25",
      token);
  ASSERT_EQ(loose.status, 200) << Describe(loose);
  EXPECT_EQ(loose.Json()["counts"]["regression"], 0) << loose.body;

  EXPECT_EQ(
      http()
          .Get("/api/v1/projects/p/compare?base=" + RunId(1) + "&contender=" + RunId(9), token)
          .status,
      404);
  HttpResponse missing = http().Get("/api/v1/projects/p/compare?contender=" + RunId(2), token);
  EXPECT_EQ(missing.status, 400) << Describe(missing);
  EXPECT_EQ(missing.ErrorField(), "base");
  HttpResponse bad_alpha = http().Get(
      "/api/v1/projects/p/compare?base=" + RunId(1) + "&contender=" + RunId(2) + "&alpha=2", token);
  EXPECT_EQ(bad_alpha.status, 400) << Describe(bad_alpha);
  EXPECT_EQ(bad_alpha.ErrorField(), "alpha");
}

// --- Auth matrix ------------------------------------------------------------------------------

TEST_F(ApiE2eTest, AuthMatrix) {
  CreateProject("a");
  CreateProject("b");
  CreateProject("pub", /*public_read=*/true);
  const std::string ingest_a = CreateToken("a", {"ingest"});
  const std::string read_a = CreateToken("a", {"read"});
  const std::string read_b = CreateToken("b", {"read"});
  const std::string ingest_pub = CreateToken("pub", {"ingest"});
  json revoked_answer;
  const std::string revoked_a = CreateToken("a", {"ingest", "read"}, &revoked_answer);
  ASSERT_EQ(
      http()
          .Delete("/api/v1/tokens/" + std::to_string(revoked_answer["id"].get<int64_t>()), admin_)
          .status,
      200);
  auto unknown = auth::GenerateToken();
  ASSERT_TRUE(unknown.has_value());
  ASSERT_EQ(
      PostRun("pub", Upload(RunId(1), "pub", "main", Sha(1), {{"BM", {1}}}).dump(), ingest_pub)
          .status,
      201);

  const std::string run_a = Upload(RunId(2), "a", "main", Sha(2), {{"BM", {1}}}).dump();
  const std::string run_b = Upload(RunId(3), "b", "main", Sha(3), {{"BM", {1}}}).dump();
  struct Case {
    std::string name;
    std::string method;
    std::string target;
    std::string authorization;  // the whole header value; "" = no header
    std::string body;
    int status;
  };
  auto bearer = [](const std::string& token) { return "Bearer " + token; };
  const std::vector<Case> cases = {
      {"no token", "GET", "/api/v1/projects/a/runs", "", "", 401},
      {"garbage bearer", "GET", "/api/v1/projects/a/runs", "Bearer garbage", "", 401},
      {"basic scheme", "GET", "/api/v1/projects/a/runs", "Basic dXNlcjpwYXNz", "", 401},
      {"empty bearer", "GET", "/api/v1/projects/a/runs", "Bearer ", "", 401},
      {"unknown token", "GET", "/api/v1/projects/a/runs", bearer(*unknown), "", 401},
      {"revoked token", "GET", "/api/v1/projects/a/runs", bearer(revoked_a), "", 401},
      {"revoked token posts", "POST", "/api/v1/projects/a/runs", bearer(revoked_a), run_a, 401},
      {"other project's token", "GET", "/api/v1/projects/a/runs", bearer(read_b), "", 403},
      {"other project's token, run", "GET", "/api/v1/projects/a/runs/" + RunId(2), bearer(read_b),
       "", 403},
      {"ingest token posts elsewhere", "POST", "/api/v1/projects/b/runs", bearer(ingest_a), run_b,
       403},
      {"read token posts a run", "POST", "/api/v1/projects/a/runs", bearer(read_a), run_a, 403},
      {"ingest token reads", "GET", "/api/v1/projects/a/runs", bearer(ingest_a), "", 403},
      {"no token posts a run", "POST", "/api/v1/projects/a/runs", "", run_a, 401},
      {"read token creates a project", "POST", "/api/v1/projects", bearer(read_a),
       R"({"name":"c"})", 403},
      {"no token creates a project", "POST", "/api/v1/projects", "", R"({"name":"c"})", 401},
      {"read token makes a token", "POST", "/api/v1/projects/a/tokens", bearer(read_a),
       R"({"name":"x","scopes":["admin"]})", 403},
      {"ingest token lists tokens", "GET", "/api/v1/projects/a/tokens", bearer(ingest_a), "", 403},
      {"read token revokes", "DELETE",
       "/api/v1/tokens/" + std::to_string(revoked_answer["id"].get<int64_t>()), bearer(read_a), "",
       403},
      {"public project, no token", "GET", "/api/v1/projects/pub/runs", "", "", 200},
      {"public project series, no token", "GET",
       "/api/v1/projects/pub/series?benchmark=BM&metric=real_time&branch=main", "", "", 200},
      {"public project, garbage token", "GET", "/api/v1/projects/pub/runs", "Bearer garbage", "",
       401},
      {"public project, revoked token", "GET", "/api/v1/projects/pub/runs", bearer(revoked_a), "",
       401},
      {"public project, post without token", "POST", "/api/v1/projects/pub/runs", "",
       Upload(RunId(4), "pub", "main", Sha(4), {{"BM", {1}}}).dump(), 401},
      {"public project, other project's ingest token", "POST", "/api/v1/projects/pub/runs",
       bearer(ingest_a), Upload(RunId(4), "pub", "main", Sha(4), {{"BM", {1}}}).dump(), 403},
      {"private project, other token reads", "GET", "/api/v1/projects/b", bearer(read_a), "", 403},
      {"own read token", "GET", "/api/v1/projects/a/runs", bearer(read_a), "", 200},
      {"admin reads anything", "GET", "/api/v1/projects/b/runs", bearer(admin_), "", 200},
  };
  for (const Case& c : cases) {
    std::vector<std::string> headers;
    if (!c.authorization.empty()) headers.push_back("Authorization: " + c.authorization);
    HttpResponse r = http().Request(c.method, c.target, "", c.body, "application/json", headers);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << Describe(r);
    if (c.status == 401) {
      EXPECT_EQ(r.ErrorCode(), "UNAUTHENTICATED") << c.name;
      EXPECT_EQ(r.headers.count("www-authenticate"), 1u) << c.name;
    } else if (c.status == 403) {
      EXPECT_EQ(r.ErrorCode(), "PERMISSION_DENIED") << c.name;
    }
    // Error bodies never repeat a credential.
    if (!c.authorization.empty() && c.status >= 400 && c.authorization.size() > 10) {
      EXPECT_EQ(r.body.find(c.authorization.substr(7)), std::string::npos) << c.name;
    }
  }
  // Nothing reached the store through the refused posts.
  EXPECT_EQ(RunCount("a"), 0u);
  EXPECT_EQ(RunCount("b"), 0u);
  EXPECT_EQ(RunCount("pub"), 1u);
  // The ingest token still works for its own project.
  EXPECT_EQ(PostRun("a", run_a, ingest_a).status, 201);
}

// --- Bad input matrix -------------------------------------------------------------------------

TEST_F(ApiE2eTest, BadInputIsRejectedAndNothingIsStored) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  const json valid = Upload(RunId(1), "p", "main", Sha(1), {{"BM_A", {1.0, 2.0, 3.0}}});
  auto with = [&](const std::function<void(json&)>& change) {
    json copy = valid;
    change(copy);
    return copy.dump();
  };
  std::string deep = "[]";
  for (int i = 0; i < 200; ++i) deep = "{\"k\":" + deep + "}";
  std::string huge_values = "[";
  for (std::size_t i = 0; huge_values.size() < kBodyLimit + 1024; ++i) {
    huge_values += (i == 0 ? "" : ",") + std::to_string(1000.0 + static_cast<double>(i));
  }
  huge_values += "]";
  const std::string valid_text = valid.dump();
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = valid_text;
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };

  struct Case {
    std::string name;
    std::string body;
    int status;
    std::string field;  // expected error.field; "*" = any
    std::string content_type = "application/json";
  };
  const std::vector<Case> cases = {
      {"empty body", "", 400, "*"},
      {"malformed JSON", "{\"id\": ", 400, "*"},
      {"trailing garbage", valid_text + "x", 400, "*"},
      {"not an object", "[1,2,3]", 400, "*"},
      {"id is a number", with([](json& j) { j["id"] = 5; }), 400, "id"},
      {"id is not a UUID", with([](json& j) { j["id"] = "run-1"; }), 400, "id"},
      {"values is a string", with([](json& j) { j["results"][0]["values"] = "1,2"; }), 400,
       "results[0].values"},
      {"value is a string", with([](json& j) { j["results"][0]["values"][1] = "2"; }), 400,
       "results[0].values[1]"},
      {"commit is a string", with([](json& j) { j["commit"] = Sha(1); }), 400, "commit"},
      {"missing results", with([](json& j) { j.erase("results"); }), 400, "results"},
      {"missing commit", with([](json& j) { j.erase("commit"); }), 400, "commit"},
      {"missing sha", with([](json& j) { j["commit"].erase("sha"); }), 400, "commit.sha"},
      {"missing testbed", with([](json& j) { j.erase("testbed"); }), 400, "testbed"},
      {"missing id", with([](json& j) { j.erase("id"); }), 400, "id"},
      {"missing branch", with([](json& j) { j.erase("branch"); }), 400, "branch"},
      {"empty results", with([](json& j) { j["results"] = json::array(); }), 400, "results"},
      {"empty values", with([](json& j) { j["results"][0]["values"] = json::array(); }), 400,
       "results[0].values"},
      {"NaN token", replace("[1.0,2.0,3.0]", "[1.0,NaN,3.0]"), 400, "*"},
      {"Infinity token", replace("[1.0,2.0,3.0]", "[1.0,Infinity,3.0]"), 400, "*"},
      {"number too large", replace("[1.0,2.0,3.0]", "[1.0,1e999,3.0]"), 400, "*"},
      {"negative time", with([](json& j) { j["results"][0]["values"][2] = -1.0; }), 400,
       "results[0].values[2]"},
      {"unknown direction", with([](json& j) { j["results"][0]["direction"] = "sideways"; }), 400,
       "results[0].direction"},
      {"unknown key", with([](json& j) { j["resluts"] = json::array(); }), 400, "resluts"},
      {"duplicate series", with([](json& j) { j["results"].push_back(j["results"][0]); }), 400,
       "*"},
      {"project mismatch", with([](json& j) { j["project"] = "other"; }), 400, "project"},
      {"bad branch name", with([](json& j) { j["branch"] = "a/../b c"; }), 400, "branch"},
      {"bad sha", with([](json& j) { j["commit"]["sha"] = "xyz"; }), 400, "commit.sha"},
      {"bad timestamp", with([](json& j) { j["started_at"] = "2024-02-30T00:00:00Z"; }), 400,
       "started_at"},
      {"finished before started", with([](json& j) {
         j["started_at"] = "2024-03-01T12:00:00Z";
         j["finished_at"] = "2024-03-01T11:00:00Z";
       }),
       400, "finished_at"},
      {"deep nesting", replace("{\"cores\":2}", deep), 400, "*"},
      {"invalid UTF-8", replace("\"commit ", "\"commit \xff\xfe "), 400, "*"},
      {"overlong UTF-8", replace("\"commit ", "\"commit \xc0\xaf "), 400, "*"},
      {"lone surrogate", replace("\"commit ", "\"commit \\ud800 "), 400, "*"},
      {"NUL in a string", replace("\"commit ", "\"commit \\u0000 "), 400, "*"},
      {"duplicate key", replace("{\"branch\":", "{\"branch\":\"x\",\"branch\":"), 400, "*"},
      {"oversized body", replace("[1.0,2.0,3.0]", huge_values), 413, "*"},
      {"wrong content type", valid_text, 415, "*", "text/plain"},
  };
  for (const Case& c : cases) {
    HttpResponse r =
        http().Request("POST", "/api/v1/projects/p/runs", token, c.body, c.content_type);
    EXPECT_EQ(r.status, c.status) << c.name << ": " << Describe(r);
    json body = r.Json();
    ASSERT_TRUE(body.is_object() && body["error"].is_object()) << c.name << ": " << r.body;
    EXPECT_TRUE(body["error"]["code"].is_string()) << c.name;
    EXPECT_TRUE(body["error"]["message"].is_string()) << c.name;
    EXPECT_TRUE(body["error"].contains("field")) << c.name;
    const std::map<int, std::string> codes = {
        {400, "INVALID_ARGUMENT"}, {413, "PAYLOAD_TOO_LARGE"}, {415, "UNSUPPORTED_MEDIA_TYPE"}};
    EXPECT_EQ(r.ErrorCode(), codes.at(c.status)) << c.name;
    if (c.field != "*") {
      EXPECT_EQ(r.ErrorField(), c.field) << c.name << ": " << r.body;
    }
    ASSERT_EQ(RunCount("p"), 0u) << "stored after: " << c.name;
  }
  EXPECT_EQ(BenchmarkCount("p"), 0u);

  // Bad project-creation and token bodies too.
  for (const std::string& body :
       {std::string("{"), std::string(R"({"name": 5})"), std::string(R"({"public_read": true})"),
        std::string(R"({"name": "x", "public_read": "yes"})"), std::string(R"({"name": ""})")}) {
    HttpResponse r = http().Post("/api/v1/projects", body, admin_);
    EXPECT_EQ(r.status, 400) << body << ": " << Describe(r);
  }
  HttpResponse projects = http().Get("/api/v1/projects", admin_);
  EXPECT_EQ(projects.Json()["projects"].size(), 1u) << projects.body;

  // The id was never consumed: the valid upload is created now.
  HttpResponse ok = PostRun("p", valid_text, token);
  EXPECT_EQ(ok.status, 201) << Describe(ok);
  EXPECT_EQ(RunCount("p"), 1u);
}

TEST_F(ApiE2eTest, SqlLookingStringsAreStoredVerbatim) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  const std::string suite = "x'); DROP TABLE samples; --";
  const std::string benchmark = "Robert'); DROP TABLE runs;-- \"quoted\" \\ back";
  const std::string metric = "real_time' OR '1'='1";
  json upload = Upload(RunId(1), "p", "main", Sha(1), {{benchmark, {1.0, 2.0}, metric}});
  upload["results"][0]["suite"] = suite;
  upload["commit"]["subject"] = "'; DELETE FROM projects; -- $1 %s";
  upload["commit"]["author"] = "O'Brien <ob@example.com>";
  upload["testbed"]["fingerprint"] = {{"cpu_model", "'); TRUNCATE tokens; --"}};
  HttpResponse created = PostRun("p", upload.dump(), token);
  ASSERT_EQ(created.status, 201) << Describe(created);

  HttpResponse got = http().Get("/api/v1/projects/p/runs/" + RunId(1), token);
  ASSERT_EQ(got.status, 200) << Describe(got);
  json stored = got.Json()["upload"];
  EXPECT_EQ(stored["results"][0]["suite"], suite);
  EXPECT_EQ(stored["results"][0]["benchmark"], benchmark);
  EXPECT_EQ(stored["results"][0]["metric"], metric);
  EXPECT_EQ(stored["commit"]["subject"], upload["commit"]["subject"]);
  EXPECT_EQ(stored["commit"]["author"], upload["commit"]["author"]);
  EXPECT_EQ(stored["testbed"]["fingerprint"], upload["testbed"]["fingerprint"]);

  HttpResponse benchmarks = http().Get("/api/v1/projects/p/benchmarks", token);
  ASSERT_EQ(benchmarks.status, 200);
  EXPECT_EQ(benchmarks.Json()["benchmarks"],
            (json{{{"suite", suite},
                   {"name", benchmark},
                   {"metrics", {{{"name", metric}, {"unit", "ns"}, {"direction", "lower"}}}}}}));

  // A SQL-looking filter matches nothing (or is refused), never everything.
  HttpResponse filtered =
      http().Get("/api/v1/projects/p/runs?branch=main%27%20OR%20%271%27%3D%271", token);
  EXPECT_TRUE(filtered.status == 400 || (filtered.status == 200 && filtered.Json()["runs"].empty()))
      << Describe(filtered);
  // Everything is still there.
  EXPECT_EQ(RunCount("p"), 1u);
  EXPECT_EQ(http().Get("/api/v1/projects/p/tokens", admin_).Json()["tokens"].size(), 1u);
  EXPECT_EQ(http().Get("/api/v1/projects", admin_).Json()["projects"].size(), 1u);
}

// --- PostgreSQL outage ----------------------------------------------------------------------

TEST_F(ApiE2eTest, PostgresRestartGives503ThenRecovers) {
  CreateProject("p");
  const std::string token = CreateToken("p", {"ingest", "read"});
  ASSERT_EQ(
      PostRun("p", Upload(RunId(1), "p", "main", Sha(1), {{"BM", {1, 2}}}).dump(), token).status,
      201);
  // Warm several pool connections so that stale ones exist after the restart.
  for (int i = 0; i < 6; ++i) ASSERT_EQ(http().Get("/api/v1/projects/p/runs", token).status, 200);

  ASSERT_TRUE(cluster_->Stop().has_value());
  const std::string during = Upload(RunId(2), "p", "main", Sha(2), {{"BM", {3, 4}}}).dump();
  for (int i = 0; i < 3; ++i) {
    HttpResponse runs = http().Get("/api/v1/projects/p/runs", token);
    EXPECT_EQ(runs.status, 503) << Describe(runs);
    EXPECT_EQ(runs.ErrorCode(), "UNAVAILABLE");
    EXPECT_EQ(runs.headers.count("retry-after"), 1u);
    HttpResponse post = PostRun("p", during, token);
    EXPECT_EQ(post.status, 503) << Describe(post);
    EXPECT_EQ(http().Get("/readyz").status, 503);
    // The process itself is alive.
    EXPECT_EQ(http().Get("/healthz").status, 200);
  }
  // A fresh connection during the outage gets an answer too (no hang on a worker).
  {
    HttpClient other(static_cast<std::uint16_t>(app_->port()));
    EXPECT_EQ(other.Get("/api/v1/projects/p", token).status, 503);
  }

  const auto restarted = cluster_->Start();
  ASSERT_TRUE(restarted.has_value()) << restarted.error().ToString();
  HttpResponse ready = http().Get("/readyz");
  EXPECT_EQ(ready.status, 200) << Describe(ready);
  for (int i = 0; i < 6; ++i) {
    HttpResponse runs = http().Get("/api/v1/projects/p/runs", token);
    EXPECT_EQ(runs.status, 200) << "request " << i << " after restart: " << Describe(runs);
  }
  HttpResponse post = PostRun("p", during, token);
  EXPECT_EQ(post.status, 201) << Describe(post);
  EXPECT_EQ(RunCount("p"), 2u);
  HttpResponse metrics = http().Get("/metrics");
  EXPECT_NE(metrics.body.find("status=\"503\""), std::string::npos);
}

}  // namespace
}  // namespace perfgate
