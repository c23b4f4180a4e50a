// SPDX-License-Identifier: Apache-2.0
#include "stats/environment_shift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace perfwarden::stats {
namespace {

std::vector<double> Logs(std::initializer_list<double> ratios) {
  std::vector<double> out;
  for (double r : ratios) out.push_back(std::log(r));
  return out;
}

// The first-run failure of the main job: the baseline ran ~40% slow, so every benchmark of the
// pull request looked 8-50% faster and a planted +10% looked like -8%.
TEST(EnvironmentShift, ASlowBaselineThatMakesEveryBenchmarkLookFasterIsAShift) {
  const auto logs = Logs({0.70, 0.75, 0.92, 0.62, 0.5, 0.81, 0.68, 0.9});
  const ShiftEvidence e = DetectEnvironmentShift(logs);
  EXPECT_TRUE(e.shifted) << e.reason;
  EXPECT_EQ(e.metrics, 8u);
  EXPECT_DOUBLE_EQ(e.same_sign_share, 1.0);
  EXPECT_LT(e.median_change, -0.2);
  EXPECT_NE(e.reason.find("8 of 8 metrics moved better"), std::string::npos) << e.reason;
}

TEST(EnvironmentShift, AFastBaselineThatMakesMostBenchmarksLookSlowerIsAShift) {
  // 13 drift "regressions" of 16, one benchmark unmoved, two slightly faster.
  std::vector<double> logs;
  for (int i = 0; i < 13; ++i) logs.push_back(std::log(1.15 + 0.03 * i));
  for (double r : {1.0, 0.99, 0.98}) logs.push_back(std::log(r));
  const ShiftEvidence e = DetectEnvironmentShift(logs);
  EXPECT_TRUE(e.shifted) << e.reason;
  EXPECT_GT(e.median_change, 0.05);
  EXPECT_NEAR(e.same_sign_share, 13.0 / 16, 1e-12);
}

TEST(EnvironmentShift, OneLargeRegressionAmongUnchangedBenchmarksIsNotAShift) {
  const auto logs = Logs({3.0, 1.01, 0.99, 1.0, 1.02, 0.98});
  const ShiftEvidence e = DetectEnvironmentShift(logs);
  EXPECT_FALSE(e.shifted) << e.reason;
  EXPECT_GT(e.geomean_change, 0.05);  // the mean alone would have been fooled
}

TEST(EnvironmentShift, AMoveSmallerThanTheThresholdIsNotAShift) {
  const auto logs = Logs({1.04, 1.03, 1.045, 1.02, 1.04});
  EXPECT_FALSE(DetectEnvironmentShift(logs).shifted);
  ShiftPolicy tight;
  tight.threshold = 0.02;
  EXPECT_TRUE(DetectEnvironmentShift(logs, tight).shifted);
}

TEST(EnvironmentShift, MixedSignsAreNotAShiftEvenWithALargeMedian) {
  // Half the metrics 10% slower, half 10% faster but the median tipped by one: no common move.
  const auto logs = Logs({1.1, 1.1, 1.1, 1.12, 0.9, 0.9, 0.91});
  const ShiftEvidence e = DetectEnvironmentShift(logs);
  EXPECT_FALSE(e.shifted) << e.reason;
  EXPECT_LT(e.same_sign_share, 0.75);
}

TEST(EnvironmentShift, TooFewMetricsOrNonFiniteOnesAreNotJudged) {
  const auto three = Logs({1.5, 1.5, 1.5});
  const ShiftEvidence e = DetectEnvironmentShift(three);
  EXPECT_FALSE(e.shifted);
  EXPECT_NE(e.reason.find("too few metrics"), std::string::npos) << e.reason;
  std::vector<double> with_nan = Logs({1.5, 1.5, 1.5, 1.5});
  with_nan.push_back(std::nan(""));
  with_nan.push_back(INFINITY);
  const ShiftEvidence f = DetectEnvironmentShift(with_nan);
  EXPECT_TRUE(f.shifted);
  EXPECT_EQ(f.metrics, 4u);
  EXPECT_FALSE(DetectEnvironmentShift({}).shifted);
}

// Calibration on simulated runs of 8 metrics with independent per-benchmark noise: with no
// common drift, a shift is called in under 0.5% of trials at CV 3% and under 3% at CV 5% (about
// 1.4% expected); a common drift of 10% is called in at least 99% (CV 3%) and 97% (CV 5%) of
// trials. 4,000 trials each, fixed seed.
double ShiftRate(double drift, double cv, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0, cv);
  const int trials = 4000;
  int shifted = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> logs;
    for (int m = 0; m < 8; ++m) logs.push_back(std::log1p(drift) + noise(rng));
    shifted += DetectEnvironmentShift(logs).shifted ? 1 : 0;
  }
  return static_cast<double>(shifted) / trials;
}

TEST(EnvironmentShift, CalibrationOnSimulatedRuns) {
  std::mt19937_64 rng(20261126);
  EXPECT_LT(ShiftRate(0.0, 0.03, rng), 0.005);
  EXPECT_LT(ShiftRate(0.0, 0.05, rng), 0.03);
  EXPECT_GT(ShiftRate(0.10, 0.03, rng), 0.99);
  EXPECT_GT(ShiftRate(0.10, 0.05, rng), 0.97);
  EXPECT_GT(ShiftRate(-0.10, 0.05, rng), 0.97);
}

}  // namespace
}  // namespace perfwarden::stats
