// SPDX-License-Identifier: Apache-2.0
// judge/run_verdict.h: a run judged against its baseline as the typed verdict — the outcome
// (no_baseline, pass, regression, noisy_environment), the counts by kind, the rows' sides and
// NEW/IGNORED rows, the warning about the baseline's series the run lacks, and the environment
// shift with its warning.
#include "judge/run_verdict.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace perfwarden::judge {
namespace {

using wire::Outcome;
using wire::ResultKind;

std::vector<double> Around(double center, int n, int salt) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(center * (1 + 0.002 * ((i * 7 + salt) % 5 - 2)));
  return out;
}

// Series over values the fixture keeps alive.
class Sides {
 public:
  Sides& Add(bool base, const std::string& benchmark, std::vector<double> values,
             const std::string& metric = "real_time", const std::string& suite = "core") {
    values_.push_back(std::move(values));
    Series s;
    s.key = {suite, benchmark, metric};
    s.unit = "ns";
    (base ? base_ : contender_).push_back(std::move(s));
    (base ? base_values_ : contender_values_).push_back(values_.size() - 1);
    return *this;
  }
  Result<wire::Verdict> Judge(bool with_base = true, std::span<const ThresholdRule> rules = {}) {
    for (size_t i = 0; i < base_.size(); ++i) base_[i].values = values_[base_values_[i]];
    for (size_t i = 0; i < contender_.size(); ++i) {
      contender_[i].values = values_[contender_values_[i]];
    }
    std::optional<std::span<const Series>> base;
    if (with_base) base = base_;
    return JudgeRun(base, contender_, stats::VerdictPolicy{}, rules);
  }

 private:
  std::vector<std::vector<double>> values_;
  std::vector<Series> base_, contender_;
  std::vector<size_t> base_values_, contender_values_;
};

TEST(JudgeRun, WithoutABaselineEveryRowIsNewAndTheOutcomeIsNoBaseline) {
  Sides sides;
  sides.Add(false, "BM_A", Around(100, 10, 1)).Add(false, "BM_B", Around(200, 10, 2));
  auto verdict = sides.Judge(/*with_base=*/false);
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  EXPECT_EQ(verdict->outcome, Outcome::kNoBaseline);
  ASSERT_EQ(verdict->results.size(), 2u);
  for (const wire::MetricResult& r : verdict->results) {
    EXPECT_EQ(r.kind, ResultKind::kNew);
    EXPECT_EQ(r.reason, kNoBaseReason);
    EXPECT_FALSE(r.base.has_value());
    EXPECT_FALSE(r.change.has_value());
    ASSERT_TRUE(r.current.has_value());
    EXPECT_EQ(r.current->n, 10);
  }
  EXPECT_EQ(verdict->counts.new_metrics, 2);
  EXPECT_EQ(verdict->counts.Compared(), 0);
  EXPECT_TRUE(verdict->warnings.empty());
  EXPECT_FALSE(verdict->environment_shift.has_value());
}

TEST(JudgeRun, UnchangedIsAPassAndOneSlowerSeriesARegression) {
  Sides same;
  same.Add(true, "BM_A", Around(100, 10, 1)).Add(false, "BM_A", Around(100, 10, 2));
  same.Add(true, "BM_B", Around(200, 10, 3)).Add(false, "BM_B", Around(200, 10, 4));
  auto pass = same.Judge();
  ASSERT_TRUE(pass.has_value()) << pass.error().ToString();
  EXPECT_EQ(pass->outcome, Outcome::kPass);
  EXPECT_EQ(pass->counts.equivalent, 2);
  EXPECT_EQ(pass->counts.regression, 0);

  Sides slower;
  slower.Add(true, "BM_A", Around(100, 10, 1)).Add(false, "BM_A", Around(120, 10, 2));
  slower.Add(true, "BM_B", Around(200, 10, 3)).Add(false, "BM_B", Around(200, 10, 4));
  slower.Add(true, "BM_C", Around(300, 10, 5)).Add(false, "BM_C", Around(300, 10, 6));
  slower.Add(true, "BM_D", Around(400, 10, 7)).Add(false, "BM_D", Around(400, 10, 8));
  slower.Add(true, "BM_Gone", Around(50, 10, 9));
  slower.Add(false, "BM_Added", Around(50, 10, 9));
  auto regression = slower.Judge();
  ASSERT_TRUE(regression.has_value()) << regression.error().ToString();
  EXPECT_EQ(regression->outcome, Outcome::kRegression);
  wire::Counts counts;
  counts.regression = 1;
  counts.equivalent = 3;
  counts.new_metrics = 1;
  EXPECT_EQ(regression->counts, counts);
  const wire::MetricResult& a = regression->results[0];
  EXPECT_EQ(a.kind, ResultKind::kRegression);
  ASSERT_TRUE(a.change && a.change_ci && a.p_value && a.p_adjusted && a.base && a.current);
  EXPECT_NEAR(*a.change, 0.2, 0.01);
  EXPECT_EQ(a.threshold, 0.05);
  EXPECT_EQ(regression->results.back().kind, ResultKind::kNew);
  EXPECT_EQ(regression->results.back().reason, kNotInBaseReason);
  ASSERT_EQ(regression->warnings.size(), 1u);
  EXPECT_EQ(regression->warnings[0],
            "1 benchmark metric(s) of the baseline are not in this run: BM_Gone real_time");
  EXPECT_FALSE(regression->environment_shift.has_value());
}

TEST(JudgeRun, ARuleIgnoresASeriesWhichNeitherCountsNorGates) {
  Sides sides;
  sides.Add(true, "BM_A", Around(100, 10, 1)).Add(false, "BM_A", Around(150, 10, 2));
  sides.Add(true, "BM_B", Around(200, 10, 3)).Add(false, "BM_B", Around(200, 10, 4));
  const std::vector<ThresholdRule> rules = {{.benchmark = "BM_A", .ignore = true}};
  auto verdict = sides.Judge(true, rules);
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  EXPECT_EQ(verdict->outcome, Outcome::kPass);
  EXPECT_EQ(verdict->results[0].kind, ResultKind::kIgnored);
  EXPECT_EQ(verdict->results[0].reason, kIgnoredReason);
  EXPECT_EQ(verdict->counts.ignored, 1);
  EXPECT_EQ(verdict->counts.equivalent, 1);
}

TEST(JudgeRun, EveryRegressionOnAThrottledHostIsANoisyEnvironment) {
  Sides sides;
  sides.Add(true, "train", Around(0.1, 30, 1), "step_time", "train")
      .Add(false, "train", Around(0.11, 30, 2), "step_time", "train");
  sides.Add(true, "train", {0, 0, 0}, "gpu_throttled_fraction", "train")
      .Add(false, "train", {0.2}, "gpu_throttled_fraction", "train");
  auto verdict = sides.Judge();
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  EXPECT_EQ(verdict->outcome, Outcome::kNoisyEnvironment);
  EXPECT_EQ(verdict->counts.regression, 1);  // the counts are unchanged
  EXPECT_EQ(verdict->results[0].kind, ResultKind::kRegression);
  EXPECT_NE(verdict->results[0].environment.find("throttled in 20%"), std::string::npos)
      << verdict->results[0].environment;
  ASSERT_TRUE(verdict->results[0].attribution.has_value());
  EXPECT_EQ(verdict->results[0].attribution->hint, kHintClock);
}

TEST(JudgeRun, MetricsMovingTogetherAreAnEnvironmentShiftWithItsWarning) {
  Sides sides;
  for (int i = 0; i < 6; ++i) {
    const double level = 100.0 * (i + 1);
    sides.Add(true, "BM_" + std::to_string(i), Around(level, 10, i))
        .Add(false, "BM_" + std::to_string(i), Around(level * 1.2, 10, i));
  }
  auto verdict = sides.Judge();
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  ASSERT_TRUE(verdict->environment_shift.has_value());
  EXPECT_EQ(verdict->environment_shift->metrics, 6);
  EXPECT_EQ(verdict->outcome, Outcome::kRegression);  // decided as without it
  ASSERT_FALSE(verdict->warnings.empty());
  EXPECT_EQ(verdict->warnings.back(), "environment shift: " + verdict->environment_shift->reason);
}

// A slower cpu_time of a benchmark whose real_time held: REPORTED (with its change and what it
// shows), counted apart, and the run passes; a rule's gate: true makes the same data fail.
TEST(JudgeRun, ANonPrimaryMetricIsReportedAndDoesNotFailTheRun) {
  Sides sides;
  sides.Add(true, "BM_A", Around(100, 10, 1)).Add(false, "BM_A", Around(100, 10, 2));
  sides.Add(true, "BM_A", Around(100, 10, 3), "cpu_time");
  sides.Add(false, "BM_A", Around(130, 10, 4), "cpu_time");
  auto verdict = sides.Judge();
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  EXPECT_EQ(verdict->outcome, Outcome::kPass);
  ASSERT_EQ(verdict->results.size(), 2u);
  const wire::MetricResult& cpu = verdict->results[1];
  EXPECT_EQ(cpu.kind, ResultKind::kReported);
  ASSERT_TRUE(cpu.change.has_value());
  EXPECT_NEAR(*cpu.change, 0.30, 0.01);
  EXPECT_EQ(cpu.reason.rfind("not gated; shows REGRESSION: ", 0), 0u) << cpu.reason;
  EXPECT_FALSE(cpu.attribution.has_value());
  EXPECT_EQ(verdict->counts.reported, 1);
  EXPECT_EQ(verdict->counts.regression, 0);
  EXPECT_EQ(verdict->counts.Compared(), 1);

  const std::vector<ThresholdRule> rules = {{.metric = "cpu_time", .gate = true}};
  verdict = sides.Judge(true, rules);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->outcome, Outcome::kRegression);
  EXPECT_EQ(verdict->results[1].kind, ResultKind::kRegression);
  EXPECT_EQ(verdict->counts.reported, 0);
}

TEST(CountResults, CountsEveryKind) {
  std::vector<wire::MetricResult> rows(9);
  const ResultKind kinds[] = {
      ResultKind::kRegression,  ResultKind::kInconclusive, ResultKind::kUnstable,
      ResultKind::kImprovement, ResultKind::kNew,          ResultKind::kEquivalent,
      ResultKind::kPass,        ResultKind::kReported,     ResultKind::kRegression};
  for (size_t i = 0; i < rows.size(); ++i) rows[i].kind = kinds[i];
  const wire::Counts c = wire::CountResults(rows);
  EXPECT_EQ(c.regression, 2);
  EXPECT_EQ(c.inconclusive, 1);
  EXPECT_EQ(c.unstable, 1);
  EXPECT_EQ(c.improvement, 1);
  EXPECT_EQ(c.new_metrics, 1);
  EXPECT_EQ(c.equivalent, 1);
  EXPECT_EQ(c.pass, 1);
  EXPECT_EQ(c.reported, 1);
  EXPECT_EQ(c.ignored, 0);
}

}  // namespace
}  // namespace perfwarden::judge
