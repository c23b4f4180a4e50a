// SPDX-License-Identifier: Apache-2.0
// wire/verdict_text.h and wire/verdict_replay.h: the verdict's parts as the server writes and
// stores them (the results text with sorted keys and shortest numbers, the summary, the baseline),
// the body spliced from them, read back to the same typed verdict (every fixture the server wrote,
// and verdicts built here); the replay's typed comparison and its answer.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/json_keys.h"
#include "tests/testing/oracle_csv.h"
#include "wire/verdict.h"
#include "wire/verdict_replay.h"
#include "wire/verdict_text.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;
using perfwarden::testing::FixturePath;
using perfwarden::testing::ReadFile;

using perfwarden::testing::KeysSorted;

// The verdict's stored parts, kept alive with their view.
struct Stored {
  explicit Stored(const Verdict& verdict)
      : v(verdict),
        outcome(OutcomeName(v.outcome)),
        parameters(EncodeVerdict(v)["parameters"].dump()),
        baseline(v.baseline ? EncodeBaseline(*v.baseline).dump() : ""),
        summary(EncodeVerdictSummary(v)),
        results(EncodeResultsText(v.results)),
        ids(v.contender_run_ids) {
    text.id = v.id;
    text.run_id = v.run_id;
    text.created_at = v.created_at;
    text.outcome = outcome;
    text.algorithm_version = v.algorithm_version;
    text.parameters_json = parameters;
    text.baseline_json = baseline;
    text.contender_run_ids = ids;
    text.summary_json = summary;
    text.results_json = results;
  }
  Verdict v;
  std::string outcome, parameters, baseline, summary, results;
  std::vector<std::string> ids;
  StoredVerdictText text;
};

MetricResult Row(const std::string& benchmark, ResultKind kind) {
  MetricResult r;
  r.key = {"core", benchmark, "real_time"};
  r.unit = "ns";
  r.threshold = 0.05;
  r.kind = kind;
  r.base = Summary{10, 100.5, 0.01};
  r.current = Summary{10, 110.25, 0.02};
  r.change = 0.097;
  r.change_ci = Interval{0.05, 0.125};
  r.p_value = 1.5e-05;
  r.p_adjusted = 3e-05;
  r.reason = "slower \"by\" 9.7%";
  return r;
}

Verdict Sample(bool paired) {
  Verdict v;
  v.id = 7;
  v.run_id = "11111111-2222-3333-4444-555555555555";
  v.created_at = "2026-01-02T03:04:05Z";
  v.outcome = Outcome::kRegression;
  v.algorithm_version = "perfwarden-verdict/1";
  v.parameters.test = "utest";
  v.parameters.correction = "holm";
  v.parameters.bootstrap_resamples = 2000;
  v.baseline = Baseline{std::string(40, 'b'), "main", "ci-1", {"r1", "r2"}, "merge_base", 0};
  v.contender_run_ids = {v.run_id};
  v.commit = std::string(40, 'c');
  v.branch = "feature";
  v.testbed = "ci-1";
  v.pr = 12;
  v.warnings = {"one", "two"};
  v.results = {Row("BM_Slow", ResultKind::kRegression), Row("BM_Same", ResultKind::kEquivalent)};
  v.results[0].attribution = Attribution{{{"cpu_time", "REGRESSION", 0.1}}, std::nullopt, "hint"};
  v.results[0].environment = "throttled";
  MetricResult added;
  added.key = {"core", "BM_New", "real_time"};
  added.kind = ResultKind::kNew;
  added.threshold = 0.05;
  added.current = Summary{1, 3.0, std::nullopt};
  added.reason = "not in the baseline";
  v.results.push_back(added);
  v.counts = {1, 0, 1, 0, 0, 1, 0, 0};
  v.runner_version = "1.2.3";
  v.environment_shift = EnvironmentShift{3, 0.1, 0.11, 1.0, "moved together"};
  if (paired) {
    v.results[1].kind = ResultKind::kUnstable;
    v.results[1].paired = PairedDetail{
        6, 0.01, 0.02, Interval{-0.1, 0.2}, std::nullopt, 0.01, 0.02, 0.5, 0.4, 0.3, 12, -1};
    v.counts = {1, 0, 0, 0, 0, 1, 1, 0};
    PairedSummary s;
    s.baseline_commit = std::string(40, 'b');
    s.amends = 3;
    s.measured = 2;
    s.looks = 1;
    s.blocks = 6;
    s.geomean_change = 0.05;
    s.geomean_ci = Interval{0.01, 0.09};
    v.paired = s;
  }
  return v;
}

TEST(VerdictText, TheStoredPartsReadBackToTheSameVerdict) {
  for (bool paired : {false, true}) {
    const Verdict v = Sample(paired);
    Stored stored(v);
    auto decoded = DecodeStoredVerdict(stored.text);
    ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
    EXPECT_EQ(*decoded, v) << EncodeVerdictBody(stored.text);
    // Written in nlohmann's order, so that the text parses and dumps back to itself.
    EXPECT_EQ(json::parse(stored.results).dump(), stored.results);
    EXPECT_EQ(json::parse(stored.summary).dump(), stored.summary);
    EXPECT_TRUE(KeysSorted(nlohmann::ordered_json::parse(stored.results)));
    // "unstable" and "pass" are counted in paired verdicts only.
    EXPECT_EQ(json::parse(stored.summary)["counts"].contains("unstable"), paired);
    EXPECT_EQ(json::parse(stored.summary)["counts"].contains("pass"), paired);
  }
}

TEST(VerdictText, EveryFixtureTheServerWroteReadsBackTheSame) {
  for (const char* name : {"gpu_attribution", "no_baseline", "noisy_environment", "paired", "pass",
                           "regression", "special_names"}) {
    auto verdict = DecodeVerdict(ReadFile(FixturePath(std::string("verdicts/") + name + ".json")));
    ASSERT_TRUE(verdict.has_value()) << name << ": " << verdict.error().ToString();
    verdict->project.clear();
    verdict->report_url.reset();
    Stored stored(*verdict);
    auto decoded = DecodeStoredVerdict(stored.text);
    ASSERT_TRUE(decoded.has_value()) << name << ": " << decoded.error().ToString();
    EXPECT_EQ(*decoded, *verdict) << name;
  }
}

TEST(VerdictText, NumbersThatAreNotFiniteAreNull) {
  MetricResult r = Row("BM_X", ResultKind::kInconclusive);
  r.change_ci = Interval{NAN, INFINITY};
  r.base = Summary{1, 5.0, NAN};
  r.p_value = NAN;
  const json row = json::parse(EncodeResultsText(std::vector<MetricResult>{r}))[0];
  EXPECT_EQ(row["change_ci"], json::parse("[null,null]"));
  EXPECT_TRUE(row["base"]["cv"].is_null());
  EXPECT_TRUE(row["p_value"].is_null());
  EXPECT_EQ(EncodeResultsText({}), "[]");
}

TEST(VerdictText, TheBodyIsSplicedInTheAPIsOrder) {
  Stored stored(Sample(false));
  const std::string body = EncodeVerdictBody(stored.text);
  EXPECT_EQ(body.rfind(R"({"verdict":{"id":7,"run_id":"11111111-2222-3333-4444-555555555555",)"
                       R"("created_at":"2026-01-02T03:04:05Z","outcome":"regression",)",
                       0),
            0u)
      << body;
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(body)["verdict"];
  std::vector<std::string> keys;
  for (const auto& [key, value] : ordered.items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"id", "run_id", "created_at", "outcome", "algorithm_version",
                                      "parameters", "baseline", "contender_run_ids", "branch",
                                      "commit", "counts", "environment_shift", "pr",
                                      "runner_version", "testbed", "warnings", "results"}));
  stored.text.baseline_json = "";
  EXPECT_TRUE(json::parse(EncodeVerdictBody(stored.text))["verdict"]["baseline"].is_null());
}

TEST(VerdictText, AttributionSortedKeysAndShortestNumbers) {
  Attribution a;
  a.hint = "the GPU waited";
  a.moved = {{"gpu_utilization", "INCONCLUSIVE", -0.2}, {"tflops", "REGRESSION", -0.095}};
  a.roofline = Roofline{"memory-bound", 100, 295.25};
  EXPECT_EQ(EncodeAttributionText(a),
            R"x({"hint":"the GPU waited","moved":[{"change":-0.2,"metric":)x"
            R"x("gpu_utilization","verdict":"INCONCLUSIVE"},{"change":-0.095,"metric":"tflops",)x"
            R"x("verdict":"REGRESSION"}],"roofline":{"class":"memory-bound","intensity":100,)x"
            R"x("ridge":295.25}})x");
  EXPECT_EQ(EncodeAttributionText(Attribution{}), R"({"moved":[]})");
}

TEST(VerdictReplay, TypedValuesAreComparedAsTheJsonWritesThem) {
  const Verdict stored = Sample(false);
  EXPECT_TRUE(CompareVerdicts(stored, stored).empty());

  Verdict replayed = stored;
  replayed.outcome = Outcome::kPass;
  replayed.results[1].p_adjusted = 0.5;
  replayed.results[1].kind = ResultKind::kInconclusive;
  const std::vector<ReplayDifference> differences = CompareVerdicts(stored, replayed);
  ASSERT_EQ(differences.size(), 3u);
  EXPECT_EQ(differences[0], (ReplayDifference{"outcome", std::nullopt, "regression", "pass"}));
  EXPECT_EQ(differences[1],
            (ReplayDifference{"results[1].verdict", "BM_Same", "EQUIVALENT", "INCONCLUSIVE"}));
  EXPECT_EQ(differences[2], (ReplayDifference{"results[1].p_adjusted", "BM_Same", 3e-05, 0.5}));

  // An interval with a bound that is not finite reads back as none: the same.
  Verdict nan_ci = stored;
  nan_ci.results[0].change_ci = Interval{NAN, NAN};
  Verdict no_ci = stored;
  no_ci.results[0].change_ci.reset();
  EXPECT_TRUE(CompareVerdicts(no_ci, nan_ci).empty());

  replayed = stored;
  replayed.results.pop_back();
  ASSERT_EQ(CompareVerdicts(stored, replayed).size(), 1u);
  EXPECT_EQ(CompareVerdicts(stored, replayed)[0],
            (ReplayDifference{"results", std::nullopt, 3, 2}));
}

TEST(VerdictReplay, TheAnswerHasTheReplayAndTheStoredVerdict) {
  Stored stored(Sample(true));
  VerdictReplay replay;
  replay.algorithm_version = "perfwarden-verdict/2";
  replay.stored_algorithm_version = "perfwarden-verdict/1";
  replay.differences = {{"results[0].change", "BM_Slow", 0.097, 0.1}};
  const json answer = json::parse(EncodeReplayBody(stored.text, replay));
  EXPECT_EQ(answer["verdict"], json::parse(EncodeVerdictBody(stored.text))["verdict"]);
  EXPECT_EQ(answer["replay"], json::parse(R"({"matches": false,
      "algorithm_version": "perfwarden-verdict/2", "stored_algorithm_version": "perfwarden-verdict/1",
      "differences": [{"field": "results[0].change", "benchmark": "BM_Slow", "stored": 0.097,
                       "replayed": 0.1}]})"));
  replay.differences.clear();
  EXPECT_TRUE(json::parse(EncodeReplayBody(stored.text, replay))["replay"]["matches"].get<bool>());
}

}  // namespace
}  // namespace perfwarden::wire
