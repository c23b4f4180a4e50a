// SPDX-License-Identifier: Apache-2.0
// The paired verdict on constructed blocks: drift between blocks cancels, the gate's one-sided
// rules (REGRESSION established, PASS when the bound rules a slowdown out, IMPROVEMENT and
// EQUIVALENT as labels of a PASS) with per-metric threshold and alpha, decisions that stick
// across looks and need no further blocks, the look the blocks reach, UNSTABLE at the last look
// or when the budget ends, the signed-rank test's floor at few blocks, Holm across metrics, the
// suite summary, and input validation.
#include "stats/paired_verdict.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "stats/multiple_testing.h"
#include "stats/trimmed.h"

namespace perfwarden::stats {
namespace {

// Blocks whose base level drifts by up to +/-30% from block to block (the machine) and whose
// head/base ratio in block b is ratios[b].
std::vector<PairedBlock> Blocks(const std::vector<double>& ratios, double level = 100) {
  std::vector<PairedBlock> blocks;
  for (size_t b = 0; b < ratios.size(); ++b) {
    const double machine = level * (1 + 0.3 * std::sin(static_cast<double>(b) * 1.7));
    blocks.push_back({{machine}, {machine * ratios[b]}});
  }
  return blocks;
}

// `n` ratios around `centre` with a deterministic spread of +/-`spread` (mean exactly centre on
// the log scale for even n).
std::vector<double> Ratios(int n, double centre, double spread) {
  std::vector<double> r;
  for (int i = 0; i < n; ++i) {
    const double wiggle = spread * ((i % 2 == 0 ? 1 : -1) * (1 + (i / 2) % 3) / 2.0);
    r.push_back(centre * std::exp(wiggle));
  }
  return r;
}

// The rules below are shown with the t-test on blocks of the looks at 6, 9, 13, 20, 30 (the
// design before the trimmed test became the default); the trimmed test's own cases follow them.
PairedPolicy TPolicy() {
  PairedPolicy policy;
  policy.test = PairedTest::kT;
  policy.min_blocks = 6;
  policy.max_blocks = 30;
  return policy;
}

PairedMetricInput Input(std::string name, const std::vector<PairedBlock>& blocks,
                        Direction direction = Direction::kLowerIsBetter) {
  return {std::move(name), direction, blocks};
}

TEST(PairedVerdictRules, ClearRegressionAtTheFirstLook) {
  const auto blocks = Blocks(Ratios(6, 1.10, 0.01));
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", blocks)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r) << r.error().ToString();
  const PairedMetricVerdict& v = r->metrics[0];
  EXPECT_EQ(v.verdict, Verdict::kRegression) << v.reason;
  EXPECT_EQ(v.decided_at_look, 0);
  EXPECT_EQ(v.blocks, 6);
  EXPECT_NEAR(v.change, 0.10, 1e-9);
  EXPECT_NEAR(v.ratio, 1.10, 1e-9);
  EXPECT_LT(v.decision_ci.lower, v.change);
  EXPECT_GT(v.decision_ci.upper, v.change);
  EXPECT_LE(v.decision_ci.lower, std::min(v.t_ci.lower, v.bootstrap_ci.lower));
  EXPECT_GE(v.decision_ci.upper, std::max(v.t_ci.upper, v.bootstrap_ci.upper));
  EXPECT_LT(v.p_t, 1e-5);
  EXPECT_DOUBLE_EQ(v.p_test, v.p_t / 2);     // one-sided: worse
  EXPECT_DOUBLE_EQ(v.p_wilcoxon, 2.0 / 64);  // every ratio above 1: the exact floor at n = 6
  EXPECT_DOUBLE_EQ(v.p_sign, 2.0 / 64);
  EXPECT_GT(v.drift, 0.1);   // the machine moved by ~20% between blocks ...
  EXPECT_LT(v.noise, 0.02);  // ... and the ratios did not
  EXPECT_EQ(r->regressions, 1);
  EXPECT_FALSE(r->more_blocks_needed);
  EXPECT_EQ(r->looks, 5);
  EXPECT_DOUBLE_EQ(r->look_alpha, SpentAlpha(Spending::kPocock, 0.05, 6.0 / 30));
  EXPECT_DOUBLE_EQ(v.level, r->look_alpha);  // Holm's first step of one metric
  EXPECT_NE(v.reason.find("+10.0% is worse than the 5.0% threshold and established"),
            std::string::npos)
      << v.reason;
}

// 30% drift between blocks and 0.5% between the sides: paired, the change is known to within
// about a percent after 6 blocks; the same values pooled per side tell nothing.
TEST(PairedVerdictRules, DriftCancelsWithinBlocks) {
  const auto blocks = Blocks(Ratios(6, 1.0, 0.005));
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", blocks)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kEquivalent) << r->metrics[0].reason;
  EXPECT_NE(r->metrics[0].reason.find("97% CI"), std::string::npos) << r->metrics[0].reason;
  EXPECT_LT(r->metrics[0].decision_ci.upper - r->metrics[0].decision_ci.lower, 0.03);

  std::vector<double> base, head;
  for (const auto& b : blocks) {
    base.push_back(b.base[0]);
    head.push_back(b.head[0]);
  }
  std::vector<MetricInput> unpaired(1);
  unpaired[0].name = "BM_A";
  unpaired[0].base = base;
  unpaired[0].contender = head;
  auto pooled = JudgeMetrics(unpaired, VerdictPolicy{});
  ASSERT_TRUE(pooled);
  EXPECT_EQ(pooled->metrics[0].verdict, Verdict::kInconclusive);
}

TEST(PairedVerdictRules, DirectionDecidesWorseOrBetter) {
  const auto faster = Blocks(Ratios(6, 0.9, 0.01));
  const auto more = Blocks(Ratios(6, 1.1, 0.01));
  const std::vector<PairedMetricInput> inputs = {
      Input("time", faster), Input("throughput", more, Direction::kHigherIsBetter),
      Input("throughput_down", faster, Direction::kHigherIsBetter)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kImprovement);
  EXPECT_EQ(r->metrics[1].verdict, Verdict::kImprovement);
  EXPECT_EQ(r->metrics[2].verdict, Verdict::kRegression);
  EXPECT_EQ(r->improvements, 2);
  EXPECT_EQ(r->regressions, 1);
}

TEST(PairedVerdictRules, PerMetricThresholdAndAlpha) {
  const auto blocks = Blocks(Ratios(6, 1.03, 0.002));
  std::vector<PairedMetricInput> inputs = {Input("default", blocks), Input("strict", blocks),
                                           Input("tiny_alpha", blocks)};
  inputs[1].threshold = 0.02;
  inputs[2].threshold = 0.02;
  inputs[2].alpha = 1e-12;
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kEquivalent) << r->metrics[0].reason;
  EXPECT_EQ(r->metrics[1].verdict, Verdict::kRegression) << r->metrics[1].reason;
  EXPECT_EQ(r->metrics[1].threshold, 0.02);
  EXPECT_EQ(r->metrics[2].verdict, Verdict::kInconclusive) << r->metrics[2].reason;
  EXPECT_EQ(r->metrics[2].alpha, 1e-12);
  EXPECT_NE(r->metrics[2].reason.find("is not established"), std::string::npos);
}

// The gate's question: a change of -3% whose interval reaches below -5% is no slowdown beyond
// 5% (PASS) though neither equivalence nor an improvement is shown; the same blocks mirrored
// (+3%) cannot rule a slowdown out yet.
TEST(PairedVerdictRules, PassRulesOutASlowdownOnly) {
  const auto faster = Blocks(Ratios(6, 0.97, 0.02));
  const auto slower = Blocks(Ratios(6, 1.03, 0.02));
  const std::vector<PairedMetricInput> inputs = {Input("faster", faster), Input("slower", slower)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  const PairedMetricVerdict& pass = r->metrics[0];
  EXPECT_EQ(pass.verdict, Verdict::kPass) << pass.reason;
  EXPECT_LT(pass.decision_ci.lower, -0.05);
  EXPECT_LT(pass.decision_ci.upper, 0.05);
  EXPECT_EQ(pass.decided_at_look, 0);
  EXPECT_NE(pass.reason.find("a slowdown beyond 5.0% is ruled out"), std::string::npos)
      << pass.reason;
  EXPECT_EQ(r->passed, 1);
  EXPECT_EQ(r->metrics[1].verdict, Verdict::kInconclusive) << r->metrics[1].reason;
  EXPECT_GT(r->metrics[1].decision_ci.upper, 0.05);
  EXPECT_TRUE(r->more_blocks_needed);
  // Higher is better: the same ratios read the other way.
  const std::vector<PairedMetricInput> higher = {Input("fewer", faster, Direction::kHigherIsBetter),
                                                 Input("more", slower, Direction::kHigherIsBetter)};
  auto h = JudgePairedLook(higher, TPolicy(), 0);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->metrics[0].verdict, Verdict::kInconclusive) << h->metrics[0].reason;
  EXPECT_EQ(h->metrics[1].verdict, Verdict::kPass) << h->metrics[1].reason;
}

// A metric decided at a look needs no blocks after it (the runner stops measuring it): the look
// the blocks reach is the last one every still-open metric has the blocks of.
TEST(PairedVerdictRules, LookReachedByTheOpenMetrics) {
  const auto settled = Blocks(Ratios(6, 1.0, 0.005));  // EQUIVALENT at 6 blocks, then frozen
  const auto noisy = Blocks(Ratios(13, 1.0, 0.3));     // open to the end
  const std::vector<PairedMetricInput> inputs = {Input("settled", settled), Input("noisy", noisy)};
  auto reached = JudgePairedLook(inputs, TPolicy(), kLookReached);
  ASSERT_TRUE(reached) << reached.error().ToString();
  EXPECT_EQ(reached->look, 2);  // 6, 9, 13: the noisy metric has 13 blocks
  EXPECT_EQ(reached->blocks, 13);
  EXPECT_EQ(reached->metrics[0].verdict, Verdict::kEquivalent);
  EXPECT_EQ(reached->metrics[0].blocks, 6);
  EXPECT_EQ(reached->metrics[1].blocks, 13);
  EXPECT_TRUE(reached->more_blocks_needed);
  auto explicit_look = JudgePairedLook(inputs, TPolicy(), 2);
  ASSERT_TRUE(explicit_look) << explicit_look.error().ToString();
  EXPECT_EQ(explicit_look->metrics[1].reason, reached->metrics[1].reason);
  EXPECT_EQ(explicit_look->metrics[0].reason, reached->metrics[0].reason);
  // An open metric short of a look's blocks ends the reach there; the explicit look refuses.
  const auto short_noisy = Blocks(Ratios(11, 1.0, 0.3));
  const std::vector<PairedMetricInput> short_inputs = {Input("settled", settled),
                                                       Input("noisy", short_noisy)};
  auto shorter = JudgePairedLook(short_inputs, TPolicy(), kLookReached);
  ASSERT_TRUE(shorter);
  EXPECT_EQ(shorter->look, 1);
  EXPECT_EQ(shorter->metrics[1].blocks, 9);
  auto refused = JudgePairedLook(short_inputs, TPolicy(), 2);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().field, "noisy");
  // Every metric needs the first look's blocks.
  const auto five = Blocks(Ratios(5, 1.0, 0.005));
  const std::vector<PairedMetricInput> too_few = {Input("five", five)};
  EXPECT_FALSE(JudgePairedLook(too_few, TPolicy(), kLookReached));
}

// Holm's step-down uses each step's level of the spending function: a metric decided as a
// REGRESSION at an earlier look leaves the family (its share of alpha goes to the others), one
// that passed stays in it as never rejected.
TEST(PairedVerdictRules, HolmStepsUseTheSpendingLevels) {
  const auto a = Blocks(Ratios(6, 1.20, 0.01));
  const auto b = Blocks(Ratios(6, 1.08, 0.01));
  const auto c = Blocks(Ratios(6, 1.0, 0.004));
  const std::vector<PairedMetricInput> inputs = {Input("a", a), Input("b", b), Input("c", c)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  const double first =
      NominalLevels(Spending::kPocock, 0.05 / 3, std::vector<int>{6, 9, 13, 20, 30})[0];
  const double second =
      NominalLevels(Spending::kPocock, 0.05 / 2, std::vector<int>{6, 9, 13, 20, 30})[0];
  EXPECT_DOUBLE_EQ(r->metrics[0].level, first);
  EXPECT_DOUBLE_EQ(r->metrics[1].level, second);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kRegression);
  EXPECT_EQ(r->metrics[1].verdict, Verdict::kRegression);
}

// A metric EQUIVALENT at the first look stays so, with its first look's numbers, whatever later
// blocks say; the replay of look 1 from the blocks alone finds that.
TEST(PairedVerdictRules, DecisionsStickAcrossLooks) {
  std::vector<double> ratios = Ratios(6, 1.0, 0.005);
  for (int i = 0; i < 3; ++i) ratios.push_back(1.5);
  const auto settled = Blocks(ratios);
  const auto noisy = Blocks(Ratios(9, 1.0, 0.3));
  const std::vector<PairedMetricInput> inputs = {Input("settled", settled), Input("noisy", noisy)};
  auto first = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->metrics[0].verdict, Verdict::kEquivalent);
  EXPECT_EQ(first->metrics[1].verdict, Verdict::kInconclusive);
  EXPECT_TRUE(first->more_blocks_needed);
  EXPECT_EQ(first->next_blocks, 9);
  EXPECT_EQ(first->inconclusive, 1);
  auto second = JudgePairedLook(inputs, TPolicy(), 1);
  ASSERT_TRUE(second);
  const PairedMetricVerdict& v = second->metrics[0];
  EXPECT_EQ(v.verdict, Verdict::kEquivalent);
  EXPECT_EQ(v.decided_at_look, 0);
  EXPECT_EQ(v.blocks, 6);
  EXPECT_EQ(v.change, first->metrics[0].change);
  EXPECT_EQ(second->metrics[1].blocks, 9);
  EXPECT_EQ(second->blocks, 9);
}

TEST(PairedVerdictRules, InconclusiveThenUnstable) {
  const auto blocks = Blocks(Ratios(30, 1.0, 0.3));
  const std::vector<PairedMetricInput> inputs = {Input("BM_noisy", blocks)};
  auto early = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(early);
  const PairedMetricVerdict& e = early->metrics[0];
  EXPECT_EQ(e.verdict, Verdict::kInconclusive);
  EXPECT_FALSE(e.unstable);
  EXPECT_EQ(e.blocks_needed, 0);
  EXPECT_NE(e.reason.find("the next look has 9"), std::string::npos) << e.reason;

  auto last = JudgePairedLook(inputs, TPolicy(), 4);
  ASSERT_TRUE(last);
  const PairedMetricVerdict& v = last->metrics[0];
  EXPECT_EQ(v.verdict, Verdict::kInconclusive);
  EXPECT_TRUE(v.unstable);
  EXPECT_EQ(v.blocks, 30);
  EXPECT_GT(v.noise, 0.2);
  EXPECT_GT(v.blocks_needed, 30);
  EXPECT_TRUE(last->final);
  EXPECT_FALSE(last->more_blocks_needed);
  EXPECT_EQ(last->next_blocks, 0);
  EXPECT_EQ(last->unstable, 1);
  EXPECT_EQ(last->inconclusive, 0);
  EXPECT_NE(v.reason.find("UNSTABLE, not gating"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("the last look"), std::string::npos) << v.reason;

  auto ended = JudgePairedLook(inputs, TPolicy(), 1, /*budget_exhausted=*/true);
  ASSERT_TRUE(ended);
  EXPECT_TRUE(ended->metrics[0].unstable);
  EXPECT_EQ(ended->metrics[0].blocks, 9);
  EXPECT_FALSE(ended->more_blocks_needed);
  EXPECT_NE(ended->metrics[0].reason.find("time budget"), std::string::npos);
}

// Six blocks all slower by 10%: the t-test decides; the signed-rank test's one-sided p cannot
// get below 1 / 2^6 = 0.0156 > 0.0148 (the first look's Pocock level) and waits for the 9-block
// look (1 / 2^9 = 0.002).
TEST(PairedVerdictRules, SignedRankFloorAtFewBlocks) {
  const auto blocks = Blocks(Ratios(9, 1.10, 0.01));
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", blocks)};
  PairedPolicy policy = TPolicy();
  policy.test = PairedTest::kWilcoxon;
  auto first = JudgePairedLook(inputs, policy, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->metrics[0].verdict, Verdict::kInconclusive);
  EXPECT_DOUBLE_EQ(first->metrics[0].p_test, first->metrics[0].p_wilcoxon / 2);
  // Had the time budget ended there: its noise is tiny, what it needs is the floor at twice
  // the last look's one-sided level (0.045): 2 / 2^6 = 0.031.
  auto ended = JudgePairedLook(inputs, policy, 0, /*budget_exhausted=*/true);
  ASSERT_TRUE(ended);
  EXPECT_TRUE(ended->metrics[0].unstable);
  EXPECT_EQ(ended->metrics[0].blocks_needed, 6);
  auto second = JudgePairedLook(inputs, policy, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->metrics[0].verdict, Verdict::kRegression);
  EXPECT_EQ(second->metrics[0].decided_at_look, 1);
}

TEST(PairedVerdictRules, BlockMedianIgnoresAnOutlierRepetition) {
  std::vector<PairedBlock> blocks = Blocks(Ratios(6, 1.0, 0.004));
  for (auto& b : blocks) {
    b.base = {b.base[0], b.base[0] * 1.001, b.base[0] * 0.999};
    b.head = {b.head[0] * 3.0, b.head[0], b.head[0] * 1.0005};  // one preempted repetition
  }
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", blocks)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kEquivalent) << r->metrics[0].reason;
  EXPECT_LT(std::fabs(r->metrics[0].change), 0.002);
}

TEST(PairedVerdictRules, HolmAcrossEveryMetric) {
  const auto a = Blocks(Ratios(6, 1.08, 0.03));
  const auto b = Blocks(Ratios(6, 1.06, 0.03));
  const auto c = Blocks(Ratios(6, 1.0, 0.2));
  const std::vector<PairedMetricInput> inputs = {Input("a", a), Input("b", b), Input("c", c)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  const std::vector<double> raw = {r->metrics[0].p_test, r->metrics[1].p_test,
                                   r->metrics[2].p_test};
  const auto holm = AdjustPValues(raw, Correction::kHolm);
  for (size_t i = 0; i < raw.size(); ++i) {
    EXPECT_DOUBLE_EQ(r->metrics[i].p_adjusted, holm[i]) << i;
    EXPECT_NEAR(r->metrics[i].p_test,
                r->metrics[i].change > 0 ? r->metrics[i].p_t / 2 : 1 - r->metrics[i].p_t / 2, 1e-12)
        << i;
  }
}

TEST(PairedVerdictRules, ConstantRatiosDecideWithoutNoise) {
  const auto slower = Blocks(std::vector<double>(6, 1.2));
  const auto same = Blocks(std::vector<double>(6, 1.0));
  const std::vector<PairedMetricInput> inputs = {Input("slower", slower), Input("same", same)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kRegression) << r->metrics[0].reason;
  EXPECT_EQ(r->metrics[0].p_t, 0);
  EXPECT_EQ(r->metrics[1].verdict, Verdict::kEquivalent) << r->metrics[1].reason;
  EXPECT_TRUE(std::isnan(r->metrics[1].p_t));
  EXPECT_EQ(r->metrics[1].decision_ci.lower, 0);
  EXPECT_EQ(r->metrics[1].decision_ci.upper, 0);
}

TEST(PairedVerdictRules, SuiteGeometricMeanOverBlocks) {
  const auto slower = Blocks(std::vector<double>(6, 1.21));
  const auto same = Blocks(std::vector<double>(6, 1.0));
  const std::vector<PairedMetricInput> inputs = {Input("slower", slower), Input("same", same)};
  auto r = JudgePairedLook(inputs, TPolicy(), 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->suite.count, 2u);
  EXPECT_EQ(r->suite.blocks, 6);
  EXPECT_NEAR(r->suite.geomean_ratio, 1.1, 1e-12);
  EXPECT_NEAR(r->suite.ci.lower, 1.1, 1e-12);
  EXPECT_NEAR(r->suite.ci.upper, 1.1, 1e-12);
  const auto noisy = Blocks(Ratios(6, 1.0, 0.1));
  const std::vector<PairedMetricInput> wide = {Input("noisy", noisy)};
  auto w = JudgePairedLook(wide, TPolicy(), 0);
  ASSERT_TRUE(w);
  EXPECT_LT(w->suite.ci.lower, w->suite.geomean_ratio);
  EXPECT_GT(w->suite.ci.upper, w->suite.geomean_ratio);
  auto none = JudgePairedLook({}, TPolicy(), 0);
  ASSERT_TRUE(none);
  EXPECT_TRUE(std::isnan(none->suite.geomean_ratio));
  EXPECT_FALSE(none->more_blocks_needed);
}

TEST(PairedVerdictRules, ReplayableFromTheBlocks) {
  const auto a = Blocks(Ratios(9, 1.04, 0.05));
  const auto b = Blocks(Ratios(9, 0.97, 0.08));
  const std::vector<PairedMetricInput> inputs = {Input("a", a), Input("b", b)};
  auto one = JudgePairedLook(inputs, TPolicy(), 1);
  auto two = JudgePairedLook(inputs, TPolicy(), 1);
  ASSERT_TRUE(one && two);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(one->metrics[i].verdict, two->metrics[i].verdict);
    EXPECT_EQ(one->metrics[i].bootstrap_ci.lower, two->metrics[i].bootstrap_ci.lower);
    EXPECT_EQ(one->metrics[i].bootstrap_ci.upper, two->metrics[i].bootstrap_ci.upper);
    EXPECT_EQ(one->metrics[i].reason, two->metrics[i].reason);
  }
  EXPECT_EQ(kPairedAlgorithmVersion, "perfwarden-paired/3");
}

// Handing over the previous look's answer spares the replay and changes nothing.
TEST(PairedVerdictRules, PreviousLookGivesTheReplaysAnswer) {
  std::vector<double> settled_ratios = Ratios(6, 1.0, 0.005);
  for (int i = 0; i < 14; ++i) settled_ratios.push_back(1.3);
  const auto settled = Blocks(settled_ratios);
  const auto noisy = Blocks(Ratios(20, 1.02, 0.12));
  const auto slow = Blocks(Ratios(20, 1.09, 0.06));
  const std::vector<PairedMetricInput> inputs = {Input("settled", settled), Input("noisy", noisy),
                                                 Input("slow", slow)};
  const PairedPolicy policy = TPolicy();
  auto chained = JudgePairedLook(inputs, policy, 0);
  ASSERT_TRUE(chained);
  for (int look = 1; look <= 3; ++look) {
    auto next = JudgePairedLook(inputs, policy, look, false, &*chained);
    auto replayed = JudgePairedLook(inputs, policy, look);
    ASSERT_TRUE(next && replayed) << look;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const PairedMetricVerdict& a = next->metrics[i];
      const PairedMetricVerdict& b = replayed->metrics[i];
      EXPECT_EQ(a.verdict, b.verdict) << look << " " << a.name;
      EXPECT_EQ(a.decided_at_look, b.decided_at_look) << look << " " << a.name;
      EXPECT_EQ(a.blocks, b.blocks);
      EXPECT_EQ(a.change, b.change);
      EXPECT_EQ(a.p_adjusted, b.p_adjusted);
      EXPECT_EQ(a.bootstrap_ci.lower, b.bootstrap_ci.lower);
      EXPECT_EQ(a.bootstrap_ci.upper, b.bootstrap_ci.upper);
      EXPECT_EQ(a.reason, b.reason);
    }
    EXPECT_EQ(next->more_blocks_needed, replayed->more_blocks_needed);
    chained = std::move(next);
  }
  EXPECT_EQ(chained->metrics[0].decided_at_look, 0);
  EXPECT_EQ(chained->metrics[2].verdict, Verdict::kRegression);

  // Not the previous look's answer: refused.
  auto first = JudgePairedLook(inputs, policy, 0);
  ASSERT_TRUE(first);
  auto wrong_look = JudgePairedLook(inputs, policy, 2, false, &*first);
  ASSERT_FALSE(wrong_look);
  EXPECT_EQ(wrong_look.error().field, "previous");
  const std::vector<PairedMetricInput> others = {Input("other", settled), Input("noisy", noisy),
                                                 Input("slow", slow)};
  auto wrong_metrics = JudgePairedLook(others, policy, 1, false, &*first);
  ASSERT_FALSE(wrong_metrics);
  EXPECT_EQ(wrong_metrics.error().field, "previous");
}

TEST(PairedVerdictRules, RejectsBadInput) {
  const auto six = Blocks(Ratios(6, 1.0, 0.01));
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", six)};
  auto error_of = [](std::span<const PairedMetricInput> in, const PairedPolicy& p, int look) {
    auto r = JudgePairedLook(in, p, look);
    EXPECT_FALSE(r);
    return r ? Error{} : r.error();
  };
  // Too few blocks for a look at which the metric is still open.
  const auto noisy = Blocks(Ratios(6, 1.0, 0.3));
  const std::vector<PairedMetricInput> noisy_inputs = {Input("BM_A", noisy)};
  Error e = error_of(noisy_inputs, TPolicy(), 1);
  EXPECT_EQ(e.field, "BM_A");
  EXPECT_NE(e.message.find("has 6 blocks; look 2 needs 9"), std::string::npos) << e.message;
  EXPECT_EQ(error_of(inputs, TPolicy(), 5).field, "look");
  EXPECT_EQ(error_of(inputs, TPolicy(), -2).field, "look");
  PairedPolicy bad = TPolicy();
  bad.alpha = 0;
  EXPECT_EQ(error_of(inputs, bad, 0).field, "alpha");

  auto empty_side = six;
  empty_side[2].head.clear();
  const std::vector<PairedMetricInput> empty_inputs = {Input("BM_A", empty_side)};
  e = error_of(empty_inputs, TPolicy(), 0);
  EXPECT_NE(e.message.find("block 2: a side has no repetition"), std::string::npos);
  auto negative = six;
  negative[4].base[0] = -1;
  const std::vector<PairedMetricInput> negative_inputs = {Input("BM_A", negative)};
  e = error_of(negative_inputs, TPolicy(), 0);
  EXPECT_NE(e.message.find("block 4: a repetition is not a positive finite number"),
            std::string::npos);
  auto infinite = six;
  infinite[0].head[0] = INFINITY;
  const std::vector<PairedMetricInput> infinite_inputs = {Input("BM_A", infinite)};
  error_of(infinite_inputs, TPolicy(), 0);

  std::vector<PairedMetricInput> overrides = {Input("BM_A", six)};
  overrides[0].threshold = -0.1;
  EXPECT_EQ(error_of(overrides, TPolicy(), 0).field, "BM_A");
  overrides[0].threshold = 0;
  overrides[0].alpha = 1.5;
  EXPECT_EQ(error_of(overrides, TPolicy(), 0).field, "BM_A");
}

// The default test: the 20%-trimmed mean of the block log ratios. Ten blocks of a 1% slowdown
// with two blocks torn apart by a switch of the machine's speed (x1.7 and /1.7): the t-test's
// interval takes them in full and cannot rule a 5% slowdown out; the trimmed test cuts them and
// PASSes at the first look, its estimate and interval those of stats/trimmed.h.
TEST(PairedTrimmedTest, TornBlocksAreCutNotAveraged) {
  std::vector<double> ratios = Ratios(10, 1.01, 0.01);
  ratios[3] = 1.7;
  ratios[7] = 1 / 1.7;
  const auto blocks = Blocks(ratios);
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", blocks)};
  const PairedPolicy trimmed;  // the defaults: trimmed, looks at 10, 15, 22, 33, 50
  ASSERT_EQ(trimmed.test, PairedTest::kTrimmed);
  auto r = JudgePairedLook(inputs, trimmed, 0);
  ASSERT_TRUE(r) << r.error().ToString();
  const PairedMetricVerdict& v = r->metrics[0];
  EXPECT_EQ(v.verdict, Verdict::kEquivalent) << v.reason;
  EXPECT_EQ(v.decided_at_look, 0);
  std::vector<double> d;
  for (double x : ratios) d.push_back(std::log(x));
  EXPECT_NEAR(v.change, std::expm1(TrimmedMean(d, kPairedTrim)), 1e-12);
  const TInterval ci = TrimmedMeanInterval(d, kPairedTrim, 1 - 2 * v.bound_level);
  EXPECT_NEAR(v.t_ci.lower, std::expm1(ci.lower), 1e-12);
  EXPECT_NEAR(v.t_ci.upper, std::expm1(ci.upper), 1e-12);
  EXPECT_NEAR(v.noise, ci.std_error * std::sqrt(10.0), 1e-12);
  const TrimmedTTestResult t = TrimmedTTest(d, kPairedTrim);
  EXPECT_NEAR(v.p_test, t.p_greater, 1e-12);
  // The decision is the trimmed interval's; the bootstrap (of the trimmed mean) is reported.
  EXPECT_EQ(v.decision_ci.lower, v.t_ci.lower);
  EXPECT_EQ(v.decision_ci.upper, v.t_ci.upper);
  EXPECT_LT(v.bootstrap_ci.lower, v.change);
  EXPECT_GT(v.bootstrap_ci.upper, v.change);

  PairedPolicy t_test = trimmed;
  t_test.test = PairedTest::kT;
  auto plain = JudgePairedLook(inputs, t_test, 0);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->metrics[0].verdict, Verdict::kInconclusive) << plain->metrics[0].reason;
}

TEST(PairedTrimmedTest, SlowdownBeyondTheThresholdIsARegression) {
  std::vector<double> ratios = Ratios(10, 1.09, 0.01);
  ratios[5] = 0.6;  // one torn block the other way does not hide it
  const auto blocks = Blocks(ratios);
  const std::vector<PairedMetricInput> inputs = {Input("BM_A", blocks)};
  auto r = JudgePairedLook(inputs, PairedPolicy{}, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->metrics[0].verdict, Verdict::kRegression) << r->metrics[0].reason;
  EXPECT_NEAR(r->metrics[0].change, 0.09, 0.01);
}

TEST(PairedTrimmedTest, NameAndAdvice) {
  EXPECT_EQ(PairedTestName(PairedTest::kTrimmed), "trimmed");
  EXPECT_EQ(ParsePairedTest("trimmed"), PairedTest::kTrimmed);
  // Charged for its efficiency at the normal: more blocks than the t-test, and at least 5.
  const int t = BlocksNeeded(0.05, 0.03, 0.01, 0.8, PairedTest::kT);
  const int trimmed = BlocksNeeded(0.05, 0.03, 0.01, 0.8, PairedTest::kTrimmed);
  EXPECT_EQ(trimmed, static_cast<int>(std::ceil(t / 0.94)));
  EXPECT_EQ(BlocksNeeded(0.05, 0.0, 0.01, 0.8, PairedTest::kTrimmed), 5);
}

}  // namespace
}  // namespace perfwarden::stats
