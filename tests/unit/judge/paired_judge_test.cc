// SPDX-License-Identifier: Apache-2.0
// judge/paired.h: a paired measurement judged as the gate and the server judge it — threshold
// rules, series measured on one side only, the look the blocks reach — on blocks whose machine
// drift (a 40% slow start, then ±10% from block to block) hits both sides of a block alike.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "judge/paired.h"
#include "stats/environment_shift.h"

namespace perfwarden::judge {
namespace {

// `blocks` blocks of 3 repetitions a side around `level` (head: level * head_factor), each block
// `drift` times slower for both sides (the first three 1.4x: the machine right after a build),
// with 1% noise per repetition.
wire::PairedSeries MakeSeries(const std::string& benchmark, double level, double head_factor,
                              int blocks, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, 0.01);
  std::normal_distribution<double> wander(0, 0.10);
  wire::PairedSeries s;
  s.key = {"core", benchmark, "real_time"};
  s.unit = "ns";
  for (int b = 0; b < blocks; ++b) {
    const double drift = (b < 3 ? 1.4 : 1.0) * std::exp(wander(rng));
    wire::PairedBlock block;
    block.base_first = (b % 2) == 0;
    for (int r = 0; r < 3; ++r) {
      block.base.push_back(level * drift * (1 + noise(rng)));
      block.head.push_back(level * head_factor * drift * (1 + noise(rng)));
    }
    s.blocks.push_back(std::move(block));
  }
  return s;
}

wire::PairedMeasurement Measurement(int blocks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  wire::PairedMeasurement m;
  m.baseline_commit = std::string(40, 'b');
  m.testbed.name = "ci";
  m.design.min_blocks = 6;
  m.design.max_blocks = 30;
  m.series = {MakeSeries("BM_Sort/16384", 1000, 1.10, blocks, rng),
              MakeSeries("BM_Hash", 200, 1.0, blocks, rng),
              MakeSeries("BM_Copy", 50, 1.0, blocks, rng),
              MakeSeries("BM_Parse", 7000, 0.99, blocks, rng)};
  return m;
}

TEST(PairedJudge, APlantedTenPercentIsTheOnlyRegressionWhateverTheDrift) {
  const wire::PairedMeasurement m = Measurement(9, 20261126);
  auto policy = PairedPolicyOf(m);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  auto judged = JudgePaired(m, *policy, /*budget_exhausted=*/false);
  ASSERT_TRUE(judged.has_value()) << judged.error().ToString();
  // Every series is decided at the first look (6 blocks of 6, 9, 13, 20, 30): the three blocks
  // after it are not needed, and the look is the first.
  EXPECT_EQ(judged->verdicts.look, 0);
  EXPECT_EQ(judged->verdicts.blocks, 6);
  ASSERT_EQ(judged->rows.size(), 4u);
  const stats::PairedMetricVerdict* slow = judged->VerdictOf(judged->rows[0]);
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->verdict, stats::Verdict::kRegression) << slow->reason;
  EXPECT_NEAR(slow->change, 0.10, 0.02);
  EXPECT_EQ(slow->name, "core/BM_Sort/16384 real_time");
  for (size_t i = 1; i < judged->rows.size(); ++i) {
    const stats::PairedMetricVerdict* v = judged->VerdictOf(judged->rows[i]);
    ASSERT_NE(v, nullptr);
    EXPECT_NE(v->verdict, stats::Verdict::kRegression) << v->name << ": " << v->reason;
    EXPECT_NE(v->verdict, stats::Verdict::kImprovement) << v->name << ": " << v->reason;
  }
  EXPECT_EQ(judged->verdicts.regressions, 1);
}

// The main job's first-run failure, replayed on the same numbers: measured unpaired (the
// baseline in the first three blocks, while the machine ran 40% slow; the pull request later),
// the planted +10% is no regression and every benchmark looks faster — which the environment
// shift rule flags — while the paired judgement above finds it.
TEST(PairedJudge, UnpairedTheSlowBaselineMasksThePlantedRegressionAndIsFlaggedAsAShift) {
  const wire::PairedMeasurement m = Measurement(9, 20261126);
  std::vector<std::vector<double>> base_values, head_values;
  for (const wire::PairedSeries& s : m.series) {
    std::vector<double>& base = base_values.emplace_back();
    std::vector<double>& head = head_values.emplace_back();
    for (size_t b = 0; b < s.blocks.size(); ++b) {
      const std::vector<double>& from = b < 3 ? s.blocks[b].base : s.blocks[b].head;
      (b < 3 ? base : head).insert((b < 3 ? base : head).end(), from.begin(), from.end());
    }
  }
  std::vector<Series> base_side, head_side;
  for (size_t i = 0; i < m.series.size(); ++i) {
    base_side.push_back({.key = m.series[i].key, .unit = "ns", .values = base_values[i]});
    head_side.push_back({.key = m.series[i].key, .unit = "ns", .values = head_values[i]});
  }
  JudgeOptions options;
  auto unpaired = JudgeSeries(std::span<const Series>(base_side), head_side, options);
  ASSERT_TRUE(unpaired.has_value()) << unpaired.error().ToString();
  const stats::MetricVerdict* planted = unpaired->VerdictOf(unpaired->rows[0]);
  ASSERT_NE(planted, nullptr);
  EXPECT_NE(planted->verdict, stats::Verdict::kRegression) << planted->reason;
  EXPECT_LT(planted->change, 0.0);  // the +10% looks faster
  std::vector<double> logs;
  for (const stats::MetricVerdict& v : unpaired->verdicts.metrics) {
    logs.push_back(std::log1p(v.change));
  }
  const stats::ShiftEvidence shift = stats::DetectEnvironmentShift(logs);
  EXPECT_TRUE(shift.shifted) << shift.reason;
}

TEST(PairedJudge, RulesIgnoreOrLoosenASeriesAndOneSidedSeriesAreLeftOut) {
  wire::PairedMeasurement m = Measurement(6, 7);
  ThresholdRule loose;
  loose.benchmark = "BM_Sort/*";
  loose.percent = 20;
  ThresholdRule ignore;
  ignore.benchmark = "BM_Copy";
  ignore.ignore = true;
  m.parameters.rules = {loose, ignore};
  for (wire::PairedBlock& b : m.series[3].blocks) b.base.clear();  // only measured on the head
  auto policy = PairedPolicyOf(m);
  ASSERT_TRUE(policy.has_value());
  auto judged = JudgePaired(m, *policy, false);
  ASSERT_TRUE(judged.has_value()) << judged.error().ToString();
  EXPECT_EQ(judged->verdicts.look, 0);
  EXPECT_EQ(judged->rows[0].kind, RowKind::kJudged);
  EXPECT_DOUBLE_EQ(judged->rows[0].threshold, 0.20);
  EXPECT_NE(judged->VerdictOf(judged->rows[0])->verdict, stats::Verdict::kRegression);
  EXPECT_EQ(judged->rows[2].kind, RowKind::kIgnored);
  EXPECT_EQ(judged->rows[3].kind, RowKind::kNew);
  EXPECT_EQ(judged->rows[3].reason, "measured on both sides in 0 block(s); the first look needs 6");
  EXPECT_EQ(judged->ignored, 1);
  EXPECT_EQ(judged->added, 1);
  EXPECT_EQ(judged->verdicts.metrics.size(), 2u);
}

TEST(PairedJudge, TheLookFollowsTheBlocksAndTheBudget) {
  stats::PairedPolicy policy;  // looks at 6, 9, 13, 20, 30
  policy.min_blocks = 6;
  policy.max_blocks = 30;
  EXPECT_EQ(LookReached(policy, 5), -1);
  EXPECT_EQ(LookReached(policy, 6), 0);
  EXPECT_EQ(LookReached(policy, 12), 1);
  EXPECT_EQ(LookReached(policy, 30), 4);
  EXPECT_EQ(LookReached(policy, 31), 4);

  const wire::PairedMeasurement few = Measurement(5, 3);
  auto none = JudgePaired(few, policy, false);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().field, "series");

  const wire::PairedMeasurement m = Measurement(6, 3);
  auto stopped = JudgePaired(m, policy, /*budget_exhausted=*/true);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_TRUE(stopped->verdicts.final);
  EXPECT_FALSE(stopped->verdicts.more_blocks_needed);
}

TEST(PairedJudge, ThePolicyComesFromTheParametersAndTheDesign) {
  wire::PairedMeasurement m = Measurement(6, 1);
  m.parameters.threshold = 0.03;
  m.parameters.alpha = 0.01;
  m.design.test = "wilcoxon";
  m.design.min_blocks = 8;
  m.design.max_blocks = 40;
  m.design.growth = 2;
  auto policy = PairedPolicyOf(m);
  ASSERT_TRUE(policy.has_value());
  EXPECT_DOUBLE_EQ(policy->threshold, 0.03);
  EXPECT_DOUBLE_EQ(policy->alpha, 0.01);
  EXPECT_EQ(policy->test, stats::PairedTest::kWilcoxon);
  EXPECT_EQ(policy->min_blocks, 8);
  EXPECT_EQ(policy->max_blocks, 40);
  EXPECT_EQ(policy->spending, stats::Spending::kPocock);
  m.design.spending = "obf";
  EXPECT_EQ(PairedPolicyOf(m)->spending, stats::Spending::kOBrienFleming);
  m.design.spending = "linear";
  auto bad_spending = PairedPolicyOf(m);
  ASSERT_FALSE(bad_spending.has_value());
  EXPECT_EQ(bad_spending.error().field, "design.spending");
  m.design.spending = "pocock";
  m.design.test = "welch";
  auto bad = PairedPolicyOf(m);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "design.test");
}

}  // namespace
}  // namespace perfwarden::judge
