// SPDX-License-Identifier: Apache-2.0
// API v1 end to end: a whole perfwarden-server (server::App) on an ephemeral loopback port over a
// fresh database of the test PostgreSQL cluster, driven over real HTTP
// (tests/testing/api_e2e_fixture.h). Covers every endpoint: operations, projects and tokens,
// ingest and reads, compare. The auth matrix, the bad-input matrix and a PostgreSQL restart are
// api_safety_e2etest.cc. No assertion depends on timing; socket timeouts are safety nets only.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/version.h"
#include "tests/testing/api_e2e_fixture.h"

namespace perfwarden {
namespace {

using api_e2e::ApiE2eTest;
using api_e2e::Describe;
using api_e2e::RunId;
using api_e2e::Sha;
using api_e2e::Upload;
using nlohmann::json;
using testing::HttpResponse;

// 20 repetitions around `center` with about 1% spread, deterministic.
std::vector<double> Noisy(double center, int salt = 0) {
  std::vector<double> values;
  for (int i = 0; i < 20; ++i) {
    values.push_back(center * (1.0 + 0.002 * static_cast<double>((i * 7 + salt) % 11 - 5)));
  }
  return values;
}

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(PERFWARDEN_FIXTURES_DIR) + "/wire/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// --- Operational endpoints ---------------------------------------------------------------

TEST_F(ApiE2eTest, HealthReadinessMetricsAndOpenApi) {
  HttpResponse health = http().Get("/healthz");
  ASSERT_EQ(health.status, 200) << Describe(health);
  EXPECT_EQ(health.Json(), (json{{"status", "ok"}, {"version", std::string(Version())}}));

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
  EXPECT_NE(metrics.body.find("perfwarden_http_requests_total"), std::string::npos);
  EXPECT_NE(metrics.body.find("perfwarden_db_pool_connections"), std::string::npos);

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

}  // namespace
}  // namespace perfwarden
