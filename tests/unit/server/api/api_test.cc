// SPDX-License-Identifier: Apache-2.0
// API v1 routes through router.Handle() with in-memory fakes of the four store interfaces
// (tests/testing/api_fixture.h): each runs endpoint's shape, the bad-input matrix for POST runs
// (nothing reaches the store), query-parameter checks, series summaries on known data, the compare
// endpoint and the operational ones. The auth matrix, projects and tokens are api_auth_test.cc.
#include "server/api/api.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/version.h"
#include "tests/testing/api_fixture.h"

namespace perfwarden::server::api {
namespace {

using api_testing::ApiTest;
using api_testing::kRunId;
using api_testing::ValidUpload;
using nlohmann::json;

// --- runs -----------------------------------------------------------------------------------

TEST_F(ApiTest, IngestIsIdempotent) {
  const std::string path = "/api/v1/projects/alpha/runs";
  auto first = Call("POST", path, alpha_, ValidUpload().dump());
  ASSERT_EQ(first.status, 201) << first.body;
  json body = Body(first);
  EXPECT_EQ(body["created"], true);
  json run = body["run"];
  EXPECT_EQ(run["id"], kRunId);
  EXPECT_EQ(run["project"], "alpha");
  EXPECT_EQ(run["branch"], "main");
  EXPECT_EQ(run["commit"], std::string(40, 'c'));
  EXPECT_EQ(run["testbed"], "ci-x86-1");
  EXPECT_TRUE(run["pr"].is_null());
  EXPECT_TRUE(run["finished_at"].is_null());  // the fake does not keep it: null, not ""
  EXPECT_EQ(run["sample_count"], 3);

  auto again = Call("POST", path, alpha_, ValidUpload().dump());
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(Body(again)["created"], false);

  json changed = ValidUpload();
  changed["results"][0]["values"][0] = 1.0;
  EXPECT_EQ(Call("POST", path, alpha_, changed.dump()).status, 409);
  EXPECT_NE(metrics_.Render().find("perfwarden_ingested_samples_total 3"), std::string::npos)
      << metrics_.Render();
}

TEST_F(ApiTest, BadUploadsAreRefusedBeforeTheStore) {
  const std::string path = "/api/v1/projects/alpha/runs";
  auto with = [](const std::function<void(json&)>& change) {
    json upload = ValidUpload();
    change(upload);
    return upload.dump();
  };
  std::string deep = std::string(100, '[') + std::string(100, ']');
  std::string deep_in_ci = with([](json&) {});
  deep_in_ci.insert(deep_in_ci.size() - 1, ",\"ci\":{\"x\":" + deep + "}");
  std::string nan_token = with([](json&) {});
  nan_token.replace(nan_token.find("1021.5"), 6, "NaN");
  // Invalid UTF-8 cannot pass through nlohmann's encoder: a marker is spliced out afterwards.
  const std::string utf8_marker = "INVALID_UTF8_HERE";
  std::string bad_utf8 = with([&](json& u) { u["commit"]["subject"] = utf8_marker; });
  bad_utf8.replace(bad_utf8.find(utf8_marker), utf8_marker.size(), "ab\xC3\x28yz");
  struct Case {
    std::string name;
    std::string body;
    std::string field;
  };
  std::vector<Case> cases = {
      {"malformed", "{\"id\": ", ""},
      {"not an object", "[1,2]", ""},
      {"empty", "", ""},
      {"wrong type", with([](json& u) { u["results"][0]["values"] = "fast"; }),
       "results[0].values"},
      {"wrong element type", with([](json& u) { u["results"][0]["values"][1] = "x"; }),
       "results[0].values[1]"},
      {"missing results", with([](json& u) { u.erase("results"); }), "results"},
      {"missing id", with([](json& u) { u.erase("id"); }), "id"},
      {"missing branch", with([](json& u) { u.erase("branch"); }), "branch"},
      {"NaN token", nan_token, ""},
      {"negative time", with([](json& u) { u["results"][0]["values"][2] = -1.0; }),
       "results[0].values[2]"},
      {"unknown direction", with([](json& u) { u["results"][0]["direction"] = "sideways"; }),
       "results[0].direction"},
      {"deep nesting", deep_in_ci, ""},
      {"deep root", deep, ""},
      {"invalid UTF-8", bad_utf8, ""},
      {"project mismatch", with([](json& u) { u["project"] = "beta"; }), "project"},
      {"unknown field", with([](json& u) { u["brnach"] = "main"; }), "brnach"},
      {"bad time", with([](json& u) { u["started_at"] = "yesterday"; }), "started_at"},
  };
  for (const auto& c : cases) {
    auto response = Call("POST", path, alpha_, c.body);
    EXPECT_EQ(response.status, 400) << c.name << ": " << response.body;
    if (response.status == 400) {
      EXPECT_EQ(Body(response)["error"]["code"], "INVALID_ARGUMENT") << c.name;
      if (!c.field.empty()) {
        EXPECT_EQ(Field(response), c.field) << c.name << ": " << response.body;
      }
    }
  }
  auto no_type = Call("POST", path, alpha_, ValidUpload().dump(), "");
  EXPECT_EQ(no_type.status, 415);
  EXPECT_EQ(runs_.ingest_calls, 0);
}

TEST_F(ApiTest, SqlLookingStringsAreStoredVerbatim) {
  const std::string sql = "x'); DROP TABLE runs; --";
  json upload = ValidUpload();
  upload["commit"]["subject"] = sql;
  upload["results"][0]["benchmark"] = "BM_" + sql;
  auto response = Call("POST", "/api/v1/projects/alpha/runs", alpha_, upload.dump());
  ASSERT_EQ(response.status, 201) << response.body;
  const auto& stored = runs_.runs.at(kRunId).upload;
  EXPECT_EQ(stored.commit.subject, sql);
  EXPECT_EQ(stored.results[0].key.benchmark, "BM_" + sql);
}

TEST_F(ApiTest, ListAndGetRuns) {
  ASSERT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_, ValidUpload().dump()).status, 201);
  std::string sha(40, 'C');
  auto list =
      Call("GET",
           "/api/v1/projects/alpha/runs?branch=main&commit=" + sha +
               "&testbed=ci-x86-1&since=2024-01-01T00:00:00Z&until=2024-12-31T23:59:59%2B02:00"
               "&limit=10&cursor=abc",
           alpha_read_);
  ASSERT_EQ(list.status, 200) << list.body;
  json body = Body(list);
  EXPECT_EQ(body["runs"].size(), 1u);
  EXPECT_EQ(body["next_cursor"], "next-page");
  EXPECT_EQ(runs_.last_filter.branch, "main");
  EXPECT_EQ(runs_.last_filter.commit, std::string(40, 'c'));
  EXPECT_EQ(runs_.last_filter.until, "2024-12-31T23:59:59+02:00");
  EXPECT_EQ(runs_.last_filter.limit, 10);
  EXPECT_EQ(runs_.last_filter.cursor, "abc");

  auto one = Call("GET", std::string("/api/v1/projects/alpha/runs/") + kRunId, alpha_read_);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(Body(one)["run"]["id"], kRunId);
  EXPECT_EQ(Body(one)["upload"]["results"][0]["values"], json({1021.5, 1019.2, 1030.8}));
  EXPECT_EQ(Body(one)["upload"]["project"], "alpha");
  EXPECT_EQ(
      Call("GET", "/api/v1/projects/alpha/runs/00000000-0000-0000-0000-000000000000", alpha_read_)
          .status,
      404);
  // Another project's token cannot read it through its own project either.
  EXPECT_EQ(Call("GET", std::string("/api/v1/projects/beta/runs/") + kRunId, beta_).status, 404);
}

TEST_F(ApiTest, QueryParametersAreChecked) {
  struct Case {
    std::string target;
    std::string field;
  };
  std::vector<Case> cases = {
      {"/api/v1/projects/alpha/runs?brnach=main", "brnach"},
      {"/api/v1/projects/alpha/runs?branch=a&branch=b", "branch"},
      {"/api/v1/projects/alpha/runs?limit=0", "limit"},
      {"/api/v1/projects/alpha/runs?limit=1001", "limit"},
      {"/api/v1/projects/alpha/runs?limit=ten", "limit"},
      {"/api/v1/projects/alpha/runs?since=2024-02-30T00:00:00Z", "since"},
      {"/api/v1/projects/alpha/runs?until=2024-01-01", "until"},
      {"/api/v1/projects/alpha/runs?commit=abc", "commit"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m", "branch"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main&raw=2", "raw"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main&limit=10001", "limit"},
      {"/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main&bogus=1", "bogus"},
      {"/api/v1/projects/alpha/compare?base=x", "contender"},
      {"/api/v1/projects/alpha/compare?base=x&contender=y&threshold=5", "threshold"},
      {"/api/v1/projects/alpha/compare?base=x&contender=y&alpha=2", "alpha"},
      {"/api/v1/projects/alpha?verbose=1", "verbose"},
      {"/healthz?x=1", "x"},
  };
  for (const auto& c : cases) {
    auto response = Call("GET", c.target, alpha_);
    EXPECT_EQ(response.status, 400) << c.target << ": " << response.body;
    EXPECT_EQ(Field(response), c.field) << c.target;
  }
}

// --- dashboards -----------------------------------------------------------------------------

TEST_F(ApiTest, SeriesSummaries) {
  auto response = Call("GET",
                       "/api/v1/projects/alpha/series?benchmark=BM_Sort%2F1024&metric=real_time"
                       "&branch=main&testbed=ci-x86-1&raw=1",
                       alpha_read_);
  ASSERT_EQ(response.status, 200) << response.body;
  json body = Body(response);
  EXPECT_EQ(series_.last_query.benchmark, "BM_Sort/1024");
  EXPECT_EQ(series_.last_query.testbed, "ci-x86-1");
  EXPECT_EQ(series_.last_query.limit, 1000);
  EXPECT_EQ(body["benchmark"], "BM_Sort/1024");
  EXPECT_EQ(body["suite"], "gbench");
  EXPECT_EQ(body["metric"], "real_time");
  EXPECT_EQ(body["unit"], "ns");
  EXPECT_EQ(body["direction"], "lower");
  EXPECT_EQ(body["branch"], "main");
  ASSERT_EQ(body["points"].size(), 2u);
  json p = body["points"][0];
  EXPECT_EQ(p["commit"], std::string(40, 'a'));
  EXPECT_EQ(p["subject"], "first");
  EXPECT_EQ(p["time"], "2024-04-01T01:00:00Z");
  EXPECT_EQ(p["runs"], json({"r1"}));
  EXPECT_EQ(p["n"], 10);
  EXPECT_DOUBLE_EQ(p["median"].get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(p["min"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(p["max"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(p["mean"].get<double>(), 5.5);
  EXPECT_NEAR(p["p95"].get<double>(), 9.55, 1e-12);  // numpy.percentile(1..10, 95)
  EXPECT_NEAR(p["q1"].get<double>(), 3.25, 1e-12);   // numpy.percentile(1..10, 25)
  EXPECT_NEAR(p["q3"].get<double>(), 7.75, 1e-12);   // numpy.percentile(1..10, 75)
  // mean +/- t(0.975, 9) * s / sqrt(10) (scipy.stats.t.interval)
  EXPECT_NEAR(p["ci"][0].get<double>(), 3.3341494103866087, 1e-9);
  EXPECT_NEAR(p["ci"][1].get<double>(), 7.665850589613392, 1e-9);
  EXPECT_EQ(p["values"].size(), 10u);
  json single = body["points"][1];
  EXPECT_TRUE(single["ci"].is_null());
  EXPECT_TRUE(single["author_time"].is_null());
  EXPECT_DOUBLE_EQ(single["p95"].get<double>(), 42);
  EXPECT_DOUBLE_EQ(single["q1"].get<double>(), 42);

  auto plain =
      Call("GET", "/api/v1/projects/alpha/series?benchmark=b&metric=m&branch=main", alpha_read_);
  EXPECT_FALSE(Body(plain)["points"][0].contains("values"));
}

TEST_F(ApiTest, BenchmarksAndMetrics) {
  auto benchmarks = Call("GET", "/api/v1/projects/alpha/benchmarks", alpha_read_);
  ASSERT_EQ(benchmarks.status, 200);
  EXPECT_EQ(Body(benchmarks)["benchmarks"], json::parse(R"([{"suite":"gbench","name":"BM_Sort/1024",
                "metrics":[{"name":"real_time","unit":"ns","direction":"lower"}]}])"));
  auto metrics = Call("GET", "/api/v1/projects/alpha/metrics", alpha_read_);
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(Body(metrics)["metrics"],
            json::parse(R"([{"name":"real_time","unit":"ns","direction":"lower"}])"));
  auto branches = Call("GET", "/api/v1/projects/alpha/branches", alpha_read_);
  ASSERT_EQ(branches.status, 200);
  EXPECT_EQ(Body(branches)["branches"],
            json::parse(R"([{"name":"main","runs":3,"last_run_at":"2024-04-02T01:00:00Z"},
                            {"name":"old","runs":0,"last_run_at":null}])"));
  auto testbeds = Call("GET", "/api/v1/projects/alpha/testbeds", alpha_read_);
  ASSERT_EQ(testbeds.status, 200);
  EXPECT_EQ(Body(testbeds)["testbeds"][0]["name"], "ci-x86-1");
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/branches").status, 401);
  EXPECT_EQ(Call("GET", "/api/v1/projects/alpha/testbeds?x=1", alpha_read_).status, 400);
}

TEST_F(ApiTest, CompareFindsAPlantedRegression) {
  auto upload = [](const std::string& id, double slowdown) {
    json u = ValidUpload();
    u["id"] = id;
    json results = json::array();
    for (const std::string name : {"BM_A", "BM_B", "BM_C"}) {
      json values = json::array();
      for (int i = 0; i < 12; ++i) {
        double noise = 1 + 0.002 * ((i * 7) % 5 - 2);
        values.push_back(1000 * noise * (name == "BM_B" ? slowdown : 1.0));
      }
      results.push_back({{"suite", "gbench"},
                         {"benchmark", name},
                         {"metric", "real_time"},
                         {"unit", "ns"},
                         {"direction", "lower"},
                         {"values", values}});
    }
    u["results"] = results;
    return u.dump();
  };
  const std::string base = "aaaaaaaa-1111-4222-8333-444455556666";
  const std::string contender = "bbbbbbbb-1111-4222-8333-444455556666";
  ASSERT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_, upload(base, 1.0)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/projects/alpha/runs", alpha_, upload(contender, 1.2)).status,
            201);
  auto response =
      Call("GET", "/api/v1/projects/alpha/compare?base=" + base + "&contender=" + contender,
           alpha_read_);
  ASSERT_EQ(response.status, 200) << response.body;
  json body = Body(response);
  for (const char* key :
       {"metric", "unit", "direction", "threshold", "alpha", "test", "confidence", "algorithm",
        "benchmarks", "suite", "counts", "only_in_base", "only_in_contender", "warnings"}) {
    EXPECT_TRUE(body.contains(key)) << key;
  }
  EXPECT_EQ(body["metric"], "real_time");
  EXPECT_EQ(body["unit"], "ns");
  EXPECT_DOUBLE_EQ(body["threshold"].get<double>(), 0.05);
  EXPECT_EQ(body["counts"]["regression"], 1);
  ASSERT_EQ(body["benchmarks"].size(), 3u);
  for (const auto& b : body["benchmarks"]) {
    for (const char* key : {"name", "base", "contender", "change", "change_ci", "p_welch",
                            "p_welch_log", "p_utest", "p_adjusted", "verdict", "reason"}) {
      EXPECT_TRUE(b.contains(key)) << key;
    }
    EXPECT_EQ(b["verdict"], b["name"] == "BM_B" ? "REGRESSION" : "EQUIVALENT") << b.dump();
  }
  EXPECT_NEAR(body["benchmarks"][1]["change"].get<double>(), 0.2, 1e-9);

  // A 25% threshold lets the 20% slowdown pass.
  auto lenient = Call("GET",
                      "/api/v1/projects/alpha/compare?base=" + base + "&contender=" + contender +
                          "&threshold=25%25&alpha=0.01",
                      alpha_read_);
  ASSERT_EQ(lenient.status, 200) << lenient.body;
  EXPECT_EQ(Body(lenient)["counts"]["regression"], 0);
  EXPECT_DOUBLE_EQ(Body(lenient)["threshold"].get<double>(), 0.25);

  auto missing = Call("GET",
                      "/api/v1/projects/alpha/compare?base=" + base +
                          "&contender=00000000-0000-0000-0000-000000000000",
                      alpha_read_);
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Field(missing), "contender");
  auto no_metric = Call("GET",
                        "/api/v1/projects/alpha/compare?base=" + base + "&contender=" + contender +
                            "&metric=cpu_time",
                        alpha_read_);
  EXPECT_EQ(no_metric.status, 400);
  EXPECT_EQ(Field(no_metric), "metric");
}

// --- operations -----------------------------------------------------------------------------

TEST_F(ApiTest, HealthReadinessMetricsAndOpenApi) {
  auto health = Call("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(Body(health), json({{"status", "ok"}, {"version", std::string(Version())}}));
  auto ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(Body(ready), json({{"status", "ready"}}));
  db_up_ = false;
  auto not_ready = Call("GET", "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(Body(not_ready)["error"]["code"], "UNAVAILABLE");
  EXPECT_TRUE(not_ready.headers.Get("Retry-After").has_value());

  metrics_.ObserveRequest("healthz", 200, 0.001);
  auto metrics = Call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type.rfind("text/plain", 0), 0u);
  EXPECT_NE(metrics.body.find("perfwarden_http_requests_total{route=\"healthz\",status=\"200\"} 1"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("perfwarden_ingested_samples_total"), std::string::npos);

  auto openapi = Call("GET", "/api/v1/openapi.yaml");
  EXPECT_EQ(openapi.status, 200);
  // The document as written: its licence comment, then the OpenAPI version.
  EXPECT_EQ(openapi.body.rfind("# SPDX-License-Identifier: Apache-2.0\nopenapi: 3.0", 0), 0u)
      << openapi.body.substr(0, 80);
  EXPECT_NE(openapi.body.find("/api/v1/projects/{project}/runs"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::server::api
