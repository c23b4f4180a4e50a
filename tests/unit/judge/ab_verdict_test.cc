// SPDX-License-Identifier: Apache-2.0
// judge::JudgeAbMetric, `perfwarden ab`'s verdict on one metric: each outcome, the threshold's
// edges, and the direction of "better".
#include "judge/ab_verdict.h"

#include <gtest/gtest.h>

namespace perfwarden::judge {
namespace {

AbMetricStats Stats(double change, double low, double high, double p, int n = 6) {
  AbMetricStats m;
  m.n_a = n;
  m.n_b = n;
  m.change = change;
  m.ci_low = low;
  m.ci_high = high;
  m.p_value = p;
  return m;
}

TEST(AbVerdict, SignificantAndBeyondTheThresholdIsBetterOrWorse) {
  EXPECT_EQ(JudgeAbMetric(Stats(-0.5, -0.52, -0.48, 0.002), 0.05, 0.01), AbVerdict::kBetter);
  EXPECT_EQ(JudgeAbMetric(Stats(0.03, 0.02, 0.04, 0.002), 0.05, 0.01), AbVerdict::kWorse);
  AbMetricStats rate = Stats(0.03, 0.02, 0.04, 0.002);
  rate.direction = Direction::kHigherIsBetter;
  EXPECT_EQ(JudgeAbMetric(rate, 0.05, 0.01), AbVerdict::kBetter);
}

TEST(AbVerdict, AnExactlyRepeatedTinyChangeIsNoDifference) {
  // +0.01% in every run: the U test is as significant as 6 against 6 can be, the change is not
  // one that matters.
  const AbMetricStats tiny = Stats(1e-4, 1e-4, 1e-4, 0.0022);
  EXPECT_EQ(JudgeAbMetric(tiny, 0.05, 0.01), AbVerdict::kNoDifference);
  EXPECT_EQ(JudgeAbMetric(tiny, 0.05, 0.0), AbVerdict::kWorse);  // threshold 0: any change
  EXPECT_EQ(JudgeAbMetric(Stats(0, 0, 0, 1), 0.05, 0.0), AbVerdict::kNoDifference);
}

TEST(AbVerdict, AnIntervalCrossingTheThresholdIsUndecided) {
  EXPECT_EQ(JudgeAbMetric(Stats(-0.001, -0.27, 0.33, 0.82), 0.05, 0.01), AbVerdict::kUndecided);
  // Significant but small, with an interval reaching past the threshold.
  EXPECT_EQ(JudgeAbMetric(Stats(0.008, 0.002, 0.015, 0.01), 0.05, 0.01), AbVerdict::kUndecided);
  // Beyond the threshold but not significant.
  EXPECT_EQ(JudgeAbMetric(Stats(0.05, -0.01, 0.11, 0.2), 0.05, 0.01), AbVerdict::kUndecided);
  // The interval's ends on the threshold count as within it.
  EXPECT_EQ(JudgeAbMetric(Stats(0.0, -0.01, 0.01, 0.9), 0.05, 0.01), AbVerdict::kNoDifference);
}

TEST(AbVerdict, RunsThatCannotReachAlphaAreTooFew) {
  EXPECT_EQ(JudgeAbMetric(Stats(-0.5, -0.5, -0.5, 0.33, 2), 0.05, 0.01), AbVerdict::kTooFewRuns);
  EXPECT_EQ(JudgeAbMetric(Stats(-0.5, -0.5, -0.5, 0.0022, 6), 0.001, 0.01),
            AbVerdict::kTooFewRuns);  // 6 against 6 cannot reach p < 0.001
}

TEST(AbVerdict, Names) {
  EXPECT_EQ(AbVerdictName(AbVerdict::kBetter), "better");
  EXPECT_EQ(AbVerdictName(AbVerdict::kWorse), "worse");
  EXPECT_EQ(AbVerdictName(AbVerdict::kNoDifference), "no difference");
  EXPECT_EQ(AbVerdictName(AbVerdict::kUndecided), "undecided");
  EXPECT_EQ(AbVerdictName(AbVerdict::kTooFewRuns), "too few runs");
}

}  // namespace
}  // namespace perfwarden::judge
