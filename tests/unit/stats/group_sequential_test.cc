// SPDX-License-Identifier: Apache-2.0
// The paired gate's alpha spending: the Lan-DeMets spending functions and the nominal levels
// solved by recursive integration, against the boundaries published for them (Jennison &
// Turnbull 2000, table 7.x; R's gsDesign sfLDPocock / sfLDOF, one-sided 0.025, five equally
// spaced looks), and by simulation of the Brownian statistic they are solved for.
#include "stats/group_sequential.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

std::vector<double> Boundaries(Spending spending, double alpha, const std::vector<int>& info) {
  std::vector<double> z;
  for (double level : NominalLevels(spending, alpha, info)) z.push_back(-NormalQuantile(level));
  return z;
}

TEST(GroupSequentialTest, PublishedLanDeMetsBoundaries) {
  const std::vector<int> equal = {1, 2, 3, 4, 5};
  const std::vector<double> pocock = {2.4380, 2.4268, 2.4102, 2.3966, 2.3860};
  const std::vector<double> obf = {4.8769, 3.3570, 2.6803, 2.2898, 2.0310};
  const auto p = Boundaries(Spending::kPocock, 0.025, equal);
  const auto o = Boundaries(Spending::kOBrienFleming, 0.025, equal);
  ASSERT_EQ(p.size(), 5u);
  ASSERT_EQ(o.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_NEAR(p[k], pocock[k], 2e-4) << k;
    EXPECT_NEAR(o[k], obf[k], 2e-4) << k;
  }
}

TEST(GroupSequentialTest, SpendingFunctions) {
  for (Spending s : {Spending::kPocock, Spending::kOBrienFleming, Spending::kBonferroni}) {
    EXPECT_EQ(SpentAlpha(s, 0.05, 0), 0) << SpendingName(s);
    EXPECT_NEAR(SpentAlpha(s, 0.05, 1), 0.05, 1e-12) << SpendingName(s);
    EXPECT_LT(SpentAlpha(s, 0.05, 0.3), SpentAlpha(s, 0.05, 0.6)) << SpendingName(s);
    EXPECT_EQ(ParseSpending(SpendingName(s)), s);
  }
  EXPECT_NEAR(SpentAlpha(Spending::kPocock, 0.05, 0.5), 0.05 * std::log(1 + (M_E - 1) / 2), 1e-15);
  EXPECT_FALSE(ParseSpending("linear"));
}

TEST(GroupSequentialTest, BonferroniSplitsEvenly) {
  const auto levels =
      NominalLevels(Spending::kBonferroni, 0.05, std::vector<int>{6, 9, 13, 20, 30});
  ASSERT_EQ(levels.size(), 5u);
  for (double l : levels) EXPECT_DOUBLE_EQ(l, 0.01);
}

// The correlation between looks makes every level larger than the level spent there (the first
// look's equals it); the first is exactly the spent level.
TEST(GroupSequentialTest, LevelsExceedTheirIncrements) {
  const std::vector<int> schedule = {6, 9, 13, 20, 30};
  for (Spending s : {Spending::kPocock, Spending::kOBrienFleming}) {
    const auto levels = NominalLevels(s, 0.05, schedule);
    ASSERT_EQ(levels.size(), 5u);
    EXPECT_NEAR(levels[0], SpentAlpha(s, 0.05, 0.2), 1e-15);
    double before = SpentAlpha(s, 0.05, 0.2), sum = levels[0];
    for (size_t k = 1; k < 5; ++k) {
      const double spent = SpentAlpha(s, 0.05, schedule[k] / 30.0);
      EXPECT_GT(levels[k], spent - before) << SpendingName(s) << " " << k;
      before = spent;
      sum += levels[k];
    }
    EXPECT_GT(sum, 0.05) << SpendingName(s);
  }
}

// What the levels promise, by simulation of the statistic they were solved for: a sum of unit
// normal increments tested one-sided at each look (z = S_k / sqrt(I_k)) rejects at some look in
// alpha of the runs under the null, and at each look in the increment spent there.
TEST(GroupSequentialTest, SimulatedFirstCrossingsSpendAlpha) {
  const std::vector<int> schedule = {6, 9, 13, 20, 30};
  const double alpha = 0.05;
  const auto levels = NominalLevels(Spending::kPocock, alpha, schedule);
  std::vector<double> z_bound;
  for (double l : levels) z_bound.push_back(-NormalQuantile(l));
  Rng rng(20261128);
  auto normal = [&] {
    for (;;) {
      const double u = rng.Uniform();
      if (u > 0) return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.Uniform());
    }
  };
  const int runs = 200000;
  std::vector<int> first(schedule.size(), 0);
  for (int r = 0; r < runs; ++r) {
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < schedule.size(); ++k) {
      for (; n < schedule[k]; ++n) sum += normal();
      if (sum / std::sqrt(n) >= z_bound[k]) {
        ++first[k];
        break;
      }
    }
  }
  double before = 0, total = 0;
  for (size_t k = 0; k < schedule.size(); ++k) {
    const double spent = SpentAlpha(Spending::kPocock, alpha, schedule[k] / 30.0);
    const double expected = spent - before;
    before = spent;
    const double rate = static_cast<double>(first[k]) / runs;
    total += rate;
    EXPECT_NEAR(rate, expected, 4 * std::sqrt(expected / runs)) << "look " << k;
  }
  EXPECT_NEAR(total, alpha, 4 * std::sqrt(alpha / runs));
}

TEST(GroupSequentialTest, InvalidArgumentsGiveNoLevels) {
  EXPECT_TRUE(NominalLevels(Spending::kPocock, 0, std::vector<int>{6, 9}).empty());
  EXPECT_TRUE(NominalLevels(Spending::kPocock, 1, std::vector<int>{6, 9}).empty());
  EXPECT_TRUE(NominalLevels(Spending::kPocock, 0.05, std::vector<int>{9, 6}).empty());
  EXPECT_TRUE(NominalLevels(Spending::kPocock, 0.05, std::vector<int>{0, 6}).empty());
  EXPECT_TRUE(NominalLevels(Spending::kPocock, 0.05, std::vector<int>{}).empty());
  NominalLevelTable table(Spending::kPocock, {6, 9});
  EXPECT_EQ(table.Level(0.05, 2), 0);
  EXPECT_EQ(table.Level(0.05, -1), 0);
  EXPECT_NEAR(table.Level(0.05, 0), SpentAlpha(Spending::kPocock, 0.05, 6.0 / 9), 1e-15);
}

}  // namespace
}  // namespace perfwarden::stats
