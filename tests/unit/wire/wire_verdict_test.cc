// SPDX-License-Identifier: Apache-2.0
// Tests of the verdict message: every fixture the server wrote decodes, and survives
// Decode(Encode(x)) == x; so do verdicts built here with every optional part present or absent.
#include <gtest/gtest.h>

#include <string>

#include "tests/testing/oracle_csv.h"
#include "wire/verdict.h"

namespace perfwarden::wire {
namespace {

using perfwarden::testing::FixturePath;
using perfwarden::testing::ReadFile;

void ExpectRoundTrip(const Verdict& verdict, const std::string& what) {
  const std::string text = EncodeVerdict(verdict).dump();
  auto decoded = DecodeVerdict(text);
  ASSERT_TRUE(decoded.has_value()) << what << ": " << decoded.error().ToString();
  EXPECT_EQ(*decoded, verdict) << what << ": " << text;
  // The wrapped form the server answers with decodes the same.
  auto wrapped = DecodeVerdict(nlohmann::json{{"verdict", EncodeVerdict(verdict)}}.dump());
  ASSERT_TRUE(wrapped.has_value()) << what;
  EXPECT_EQ(*wrapped, verdict) << what;
}

TEST(WireVerdict, EveryFixtureDecodesAndRoundTrips) {
  for (const char* name : {"gpu_attribution", "no_baseline", "noisy_environment", "pass",
                           "regression", "special_names"}) {
    auto verdict = DecodeVerdict(ReadFile(FixturePath(std::string("verdicts/") + name + ".json")));
    ASSERT_TRUE(verdict.has_value()) << name << ": " << verdict.error().ToString();
    EXPECT_FALSE(verdict->results.empty() && verdict->outcome != Outcome::kNoBaseline) << name;
    ExpectRoundTrip(*verdict, name);
  }
}

TEST(WireVerdict, EveryOptionalPartRoundTrips) {
  Verdict v;
  v.id = 7;
  v.run_id = "run-1";
  v.created_at = "2026-01-02T03:04:05Z";
  v.project = "proj";
  v.outcome = Outcome::kNoisyEnvironment;
  v.algorithm_version = "verdict-v3";
  v.parameters.test = "utest";
  v.parameters.correction = "holm";
  v.parameters.bootstrap_resamples = 2000;
  v.parameters.seed = 24301;
  v.parameters.rules = {{.benchmark = "BM_Copy/*", .percent = 3, .alpha = 0.01},
                        {.suite = "startup", .ignore = true}};
  v.baseline = Baseline{.commit = std::string(40, 'a'),
                        .branch = "main",
                        .testbed = "ci",
                        .run_ids = {"run-0"},
                        .selection = "merge_base",
                        .distance = 2};
  v.contender_run_ids = {"run-1", "run-2"};
  v.commit = std::string(40, 'b');
  v.branch = "feature";
  v.testbed = "ci";
  v.pr = 42;
  v.counts = {.regression = 1, .new_metrics = 1};
  v.warnings = {"a warning"};
  v.report_url = "https://example.test/r";
  v.runner_version = "v1.2.0-3-g1a2b3c4-dirty";
  MetricResult regression{
      .key = {"train", "BM_Step", "real_time"},
      .unit = "ms",
      .direction = Direction::kLowerIsBetter,
      .threshold = 0.1,
      .kind = ResultKind::kRegression,
      .base = Summary{.n = 10, .median = 1.5, .cv = 0.01},
      .current = Summary{.n = 12, .median = 1.8, .cv = std::nullopt},
      .change = 0.2,
      .change_ci = Interval{.lower = 0.15, .upper = 0.25},
      .p_value = 1e-4,
      .p_adjusted = 2e-4,
      .repetitions_needed = 0,
      .reason = "slower",
      .attribution =
          Attribution{
              .moved = {{.metric = "gpu_power", .verdict = "REGRESSION", .change = -0.3}},
              .roofline =
                  Roofline{.bound = "memory-bound", .intensity = 2.5, .ridge = std::nullopt},
              .hint = "power capped"},
      .environment = "throttled",
      .paired = std::nullopt};
  MetricResult added;
  added.key = {"train", "BM_New", "items_per_second"};
  added.direction = Direction::kHigherIsBetter;
  added.kind = ResultKind::kNew;
  added.current = Summary{.n = 3, .median = std::nullopt, .cv = std::nullopt};
  added.repetitions_needed = -1;
  v.results = {regression, added};
  ExpectRoundTrip(v, "built");
  ExpectRoundTrip(Verdict{}, "empty");

  // A paired verdict: the verdict's "paired" object, a row's "paired" detail, UNSTABLE.
  MetricResult unstable = regression;
  unstable.kind = ResultKind::kUnstable;
  unstable.attribution.reset();
  unstable.paired = PairedDetail{.blocks = 30,
                                 .noise = 0.08,
                                 .drift = 0.2,
                                 .t_ci = Interval{-0.02, 0.07},
                                 .bootstrap_ci = std::nullopt,
                                 .median_change = 0.01,
                                 .hodges_lehmann = 0.02,
                                 .p_t = 0.3,
                                 .p_wilcoxon = 0.25,
                                 .p_sign = 0.5,
                                 .blocks_needed = 92,
                                 .decided_at_look = -1};
  v.results.push_back(unstable);
  v.counts.unstable = 1;
  PairedSummary paired;
  paired.baseline_commit = std::string(40, 'a');
  paired.design.stopped = "max_blocks";
  paired.design.seed = 7;
  paired.amends = 12;
  paired.measured = 3;
  paired.look = 4;
  paired.looks = 5;
  paired.blocks = 30;
  paired.geomean_change = 0.01;
  paired.geomean_ci = Interval{-0.01, 0.03};
  v.paired = paired;
  ExpectRoundTrip(v, "paired");
  const auto decoded = DecodeVerdict(EncodeVerdict(v).dump());
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->results.back().kind, ResultKind::kUnstable);
  EXPECT_EQ(decoded->results.back().paired->blocks_needed, 92);
  EXPECT_EQ(decoded->paired->amends, 12);
}

}  // namespace
}  // namespace perfwarden::wire
