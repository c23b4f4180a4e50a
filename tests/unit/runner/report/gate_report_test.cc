// SPDX-License-Identifier: Apache-2.0
// `perfwarden gate` verdicts: decoding the server's answer (types, nulls, errors naming the field),
// the order results are listed in, and golden renderings of the fixture verdicts in
// tests/fixtures/verdicts (paired.json: a paired verdict, see paired_render_test.cc). Properties of
// each rendering are in gate_render_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/verdict_model.h"
#include "runner/report/verdict_render.h"
#include "tests/testing/oracle_csv.h"
#include "wire/verdict.h"

namespace perfwarden::report {
namespace {

using perfwarden::testing::FixturePath;
using perfwarden::testing::ReadFile;
using wire::DecodeVerdict;
using wire::MetricResult;
using wire::Outcome;
using wire::OutcomeName;
using wire::ResultKind;
using wire::Verdict;

const std::vector<std::string> kFixtures = {
    "regression",        "pass",  "no_baseline", "special_names", "gpu_attribution",
    "noisy_environment", "paired"};

Verdict Load(const std::string& name) {
  auto verdict = DecodeVerdict(ReadFile(FixturePath("verdicts/" + name + ".json")));
  EXPECT_TRUE(verdict.has_value()) << name << ": " << (verdict ? "" : verdict.error().ToString());
  return verdict ? *verdict : Verdict{};
}

// Golden files were written once by PERFWARDEN_UPDATE_GOLDEN=1 and then read and checked by eye;
// a difference fails with both texts, so a change in wording is a reviewed change.
void ExpectGolden(const std::string& file, const std::string& actual) {
  const std::string path = FixturePath("verdicts/golden/" + file);
  if (std::getenv("PERFWARDEN_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  EXPECT_EQ(ReadFile(path), actual) << "golden file " << path;
}

TEST(DecodeVerdict, ReadsEveryDocumentedField) {
  const Verdict v = Load("regression");
  EXPECT_EQ(v.id, 12);
  EXPECT_EQ(v.run_id, "6f1c0c4e-0000-4000-8000-000000000001");
  EXPECT_EQ(v.outcome, Outcome::kRegression);
  EXPECT_EQ(v.algorithm_version, "perfwarden-verdict/1");
  EXPECT_EQ(v.parameters.test, "utest");
  EXPECT_EQ(v.parameters.bootstrap_resamples, 2000);
  EXPECT_EQ(v.parameters.seed, 24301u);
  ASSERT_EQ(v.parameters.rules.size(), 2u);
  EXPECT_EQ(v.parameters.rules[0].benchmark, "BM_Copy/*");
  EXPECT_EQ(v.parameters.rules[0].percent, 3.0);
  EXPECT_FALSE(v.parameters.rules[1].percent.has_value());
  EXPECT_TRUE(v.parameters.rules[1].ignore);
  ASSERT_TRUE(v.baseline.has_value());
  EXPECT_EQ(v.baseline->selection, "merge_base");
  EXPECT_EQ(v.baseline->run_ids.size(), 2u);
  EXPECT_EQ(v.pr, 42);
  EXPECT_EQ(v.counts.Compared(), 11);
  EXPECT_EQ(v.counts.new_metrics, 1);
  ASSERT_EQ(v.results.size(), 13u);
  const MetricResult& sort = v.results[1];
  EXPECT_EQ(sort.key.benchmark, "BM_Sort/16384");
  EXPECT_EQ(sort.kind, ResultKind::kRegression);
  EXPECT_EQ(sort.base->n, 20);
  EXPECT_EQ(sort.current->median, 1123.4);
  EXPECT_EQ(sort.change_ci->upper, 0.117);
  EXPECT_EQ(sort.p_adjusted, 3.4e-4);
  const MetricResult& fresh = v.results[7];
  EXPECT_EQ(fresh.kind, ResultKind::kNew);
  EXPECT_FALSE(fresh.base || fresh.change || fresh.change_ci || fresh.p_value);
  EXPECT_EQ(v.results[3].direction, Direction::kHigherIsBetter);
  EXPECT_FALSE(v.results[11].base->cv.has_value());

  const Verdict none = Load("no_baseline");
  EXPECT_FALSE(none.baseline.has_value());
  EXPECT_FALSE(none.report_url.has_value());
  // Without "counts" the decoder counts the results itself.
  const Verdict special = Load("special_names");
  EXPECT_EQ(special.counts.regression, 1);
  EXPECT_EQ(special.counts.inconclusive, 1);
  EXPECT_EQ(special.counts.new_metrics, 1);
}

TEST(DecodeVerdict, ReadsAttributionEnvironmentAndTheNoisyOutcome) {
  const Verdict v = Load("gpu_attribution");
  const MetricResult& step = v.results.at(0);
  ASSERT_TRUE(step.attribution.has_value());
  EXPECT_EQ(step.attribution->hint.rfind("utilisation fell while step time rose", 0), 0u);
  ASSERT_EQ(step.attribution->moved.size(), 3u);
  EXPECT_EQ(step.attribution->moved[1].metric, "gpu_utilization");
  EXPECT_EQ(step.attribution->moved[1].verdict, "INCONCLUSIVE");
  EXPECT_EQ(step.attribution->moved[1].change, -0.18);
  ASSERT_TRUE(step.attribution->roofline.has_value());
  EXPECT_EQ(step.attribution->roofline->bound, "memory-bound");
  EXPECT_EQ(step.attribution->roofline->intensity, 42.5);
  EXPECT_EQ(step.environment, "");
  // Without a hint or a roofline: only what moved.
  const MetricResult& samples = v.results.at(1);
  ASSERT_TRUE(samples.attribution.has_value());
  EXPECT_EQ(samples.attribution->hint, "");
  EXPECT_FALSE(samples.attribution->roofline.has_value());
  EXPECT_FALSE(v.results.at(2).attribution.has_value());

  const Verdict noisy = Load("noisy_environment");
  EXPECT_EQ(noisy.outcome, Outcome::kNoisyEnvironment);
  EXPECT_EQ(OutcomeName(noisy.outcome), "noisy_environment");
  EXPECT_NE(noisy.results.at(0).environment.find("throttled in 20% of the samples"),
            std::string::npos);
  // An older server's verdict has neither key.
  for (const MetricResult& r : Load("regression").results) {
    EXPECT_FALSE(r.attribution.has_value()) << r.key.benchmark;
    EXPECT_EQ(r.environment, "") << r.key.benchmark;
  }
}

// The server writes what it could not compute (a NaN) as null, the bounds of an interval too.
TEST(DecodeVerdict, ReadsNullsAsAbsent) {
  auto v = DecodeVerdict(R"({"verdict": {"outcome": "pass", "pr": null, "baseline": null,
      "results": [{"suite": "s", "benchmark": "b", "metric": "m", "verdict": "INCONCLUSIVE",
                   "unit": null, "base": {"n": 1, "median": 2.5, "cv": null},
                   "change": 0.1, "change_ci": [null, null], "p_value": null}]}})");
  ASSERT_TRUE(v.has_value()) << v.error().ToString();
  const MetricResult& r = v->results.at(0);
  EXPECT_FALSE(v->pr || v->baseline || r.change_ci || r.p_value || r.base->cv || r.current);
  EXPECT_EQ(r.unit, "");
  EXPECT_EQ(r.base->median, 2.5);
  EXPECT_EQ(r.change, 0.1);
}

TEST(DecodeVerdict, AcceptsABareVerdictObject) {
  auto v = DecodeVerdict(R"({"outcome": "pass", "results": []})");
  ASSERT_TRUE(v.has_value()) << v.error().ToString();
  EXPECT_EQ(v->outcome, Outcome::kPass);
}

// Each case changes one key of a valid verdict; the error must name exactly that key.
TEST(DecodeVerdict, ErrorsNameTheField) {
  const nlohmann::json valid = nlohmann::json::parse(R"({"verdict": {
      "outcome": "pass", "pr": 3, "warnings": ["w"],
      "parameters": {"rules": [{"ignore": false}], "seed": 1},
      "baseline": {"commit": "a", "run_ids": ["x", "y"], "distance": 0},
      "results": [
        {"suite": "s", "benchmark": "b", "metric": "m", "verdict": "EQUIVALENT"},
        {"suite": "s", "benchmark": "c", "metric": "m", "verdict": "REGRESSION", "direction": "lower",
         "base": {"n": 1, "median": 1.0}, "change_ci": [0.1, 0.2], "environment": "hot",
         "attribution": {"hint": "h", "moved": [{"metric": "n", "verdict": "REGRESSION", "change": 0.1}],
                         "roofline": {"class": "memory-bound", "intensity": 1, "ridge": 2}}}]}})");
  ASSERT_TRUE(DecodeVerdict(valid.dump()).has_value());
  struct Case {
    std::string pointer;
    std::optional<nlohmann::json> value;  // nullopt: remove the key
    std::string field;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/verdict/outcome", std::nullopt, "verdict.outcome", "missing"},
      {"/verdict/outcome", nullptr, "verdict.outcome", "must not be null"},
      {"/verdict/outcome", "maybe", "verdict.outcome", "\"maybe\""},
      {"/verdict/results", std::nullopt, "verdict.results", "missing"},
      {"/verdict/results", "none", "verdict.results", "expected an array, got a string"},
      {"/verdict/results/1", 5, "verdict.results[1]", "expected an object, got a number"},
      {"/verdict/results/1/verdict", "WORSE", "verdict.results[1].verdict", "\"WORSE\""},
      {"/verdict/results/0/benchmark", std::nullopt, "verdict.results[0].benchmark", "missing"},
      {"/verdict/results/1/suite", 7, "verdict.results[1].suite",
       "expected a string, got a number"},
      {"/verdict/results/1/direction", "sideways", "verdict.results[1].direction", "sideways"},
      {"/verdict/results/1/base/n", "20", "verdict.results[1].base.n", "expected an integer"},
      {"/verdict/results/1/base/n", 20.5, "verdict.results[1].base.n", "expected an integer"},
      {"/verdict/results/1/base/n", -1, "verdict.results[1].base.n", "at least 0"},
      {"/verdict/results/1/base/median", "1", "verdict.results[1].base.median", "a number"},
      {"/verdict/results/1/base", "x", "verdict.results[1].base", "expected an object"},
      {"/verdict/results/1/change_ci", nlohmann::json::array({0.1}), "verdict.results[1].change_ci",
       "1 elements"},
      {"/verdict/results/1/change_ci/1", "x", "verdict.results[1].change_ci[1]",
       "expected a number or null, got a string"},
      {"/verdict/baseline/run_ids/1", 7, "verdict.baseline.run_ids[1]", "expected a string"},
      {"/verdict/baseline/distance", -2, "verdict.baseline.distance", "at least 0"},
      {"/verdict/parameters/rules/0/ignore", "yes", "verdict.parameters.rules[0].ignore",
       "expected a boolean"},
      {"/verdict/parameters/seed", -1, "verdict.parameters.seed", "non-negative integer"},
      {"/verdict/results/1/attribution", "x", "verdict.results[1].attribution",
       "expected an object"},
      {"/verdict/results/1/attribution/moved", 3, "verdict.results[1].attribution.moved",
       "expected an array"},
      {"/verdict/results/1/attribution/moved/0", "n", "verdict.results[1].attribution.moved[0]",
       "expected an object"},
      {"/verdict/results/1/attribution/moved/0/metric", std::nullopt,
       "verdict.results[1].attribution.moved[0].metric", "missing"},
      {"/verdict/results/1/attribution/moved/0/change", "x",
       "verdict.results[1].attribution.moved[0].change", "a number"},
      {"/verdict/results/1/attribution/roofline", 1, "verdict.results[1].attribution.roofline",
       "expected an object"},
      {"/verdict/results/1/attribution/roofline/ridge", "2",
       "verdict.results[1].attribution.roofline.ridge", "a number"},
      {"/verdict/results/1/attribution/hint", 5, "verdict.results[1].attribution.hint",
       "expected a string"},
      {"/verdict/results/1/environment", false, "verdict.results[1].environment",
       "expected a string"},
      {"/verdict/pr", "42", "verdict.pr", "expected an integer, got a string"},
      {"/verdict/warnings/0", false, "verdict.warnings[0]", "expected a string, got a boolean"},
      {"/verdict/report_url", 5, "verdict.report_url", "expected a string"},
      {"/verdict/counts", nlohmann::json::array(), "verdict.counts", "expected an object"},
      {"/verdict", nullptr, "verdict", "must not be null"},
  };
  for (const Case& c : cases) {
    nlohmann::json doc = valid;
    const nlohmann::json::json_pointer pointer(c.pointer);
    if (c.value) {
      doc[pointer] = *c.value;
    } else {
      doc[pointer.parent_pointer()].erase(pointer.back());
    }
    auto v = DecodeVerdict(doc.dump());
    ASSERT_FALSE(v.has_value()) << c.pointer;
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidArgument) << c.pointer;
    EXPECT_EQ(v.error().field, c.field) << c.pointer << ": " << v.error().ToString();
    EXPECT_NE(v.error().message.find(c.message), std::string::npos)
        << c.pointer << ": " << v.error().ToString();
  }
  auto malformed = DecodeVerdict("{\"verdict\": ");
  ASSERT_FALSE(malformed.has_value());
  EXPECT_NE(malformed.error().message.find("malformed verdict JSON"), std::string::npos);
  auto array = DecodeVerdict("[]");
  ASSERT_FALSE(array.has_value());
  EXPECT_EQ(array.error().message, "expected an object, got an array");
  auto bare = DecodeVerdict(R"({"outcome": "pass"})");
  ASSERT_FALSE(bare.has_value());
  EXPECT_EQ(bare.error().field, "results");
}

TEST(HasRegression, FollowsTheOutcomeAndFailsSafeOnInconsistency) {
  EXPECT_TRUE(HasRegression(Load("regression")));
  EXPECT_FALSE(HasRegression(Load("pass")));
  EXPECT_FALSE(HasRegression(Load("no_baseline")));
  Verdict odd = Load("pass");
  odd.results[0].kind = ResultKind::kRegression;
  EXPECT_TRUE(HasRegression(odd));
}

TEST(IsNoisyEnvironment, OnlyWhenEveryRegressionHasAnEnvironmentNote) {
  const Verdict noisy = Load("noisy_environment");
  EXPECT_TRUE(IsNoisyEnvironment(noisy));
  EXPECT_TRUE(HasRegression(noisy));  // it is not a pass either
  EXPECT_FALSE(IsNoisyEnvironment(Load("regression")));
  EXPECT_FALSE(IsNoisyEnvironment(Load("gpu_attribution")));
  // A regression the note does not cover fails as a regression, whatever the outcome says.
  Verdict odd = noisy;
  odd.results[0].environment.clear();
  EXPECT_FALSE(IsNoisyEnvironment(odd));
  EXPECT_TRUE(HasRegression(odd));
}

TEST(OrderedResults, RegressionsByHowMuchWorseThenKindsThenNaturalNames) {
  const Verdict v = Load("regression");
  std::vector<std::string> names;
  for (const MetricResult* r : OrderedResults(v)) names.push_back(r->key.benchmark);
  // BM_Copy/4096 (-12% of a higher-is-better throughput) is worse than BM_Sort/16384 (+9.97%).
  const std::vector<std::string> expected = {
      "BM_Copy/4096", "BM_Sort/16384", "BM_Hash/64",   "BM_Parse/json", "BM_Alloc",
      "BM_Sort/1024", "BM_Sort/65536", "BM_Hash/1024", "BM_Sort/8",     "BM_Sort/64",
      "BM_Sort/512",  "BM_Train/step", "BM_Flaky/1"};
  EXPECT_EQ(names, expected);
}

TEST(NaturalLess, ComparesDigitRunsByValue) {
  EXPECT_TRUE(NaturalLess("BM_Sort/8", "BM_Sort/1024"));
  EXPECT_FALSE(NaturalLess("BM_Sort/1024", "BM_Sort/8"));
  EXPECT_TRUE(NaturalLess("a2b", "a10"));
  EXPECT_TRUE(NaturalLess("a", "a1"));
  EXPECT_FALSE(NaturalLess("a1", "a"));
  EXPECT_TRUE(NaturalLess("a01", "a1"));  // equal by value: byte order decides
  EXPECT_FALSE(NaturalLess("a1", "a01"));
  EXPECT_FALSE(NaturalLess("x", "x"));
}

TEST(Render, MatchesTheGoldenFiles) {
  for (const std::string& name : kFixtures) {
    SCOPED_TRACE(name);
    const Verdict v = Load(name);
    ExpectGolden(name + ".txt", RenderText(v));
    ExpectGolden(name + ".summary.md", RenderMarkdown(v));
    ExpectGolden(name + ".comment.md",
                 RenderMarkdown(v, {.comment = true, .project = "perfwarden"}));
    ExpectGolden(name + ".junit.xml", RenderJUnit(v));
    ExpectGolden(name + ".metrics.txt", RenderGitLabMetrics(v));
  }
}

// The renderings depend on the results, not on the order the server sent them in.
TEST(Render, IsDeterministicWhateverTheServersOrder) {
  for (const std::string& name : kFixtures) {
    SCOPED_TRACE(name);
    const Verdict v = Load(name);
    Verdict reversed = v;
    std::reverse(reversed.results.begin(), reversed.results.end());
    EXPECT_EQ(RenderText(v), RenderText(reversed));
    EXPECT_EQ(RenderMarkdown(v, {.comment = true}), RenderMarkdown(reversed, {.comment = true}));
    EXPECT_EQ(RenderJUnit(v), RenderJUnit(reversed));
    EXPECT_EQ(RenderGitLabMetrics(v), RenderGitLabMetrics(reversed));
  }
}

}  // namespace
}  // namespace perfwarden::report
