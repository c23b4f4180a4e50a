// SPDX-License-Identifier: Apache-2.0
// Verdicts end to end: a real server and PostgreSQL, runs posted over HTTP, then
// POST/GET .../verdict. Baseline selection (merge-base, first-parent ancestor, a main branch
// that moved on, another host fingerprint, none), the three-way verdict with thresholds and
// rules, pooling reruns, replay, the auth rules of the two routes, and the attribution and
// environment notes of a training suite's GPU telemetry.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/test_server.h"

// The RunSpec designated initializers below name only what differs from the defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace perfwarden {
namespace {

using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;

std::string RunId(int n) { return testing::TestRunId(n); }

std::string Sha(int n) { return testing::TestSha(n, 0xbee); }

// `reps` repetitions around `center`, about 0.6% spread, deterministic per salt.
std::vector<double> Noisy(double center, int salt, int reps = 20) {
  std::vector<double> values;
  for (int i = 0; i < reps; ++i) {
    values.push_back(center * (1.0 + 0.0012 * static_cast<double>((i * 7 + salt * 3) % 11 - 5)));
  }
  return values;
}

struct RunSpec {
  int id = 0;
  std::string branch = "main";
  int commit = 0;
  std::string target_branch;  // "" for a main-branch run
  int merge_base = -1;        // -1: none
  std::vector<int> ancestry;
  std::string fingerprint_cpu = "cpu-a";
  // Factor applied to each benchmark's center (A, B, C).
  double a = 1, b = 1, c = 1;
  int salt = 0;
  int reps = 20;
};

json Upload(const RunSpec& s) {
  json results = json::array();
  const std::vector<std::pair<std::string, double>> centers = {
      {"BM_A", 1000 * s.a}, {"BM_B", 2000 * s.b}, {"BM_C", 3000 * s.c}};
  int k = 0;
  for (const auto& [name, center] : centers) {
    results.push_back({{"suite", "s"},
                       {"benchmark", name},
                       {"metric", "real_time"},
                       {"unit", "ns"},
                       {"direction", "lower"},
                       {"values", Noisy(center, s.salt + k++, s.reps)}});
  }
  json upload = {
      {"id", RunId(s.id)},
      {"project", "proj"},
      {"branch", s.branch},
      {"commit", {{"sha", Sha(s.commit)}, {"subject", "c" + std::to_string(s.commit)}}},
      {"testbed", {{"name", "bed"}, {"fingerprint", {{"cpu_model", s.fingerprint_cpu}}}}},
      {"results", results}};
  if (!s.target_branch.empty()) upload["target_branch"] = s.target_branch;
  if (s.merge_base >= 0) upload["merge_base"] = Sha(s.merge_base);
  json ancestry = json::array();
  for (int a : s.ancestry) ancestry.push_back(Sha(a));
  if (!ancestry.empty()) upload["ancestry"] = ancestry;
  return upload;
}

// A training suite's run (benchmark = suite name, runner/run/train_suite.h): step_time with a
// sample per step, and GPU telemetry with one value per run (runner/telemetry/gpu_sampler.h).
json TrainUpload(const RunSpec& s, double step_factor, double utilization, double throttled) {
  json upload = Upload(s);
  auto series = [](const std::string& metric, const std::string& unit, const std::string& direction,
                   std::vector<double> values) {
    return json{{"suite", "train"}, {"benchmark", "train"},   {"metric", metric},
                {"unit", unit},     {"direction", direction}, {"values", std::move(values)}};
  };
  upload["results"] = {series("step_time", "s", "lower", Noisy(0.1 * step_factor, s.salt, 40)),
                       series("gpu_utilization", "%", "higher", {utilization}),
                       series("gpu_sm_clock", "MHz", "higher", {1980}),
                       series("gpu_throttled_fraction", "ratio", "lower", {throttled})};
  return upload;
}

class VerdictE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
    if (HasFatalFailure()) return;
    ci_ = Token({"ingest", "read"});
    reader_ = Token({"read"});
  }

  std::string Token(const std::vector<std::string>& scopes) {
    HttpResponse r = http_->Post("/api/v1/projects/proj/tokens",
                                 json{{"name", "t"}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(r.status, 201) << r.body;
    return r.Json().value("token", "");
  }
  void Post(const RunSpec& spec) {
    HttpResponse r = http_->Post("/api/v1/projects/proj/runs", Upload(spec).dump(), ci_);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  void PostTrain(const RunSpec& spec, double step_factor, double utilization, double throttled) {
    HttpResponse r =
        http_->Post("/api/v1/projects/proj/runs",
                    TrainUpload(spec, step_factor, utilization, throttled).dump(), ci_);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  void ExpectReplayMatches(int run) {
    HttpResponse replay =
        http_->Get("/api/v1/projects/proj/runs/" + RunId(run) + "/verdict?replay=1", reader_);
    ASSERT_EQ(replay.status, 200) << replay.body;
    EXPECT_TRUE(replay.Json()["replay"]["matches"].get<bool>()) << replay.body;
  }
  // POST .../verdict; the verdict object (null on failure, with a test failure).
  json Verdict(int run, const json& body = json::object(), int expected_status = 201) {
    HttpResponse r =
        http_->Post("/api/v1/projects/proj/runs/" + RunId(run) + "/verdict", body.dump(), ci_);
    EXPECT_EQ(r.status, expected_status) << r.body;
    json parsed = r.Json();
    return parsed.is_object() && parsed.contains("verdict") ? parsed["verdict"] : parsed;
  }
  static const json& Row(const json& verdict, const std::string& metric) {
    static const json none;
    for (const json& r : verdict["results"]) {
      if (r["metric"] == metric) return r;
    }
    ADD_FAILURE() << "no result for " << metric;
    return none;
  }
  static const json& Result(const json& verdict, const std::string& benchmark) {
    static const json none;
    for (const json& r : verdict["results"]) {
      if (r["benchmark"] == benchmark) return r;
    }
    ADD_FAILURE() << "no result for " << benchmark;
    return none;
  }

  std::string ci_, reader_;
};

TEST_F(VerdictE2eTest, APlantedRegressionFailsOnlyThatBenchmark) {
  Post({.id = 1, .commit = 1});
  Post({.id = 2, .commit = 1, .salt = 5});  // two baseline runs at the merge-base: pooled
  // The PR: A 10% slower, B unchanged, C 2% slower (under the 5% threshold).
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.10,
        .c = 1.02,
        .salt = 2});
  json v = Verdict(10);
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(v["baseline"]["commit"], Sha(1));
  EXPECT_EQ(v["baseline"]["selection"], "merge_base");
  EXPECT_EQ(v["baseline"]["run_ids"], (json{RunId(1), RunId(2)}));
  EXPECT_EQ(Result(v, "BM_A")["verdict"], "REGRESSION");
  EXPECT_NEAR(Result(v, "BM_A")["change"].get<double>(), 0.10, 0.01);
  EXPECT_EQ(Result(v, "BM_A")["base"]["n"], 40);
  EXPECT_EQ(Result(v, "BM_A")["current"]["n"], 20);
  EXPECT_NE(Result(v, "BM_B")["verdict"], "REGRESSION");
  EXPECT_NE(Result(v, "BM_C")["verdict"], "REGRESSION");
  EXPECT_EQ(v["counts"]["regression"], 1);
  EXPECT_EQ(v["parameters"]["test"], "utest");
  EXPECT_EQ(v["algorithm_version"], "perfwarden-verdict/2");

  // GET returns the stored verdict; replay recomputes it to the same numbers.
  HttpResponse got = http_->Get("/api/v1/projects/proj/runs/" + RunId(10) + "/verdict", reader_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["verdict"]["id"], v["id"]);
  HttpResponse replay =
      http_->Get("/api/v1/projects/proj/runs/" + RunId(10) + "/verdict?replay=1", reader_);
  ASSERT_EQ(replay.status, 200) << replay.body;
  EXPECT_TRUE(replay.Json()["replay"]["matches"].get<bool>()) << replay.body;

  // The same question again (a retried CI job) gets the stored answer: 200, same verdict.
  json again = Verdict(10, json::object(), 200);
  EXPECT_EQ(again["id"], v["id"]);
  // Other parameters, or a changed baseline, make a new verdict.
  json other = Verdict(10, {{"threshold", 0.2}});
  EXPECT_NE(other["id"], v["id"]);
  EXPECT_EQ(other["outcome"], "pass");
  Post({.id = 3, .commit = 1, .salt = 7});  // a third baseline run at the merge-base
  json rebased = Verdict(10);
  EXPECT_NE(rebased["id"], v["id"]);
  EXPECT_EQ(rebased["baseline"]["run_ids"].size(), 3u);

  // A run names its newest verdict (the dashboard's run page); a baseline run has none.
  json run = http_->Get("/api/v1/projects/proj/runs/" + RunId(10), reader_).Json();
  EXPECT_EQ(run["verdict"]["id"], rebased["id"]);
  EXPECT_EQ(run["verdict"]["outcome"], "regression");
  EXPECT_EQ(run["verdict"]["created_at"], rebased["created_at"]);
  EXPECT_TRUE(
      http_->Get("/api/v1/projects/proj/runs/" + RunId(3), reader_).Json()["verdict"].is_null());
}

TEST_F(VerdictE2eTest, AnAaRunPassesAndATwoPercentSlowdownPasses) {
  Post({.id = 1, .commit = 1});
  Post({.id = 10,
        .branch = "aa",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .salt = 3});
  json aa = Verdict(10);
  EXPECT_EQ(aa["outcome"], "pass");
  EXPECT_EQ(aa["counts"]["regression"], 0);
  Post({.id = 11,
        .branch = "small",
        .commit = 101,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.02,
        .b = 1.02,
        .c = 1.02,
        .salt = 4});
  EXPECT_EQ(Verdict(11)["outcome"], "pass");
}

TEST_F(VerdictE2eTest, TheMergeBaseWinsOverANewerMain) {
  Post({.id = 1, .commit = 1});
  // main moved on after the PR branched: commit 2 is 20% slower everywhere.
  Post({.id = 2, .commit = 2, .ancestry = {1}, .a = 1.2, .b = 1.2, .c = 1.2});
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .ancestry = {1},
        .salt = 1});
  json v = Verdict(10);
  EXPECT_EQ(v["baseline"]["commit"], Sha(1));
  EXPECT_EQ(v["outcome"], "pass");
  // The main-branch run at commit 2 is judged against its first parent: a regression there.
  json main_verdict = Verdict(2);
  EXPECT_EQ(main_verdict["baseline"]["selection"], "previous_commit");
  EXPECT_EQ(main_verdict["outcome"], "regression");
  EXPECT_EQ(main_verdict["counts"]["regression"], 3);
}

TEST_F(VerdictE2eTest, AnUnmeasuredMergeBaseFallsBackToItsNearestMeasuredAncestor) {
  Post({.id = 1, .commit = 1});
  // Merge-base 3 has no results; its first-parent ancestry is 3, 2, 1.
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 3,
        .ancestry = {3, 2, 1},
        .a = 1.1});
  json v = Verdict(10);
  EXPECT_EQ(v["baseline"]["commit"], Sha(1));
  EXPECT_EQ(v["baseline"]["selection"], "ancestor");
  EXPECT_EQ(v["baseline"]["distance"], 2);
  EXPECT_EQ(v["outcome"], "regression");
  ASSERT_FALSE(v["warnings"].empty());
  EXPECT_NE(v["warnings"][0].get<std::string>().find("2 commit(s) older"), std::string::npos);
}

TEST_F(VerdictE2eTest, NoBaselineIsSaidAndAnotherFingerprintIsNamed) {
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.5});
  json v = Verdict(10);
  EXPECT_EQ(v["outcome"], "no_baseline");
  EXPECT_TRUE(v["baseline"].is_null());
  EXPECT_EQ(Result(v, "BM_A")["verdict"], "NEW");
  // Results at the merge-base exist, but from a host with another CPU: not compared.
  Post({.id = 1, .commit = 1, .fingerprint_cpu = "cpu-b"});
  v = Verdict(10);
  EXPECT_EQ(v["outcome"], "no_baseline");
  ASSERT_FALSE(v["warnings"].empty());
  EXPECT_NE(v["warnings"][0].get<std::string>().find("different host fingerprint"),
            std::string::npos)
      << v["warnings"][0];
}

TEST_F(VerdictE2eTest, RulesSetThresholdsAndIgnoreBenchmarks) {
  Post({.id = 1, .commit = 1});
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.10,
        .b = 1.10,
        .c = 1.03,
        .salt = 2});
  json v = Verdict(10, {{"rules",
                         {{{"benchmark", "BM_A"}, {"percent", 15}},
                          {{"benchmark", "BM_B*"}, {"ignore", true}},
                          {{"benchmark", "*"}, {"percent", 2}}}}});
  EXPECT_EQ(Result(v, "BM_A")["verdict"], "EQUIVALENT");  // 10% inside a 15% threshold
  EXPECT_DOUBLE_EQ(Result(v, "BM_A")["threshold"].get<double>(), 0.15);
  EXPECT_EQ(Result(v, "BM_B")["verdict"], "IGNORED");
  EXPECT_EQ(Result(v, "BM_C")["verdict"], "REGRESSION");  // 3% over a 2% threshold
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(v["counts"]["ignored"], 1);
  EXPECT_EQ(v["parameters"]["rules"].size(), 3u);

  // Bad requests name the field and store nothing.
  json bad = Verdict(10, {{"rules", {{{"percent", -1}}}}}, 400);
  EXPECT_EQ(bad["error"]["field"], "rules[0].percent");
  bad = Verdict(10, {{"threshhold", 0.05}}, 400);
  EXPECT_EQ(bad["error"]["field"], "threshhold");
  bad = Verdict(10, {{"test", "ztest"}}, 400);
  EXPECT_EQ(bad["error"]["field"], "test");
  HttpResponse latest = http_->Get("/api/v1/projects/proj/runs/" + RunId(10) + "/verdict", ci_);
  EXPECT_EQ(latest.Json()["verdict"]["id"], v["id"]);
}

TEST_F(VerdictE2eTest, RerunsOfTheSameCommitArePooled) {
  Post({.id = 1, .commit = 1});
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.06,
        .salt = 2,
        .reps = 3});
  Post({.id = 11,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.06,
        .salt = 3,
        .reps = 17});
  json v = Verdict(10, {{"contender_runs", {RunId(11)}}});
  EXPECT_EQ(Result(v, "BM_A")["current"]["n"], 20);
  EXPECT_EQ(v["contender_run_ids"], (json{RunId(10), RunId(11)}));
  // Only runs of the same commit and testbed pool.
  Post({.id = 12, .branch = "feature", .commit = 101, .target_branch = "main", .merge_base = 1});
  json bad = Verdict(10, {{"contender_runs", {RunId(12)}}}, 400);
  EXPECT_EQ(bad["error"]["field"], "contender_runs[0]");
}

TEST_F(VerdictE2eTest, ReadTokensGetButDoNotCompute) {
  Post({.id = 1, .commit = 1});
  HttpResponse post =
      http_->Post("/api/v1/projects/proj/runs/" + RunId(1) + "/verdict", "{}", reader_);
  EXPECT_EQ(post.status, 403) << post.body;
  EXPECT_EQ(http_->Post("/api/v1/projects/proj/runs/" + RunId(1) + "/verdict", "{}", "").status,
            401);
  // Reading never computes: no verdict yet is 404 naming the POST.
  HttpResponse get = http_->Get("/api/v1/projects/proj/runs/" + RunId(1) + "/verdict", reader_);
  EXPECT_EQ(get.status, 404) << get.body;
  EXPECT_NE(get.body.find("POST"), std::string::npos) << get.body;
  json computed = Verdict(1);  // the CI token computes it
  EXPECT_EQ(computed["outcome"], "no_baseline");
  get = http_->Get("/api/v1/projects/proj/runs/" + RunId(1) + "/verdict", reader_);
  ASSERT_EQ(get.status, 200) << get.body;
  EXPECT_EQ(get.Json()["verdict"]["id"], computed["id"]);
  // The body's nesting depth is limited like every other body's.
  std::string deep = "{\"rules\":" + std::string(200, '[') + std::string(200, ']') + "}";
  EXPECT_EQ(http_->Post("/api/v1/projects/proj/runs/" + RunId(1) + "/verdict", deep, ci_).status,
            400);
  EXPECT_EQ(http_->Get("/api/v1/projects/proj/runs/" + RunId(99) + "/verdict", reader_).status,
            404);
  EXPECT_EQ(
      http_->Get("/api/v1/projects/proj/runs/" + RunId(99) + "/verdict?replay=1", reader_).status,
      404);
}

// A main-branch run's baseline is prepared in the background once it is stored, so the first
// pull request against its commit finds it ready: the verdict adds a cache hit, no miss.
TEST_F(VerdictE2eTest, MainRunsPrepareTheirBaselineBeforeTheFirstGate) {
  auto cache_stat = [this](const std::string& stat) {
    const std::string body = http_->Get("/metrics").body;
    const std::string key = "perfwarden_baseline_cache{stat=\"" + stat + "\"} ";
    const size_t at = body.find(key);
    return at == std::string::npos ? -1.0 : std::atof(body.c_str() + at + key.size());
  };
  Post({.id = 1, .commit = 1});
  Post({.id = 2, .commit = 1, .salt = 5});
  // Both ingests' preparations done (the second may find the first's work already covering
  // both runs: a hit). A safety net, not a timing assertion.
  for (int i = 0; i < 3000 && cache_stat("hits") + cache_stat("misses") < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(cache_stat("hits") + cache_stat("misses"), 2);
  const double misses = cache_stat("misses");
  const double hits = cache_stat("hits");
  EXPECT_GE(cache_stat("entries"), 1);
  // A pull request's run is not a baseline: nothing is prepared for it.
  Post({.id = 10,
        .branch = "feature",
        .commit = 100,
        .target_branch = "main",
        .merge_base = 1,
        .a = 1.10,
        .salt = 2});
  json v = Verdict(10);
  EXPECT_EQ(v["baseline"]["run_ids"], (json{RunId(1), RunId(2)}));
  EXPECT_EQ(Result(v, "BM_A")["verdict"], "REGRESSION");
  EXPECT_EQ(cache_stat("misses"), misses);
  EXPECT_EQ(cache_stat("hits"), hits + 1);
}

// A training run whose step time rose while GPU utilisation fell is told to look at its input
// pipeline; the same slowdown on throttled GPUs is the host's, and the outcome says so.
TEST_F(VerdictE2eTest, GpuTelemetryExplainsARegressionAndThrottlingVoidsIt) {
  for (int run = 1; run <= 3; ++run) {
    PostTrain({.id = run, .commit = 1, .salt = run}, 1.0, 80 + run * 0.5, 0);
  }
  PostTrain(
      {.id = 10, .branch = "feature", .commit = 100, .target_branch = "main", .merge_base = 1},
      1.10, 64, 0);
  json v = Verdict(10);
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(v["counts"]["regression"], 1);
  const json& step = Row(v, "step_time");
  EXPECT_EQ(step["verdict"], "REGRESSION");
  EXPECT_EQ(step["attribution"]["hint"],
            "utilisation fell while step time rose: look at the input pipeline or "
            "synchronisation (the GPU waited)");
  ASSERT_EQ(step["attribution"]["moved"].size(), 1u) << step.dump();
  EXPECT_EQ(step["attribution"]["moved"][0]["metric"], "gpu_utilization");
  EXPECT_NEAR(step["attribution"]["moved"][0]["change"].get<double>(), -0.2, 0.01);
  EXPECT_FALSE(step.contains("environment"));
  ExpectReplayMatches(10);

  PostTrain({.id = 11, .branch = "hot", .commit = 101, .target_branch = "main", .merge_base = 1},
            1.10, 64, 0.2);
  json noisy = Verdict(11);
  EXPECT_EQ(noisy["outcome"], "noisy_environment");
  EXPECT_EQ(noisy["counts"]["regression"], 1);
  const json& hot = Row(noisy, "step_time");
  EXPECT_EQ(hot["verdict"], "REGRESSION");
  EXPECT_EQ(hot["environment"],
            "the GPUs were throttled in 20% of the samples (power or thermal caps): this run "
            "measures the host, not the code");
  EXPECT_EQ(hot["attribution"]["hint"],
            "the GPU clock fell (power or thermal cap, or application clocks changed): the "
            "environment, not the code");
  // Stored (the outcome passes the table's check) and read back as computed.
  HttpResponse got = http_->Get("/api/v1/projects/proj/runs/" + RunId(11) + "/verdict", reader_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["verdict"]["outcome"], "noisy_environment");
  ExpectReplayMatches(11);
}

}  // namespace
}  // namespace perfwarden
