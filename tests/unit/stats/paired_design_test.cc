// SPDX-License-Identifier: Apache-2.0
// The sequential design: policy validation, the look schedule, the alpha and confidence each
// look spends, and the blocks-needed advice (the smallest count that reaches the power).
#include "stats/paired_design.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <vector>

#include "stats/power.h"

namespace perfwarden::stats {
namespace {

TEST(PairedLookScheduleTest, GeometricFromMinToMax) {
  EXPECT_EQ(PairedLookSchedule(6, 30, 1.5), (std::vector<int>{6, 9, 13, 20, 30}));
  EXPECT_EQ(PairedLookSchedule(6, 24, 2.0), (std::vector<int>{6, 12, 24}));
  EXPECT_EQ(PairedLookSchedule(10, 10, 1.5), (std::vector<int>{10}));
  EXPECT_EQ(PairedLookSchedule(6, 7, 1.5), (std::vector<int>{6, 7}));
  // Rounding collisions are dropped; the schedule still rises and ends at max.
  const auto dense = PairedLookSchedule(6, 8, 1.01);
  ASSERT_FALSE(dense.empty());
  EXPECT_EQ(dense.front(), 6);
  EXPECT_EQ(dense.back(), 8);
  for (size_t i = 1; i < dense.size(); ++i) EXPECT_GT(dense[i], dense[i - 1]);
  // Each step grows by at most `growth` (up to rounding).
  const auto wide = PairedLookSchedule(5, 400, 1.3);
  for (size_t i = 1; i < wide.size(); ++i) {
    EXPECT_LE(wide[i], std::ceil(wide[i - 1] * 1.3 + 1)) << i;
  }
  EXPECT_TRUE(PairedLookSchedule(0, 10, 1.5).empty());
  EXPECT_TRUE(PairedLookSchedule(10, 6, 1.5).empty());
  EXPECT_TRUE(PairedLookSchedule(6, 30, 1.0).empty());
}

TEST(PairedPolicyTest, ValidationNamesTheField) {
  EXPECT_TRUE(ValidatePairedPolicy(PairedPolicy{}));
  auto field_of = [](PairedPolicy p) { return ValidatePairedPolicy(p).error().field; };
  PairedPolicy p;
  p.threshold = 0;
  EXPECT_EQ(field_of(p), "threshold");
  p = {};
  p.alpha = 1;
  EXPECT_EQ(field_of(p), "alpha");
  p = {};
  p.power = 0;
  EXPECT_EQ(field_of(p), "power");
  p = {};
  p.confidence = 1.2;
  EXPECT_EQ(field_of(p), "confidence");
  p = {};
  p.bootstrap_resamples = 99;
  EXPECT_EQ(field_of(p), "bootstrap_resamples");
  p = {};
  p.min_blocks = 2;
  EXPECT_EQ(field_of(p), "min_blocks");
  p = {};
  p.max_blocks = 5;
  EXPECT_EQ(field_of(p), "max_blocks");
  p = {};
  p.max_blocks = 20000;
  EXPECT_EQ(field_of(p), "max_blocks");
  p = {};
  p.growth = 1;
  EXPECT_EQ(field_of(p), "growth");
}

TEST(PairedPolicyTest, TestNames) {
  EXPECT_EQ(PairedTestName(PairedTest::kT), "t");
  EXPECT_EQ(PairedTestName(PairedTest::kWilcoxon), "wilcoxon");
  EXPECT_EQ(ParsePairedTest("t"), PairedTest::kT);
  EXPECT_EQ(ParsePairedTest("wilcoxon"), PairedTest::kWilcoxon);
  EXPECT_EQ(ParsePairedTest("signed-rank"), PairedTest::kWilcoxon);
  EXPECT_FALSE(ParsePairedTest("welch").has_value());
}

TEST(BlocksNeededTest, SmallestCountThatReachesThePower) {
  for (double sd : {0.01, 0.03, 0.08, 0.2}) {
    for (double alpha : {0.01, 0.001}) {
      const int n = BlocksNeeded(0.05, sd, alpha, 0.8, PairedTest::kT);
      const double effect = std::log1p(0.05) / sd;
      ASSERT_GE(n, 2);
      EXPECT_GE(TTestPower(effect, n, alpha, Alternative::kTwoSided), 0.8) << sd;
      if (n > 2) {
        EXPECT_LT(TTestPower(effect, n - 1, alpha, Alternative::kTwoSided), 0.8) << sd;
      }
    }
  }
  // More noise, a smaller alpha or a smaller threshold need more blocks.
  EXPECT_LT(BlocksNeeded(0.05, 0.03, 0.01, 0.8, PairedTest::kT),
            BlocksNeeded(0.05, 0.06, 0.01, 0.8, PairedTest::kT));
  EXPECT_LT(BlocksNeeded(0.05, 0.03, 0.01, 0.8, PairedTest::kT),
            BlocksNeeded(0.05, 0.03, 0.001, 0.8, PairedTest::kT));
  EXPECT_LT(BlocksNeeded(0.05, 0.03, 0.01, 0.8, PairedTest::kT),
            BlocksNeeded(0.02, 0.03, 0.01, 0.8, PairedTest::kT));
  EXPECT_EQ(BlocksNeeded(0.05, 0.0, 0.01, 0.8, PairedTest::kT), 2);
  EXPECT_EQ(BlocksNeeded(0.05, 1e-6, 0.01, 0.8, PairedTest::kT), 2);
  EXPECT_EQ(BlocksNeeded(1e-9, 10, 1e-6, 0.99, PairedTest::kT), INT_MAX);
  EXPECT_EQ(BlocksNeeded(0.05, NAN, 0.01, 0.8, PairedTest::kT), -1);
  EXPECT_EQ(BlocksNeeded(0.05, -1, 0.01, 0.8, PairedTest::kT), -1);
  EXPECT_EQ(BlocksNeeded(0, 0.03, 0.01, 0.8, PairedTest::kT), -1);
}

TEST(BlocksNeededTest, SignedRankPaysItsEfficiencyAndItsFloor) {
  const int t = BlocksNeeded(0.05, 0.05, 0.001, 0.8, PairedTest::kT);
  const int w = BlocksNeeded(0.05, 0.05, 0.001, 0.8, PairedTest::kWilcoxon);
  EXPECT_EQ(w, static_cast<int>(std::ceil(t / 0.864)));
  // Tiny noise: the t-test needs 2 blocks, the signed-rank test 11 to get under 0.001 at all
  // (2 / 2^11 = 0.00098).
  EXPECT_EQ(BlocksNeeded(0.05, 1e-6, 0.001, 0.8, PairedTest::kWilcoxon), 11);
}

}  // namespace
}  // namespace perfwarden::stats
