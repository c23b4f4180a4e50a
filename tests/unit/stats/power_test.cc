// SPDX-License-Identifier: Apache-2.0
// Power analysis against every row of power.csv (statsmodels 0.13.5 TTestIndPower /
// NormalIndPower / solve_power), plus the invariants of RepetitionsNeeded.
#include "stats/power.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <utility>

#include "stats/bootstrap.h"
#include "stats/paired_ttest.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::OracleRow;
using ::perfwarden::testing::ReadGoldenCsv;
using ::perfwarden::testing::WorstError;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The README allows 1e-7 for power: SciPy 1.10's t.ppf is off by up to ~2e-9 relative (see
// t_quantiles.csv) and its noncentral t cdf carries similar errors, while Boost is accurate to
// rounding. The rows agree to ~1e-9 (printed below), so 1e-8 still catches any real drift.
constexpr double kPowerRel = 1e-8;
// Normal power uses only Phi and its quantile, where both sides are accurate to rounding.
constexpr double kNormalRel = 1e-13;
// Solved sizes inherit the power differences divided by the slope of the power curve
// (README: 1e-5, compare ceil).
constexpr double kNobsRel = 1e-7;

Alternative ParseAlternative(const std::string& text) {
  if (text == "two-sided") return Alternative::kTwoSided;
  if (text == "larger") return Alternative::kGreater;
  if (text == "smaller") return Alternative::kLess;
  ADD_FAILURE() << "unknown alternative " << text;
  return Alternative::kTwoSided;
}

TEST(PowerOracle, EveryRowOfPowerCsv) {
  const auto table = ReadGoldenCsv("power.csv");
  ASSERT_EQ(table.rows.size(), 148u);
  WorstError worst_t("power.csv ttest_ind_power");
  WorstError worst_normal("power.csv normal_ind_power");
  WorstError worst_solve("power.csv ttest_ind_solve_nobs1");
  int t_rows = 0;
  int normal_rows = 0;
  int solve_rows = 0;
  for (const OracleRow& row : table.rows) {
    SCOPED_TRACE(row.Where());
    const std::string& function = row.Str("function");
    const double d = row.Num("effect_size_d");
    const double ratio = row.Num("ratio_nobs2_over_nobs1");
    const double alpha = row.Num("alpha");
    const Alternative alternative = ParseAlternative(row.Str("alternative"));
    const double expected = row.Num("value");
    if (function == "ttest_ind_power") {
      ++t_rows;
      const double actual = TTestIndPower(d, row.Num("nobs1"), ratio, alpha, alternative);
      worst_t.Add(actual, expected);
      EXPECT_TRUE(NearRel(actual, expected, kPowerRel));
    } else if (function == "normal_ind_power") {
      ++normal_rows;
      const double actual = NormalIndPower(d, row.Num("nobs1"), ratio, alpha, alternative);
      worst_normal.Add(actual, expected);
      EXPECT_TRUE(NearRel(actual, expected, kNormalRel));
    } else if (function == "ttest_ind_solve_nobs1") {
      ++solve_rows;
      const double target = row.Num("target_power");
      const double actual = TTestIndSolveNobs1(d, target, ratio, alpha, alternative);
      worst_solve.Add(actual, expected);
      EXPECT_TRUE(NearRel(actual, expected, kNobsRel));
      EXPECT_EQ(std::ceil(actual), std::ceil(expected));
      // The root really is a root of our own power function, to full precision.
      EXPECT_TRUE(NearRel(TTestIndPower(d, actual, ratio, alpha, alternative), target, 1e-13));
    } else {
      ADD_FAILURE() << "unknown function " << function;
    }
  }
  EXPECT_EQ(t_rows, 124);
  EXPECT_EQ(normal_rows, 9);
  EXPECT_EQ(solve_rows, 15);
}

TEST(TTestIndPower, InvalidArgumentsGiveNaN) {
  const auto two = Alternative::kTwoSided;
  EXPECT_TRUE(std::isnan(TTestIndPower(kNaN, 10, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(kInf, 10, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, 0, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, -3, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, kNaN, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, 10, 0, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, 10, 1, 0, two)));
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, 10, 1, 1, two)));
  // df = 1 + 1 - 2 = 0: the pooled test is undefined.
  EXPECT_TRUE(std::isnan(TTestIndPower(0.5, 1, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(NormalIndPower(0.5, 10, -1, 0.05, two)));
  EXPECT_TRUE(std::isnan(NormalIndPower(0.5, 0, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(NormalIndPower(0.5, 10, 1, 1.5, two)));
}

TEST(TTestIndPower, ZeroEffectRejectsAtAlphaAndTailsAreConsistent) {
  for (const double n : {2.0, 5.5, 30.0, 1000.0}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(NearRel(TTestIndPower(0, n, 1, 0.05, Alternative::kTwoSided), 0.05, 1e-12));
    EXPECT_TRUE(NearRel(TTestIndPower(0, n, 1, 0.05, Alternative::kGreater), 0.05, 1e-12));
    EXPECT_TRUE(NearRel(NormalIndPower(0, n, 1, 0.05, Alternative::kTwoSided), 0.05, 1e-14));
    // "smaller" for d is "larger" for -d.
    EXPECT_TRUE(NearRel(TTestIndPower(-0.4, n, 2, 0.05, Alternative::kLess),
                        TTestIndPower(0.4, n, 2, 0.05, Alternative::kGreater), 1e-12));
    // Two-sided power is symmetric in d and the sum of both one-sided powers at alpha / 2.
    const double two = TTestIndPower(0.4, n, 1, 0.05, Alternative::kTwoSided);
    EXPECT_TRUE(NearRel(two, TTestIndPower(-0.4, n, 1, 0.05, Alternative::kTwoSided), 1e-12));
    EXPECT_TRUE(NearRel(two,
                        TTestIndPower(0.4, n, 1, 0.025, Alternative::kGreater) +
                            TTestIndPower(0.4, n, 1, 0.025, Alternative::kLess),
                        1e-12));
  }
  // The normal approximation is the t power with infinitely many degrees of freedom.
  EXPECT_TRUE(NearRel(TTestIndPower(0.05, 2e6, 1, 0.05, Alternative::kTwoSided),
                      NormalIndPower(0.05, 2e6, 1, 0.05, Alternative::kTwoSided), 1e-5));
  // statsmodels' ratio == 0 in NormalIndPower is the one-sample case.
  EXPECT_TRUE(NearRel(NormalIndPower(0.3, 50, 0, 0.05, Alternative::kTwoSided),
                      NormalIndPower(0.3, 100, 1, 0.05, Alternative::kTwoSided), 1e-14));
}

TEST(TTestIndPower, HugeNoncentralityDoesNotThrow) {
  // Boost's noncentral t throws past |nc| ~ 65536; a zero-noise benchmark produces such d.
  EXPECT_EQ(TTestIndPower(1e6, 10, 1, 0.05, Alternative::kTwoSided), 1.0);
  EXPECT_EQ(TTestIndPower(1e6, 10, 1, 0.05, Alternative::kGreater), 1.0);
  EXPECT_NEAR(TTestIndPower(-1e6, 10, 1, 0.05, Alternative::kGreater), 0.0, 1e-300);
  EXPECT_EQ(TTestIndPower(0.5, 1e12, 1, 0.05, Alternative::kTwoSided), 1.0);
  EXPECT_EQ(RepetitionsNeeded(0.05, 1e-9, 0.05, 0.8), 2);
}

// The one-sample power: alpha at d = 0, symmetric, the normal one-sample power for large n, and
// the rejection rate of simulated one-sample t-tests (n = 8, d = 1: 20,000 trials).
TEST(TTestPower, OneSampleInvariantsAndSimulation) {
  EXPECT_TRUE(NearRel(TTestPower(0, 8, 0.05, Alternative::kTwoSided), 0.05, 1e-12));
  EXPECT_TRUE(NearRel(TTestPower(0.7, 8, 0.05, Alternative::kTwoSided),
                      TTestPower(-0.7, 8, 0.05, Alternative::kTwoSided), 1e-12));
  EXPECT_TRUE(NearRel(TTestPower(0.02, 4e6, 0.05, Alternative::kTwoSided),
                      NormalIndPower(0.02, 4e6, 0, 0.05, Alternative::kTwoSided), 1e-5));
  EXPECT_TRUE(std::isnan(TTestPower(0.5, 1, 0.05, Alternative::kTwoSided)));
  EXPECT_TRUE(std::isnan(TTestPower(0.5, 8, 0, Alternative::kTwoSided)));
  EXPECT_TRUE(std::isnan(TTestPower(kNaN, 8, 0.05, Alternative::kTwoSided)));

  const double expected = TTestPower(1.0, 8, 0.05, Alternative::kTwoSided);
  Rng rng(424242);
  const int trials = 20000;
  int rejected = 0;
  std::vector<double> x(8);
  for (int t = 0; t < trials; ++t) {
    for (double& v : x) {
      double u1 = 0;
      while (u1 <= 0) u1 = rng.Uniform();
      v = 1.0 + std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * rng.Uniform());
    }
    if (OneSampleTTest(x).p_two_sided < 0.05) ++rejected;
  }
  const double se = std::sqrt(expected * (1 - expected) / trials);
  EXPECT_NEAR(static_cast<double>(rejected) / trials, expected, 4 * se) << expected;
}

TEST(TTestIndSolveNobs1, EdgeCases) {
  const auto two = Alternative::kTwoSided;
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(0.5, 0, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(0.5, 1, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(0.5, 0.8, 1, 0, two)));
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(kNaN, 0.8, 1, 0.05, two)));
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(0.5, 0.8, 0, 0.05, two)));
  // No effect: power stays at alpha, 0.8 is never reached.
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(0, 0.8, 1, 0.05, two)));
  // One-sided in the wrong direction: power falls with n.
  EXPECT_TRUE(std::isnan(TTestIndSolveNobs1(-0.5, 0.8, 1, 0.05, Alternative::kGreater)));
  // A huge effect is detected below two per side (the df > 0 boundary is 1 per side).
  const double tiny = TTestIndSolveNobs1(10, 0.8, 1, 0.05, two);
  EXPECT_GT(tiny, 1);
  EXPECT_LT(tiny, 2);
  EXPECT_TRUE(NearRel(TTestIndPower(10, tiny, 1, 0.05, two), 0.8, 1e-12));
  // Unequal sizes and one-sided alternatives solve to their own roots.
  for (const double ratio : {0.5, 1.0, 3.0}) {
    for (const Alternative alt : {Alternative::kTwoSided, Alternative::kGreater}) {
      const double n = TTestIndSolveNobs1(0.3, 0.9, ratio, 0.01, alt);
      ASSERT_TRUE(std::isfinite(n));
      EXPECT_TRUE(NearRel(TTestIndPower(0.3, n, ratio, 0.01, alt), 0.9, 1e-12));
    }
  }
  // Small effects need large samples; the normal approximation gives the scale.
  const double big = TTestIndSolveNobs1(0.01, 0.8, 1, 0.05, two);
  EXPECT_TRUE(NearRel(big, 2 * std::pow((1.959963984540054 + 0.8416212335729143) / 0.01, 2), 1e-3));
}

TEST(RepetitionsNeeded, InvalidArgumentsGiveMinusOne) {
  EXPECT_EQ(RepetitionsNeeded(0.05, 0, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, -0.1, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, kNaN, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, kInf, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0, 0.03, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(kNaN, 0.03, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(kInf, 0.03, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(-1, 0.03, 0.05, 0.8), -1);  // log(0)
  EXPECT_EQ(RepetitionsNeeded(-2, 0.03, 0.05, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, 0, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, 1, 0.8), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, 0.05, 0), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, 0.05, 1), -1);
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, kNaN, 0.8), -1);
}

TEST(RepetitionsNeeded, MatchesTheSolvedSizeOnTheLogScale) {
  // 5% change at CV 3%: d = log(1.05) / sqrt(log(1.0009)) ~ 1.6266.
  const double d = std::log(1.05) / std::sqrt(std::log1p(0.03 * 0.03));
  const double n = TTestIndSolveNobs1(d, 0.8, 1, 0.05, Alternative::kTwoSided);
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, 0.05, 0.8), static_cast<int>(std::ceil(n)));
  EXPECT_EQ(RepetitionsNeeded(0.05, 0.03, 0.05, 0.8), 8);
  // A slowdown and the speedup that undoes it are the same distance on the log scale.
  EXPECT_EQ(RepetitionsNeeded(0.25, 0.1, 0.05, 0.9), RepetitionsNeeded(-0.2, 0.1, 0.05, 0.9));
}

TEST(RepetitionsNeeded, SmallForLargeChangesAndNeverBelowTwo) {
  EXPECT_LE(RepetitionsNeeded(0.10, 0.03, 0.05, 0.8), 4);
  EXPECT_GE(RepetitionsNeeded(0.10, 0.03, 0.05, 0.8), 2);
  EXPECT_EQ(RepetitionsNeeded(1.0, 0.01, 0.05, 0.8), 2);
  EXPECT_EQ(RepetitionsNeeded(10.0, 0.001, 0.05, 0.5), 2);
}

TEST(RepetitionsNeeded, MonotoneInNoiseChangeAlphaAndPower) {
  int previous = 0;
  for (const double cv : {0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5}) {
    const int reps = RepetitionsNeeded(0.05, cv, 0.05, 0.8);
    EXPECT_GE(reps, previous) << "cv " << cv;
    previous = reps;
  }
  EXPECT_GT(previous, 100);  // 5% at CV 50% needs many runs
  previous = std::numeric_limits<int>::max();
  for (const double change : {0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.5}) {
    const int reps = RepetitionsNeeded(change, 0.05, 0.05, 0.8);
    EXPECT_LE(reps, previous) << "change " << change;
    previous = reps;
  }
  EXPECT_GE(RepetitionsNeeded(0.05, 0.05, 0.01, 0.8), RepetitionsNeeded(0.05, 0.05, 0.05, 0.8));
  EXPECT_GE(RepetitionsNeeded(0.05, 0.05, 0.05, 0.95), RepetitionsNeeded(0.05, 0.05, 0.05, 0.8));
}

TEST(RepetitionsNeeded, HopelessRequestsSaturate) {
  // 1e-7 relative change at CV 50%: ~1e14 runs per side, more than an int holds.
  EXPECT_EQ(RepetitionsNeeded(1e-7, 0.5, 0.05, 0.8), std::numeric_limits<int>::max());
}

}  // namespace
}  // namespace perfwarden::stats
