// SPDX-License-Identifier: Apache-2.0
// The peers' default detectors (stats/peer_detectors.h): each finds a planted step where its
// documented rule says, stays quiet on pure noise of its own scale, and rejects bad parameters.
#include "stats/peer_detectors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "stats/bootstrap.h"

namespace perfwarden::stats {
namespace {

// n points around `level` with normal noise of relative sd `cv`; from `step_at` on, the level
// is multiplied by `factor`. Deterministic per seed.
std::vector<double> Series(uint64_t seed, std::size_t n, double level, double cv,
                           std::size_t step_at = SIZE_MAX, double factor = 1) {
  Rng rng(seed);
  std::vector<double> out;
  while (out.size() < n) {
    const double u1 = rng.Uniform();
    const double u2 = rng.Uniform();
    if (u1 <= 0) continue;
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    const double base = out.size() >= step_at ? level * factor : level;
    out.push_back(base * (1 + cv * z));
  }
  return out;
}

TEST(PreviousPointDetectorTest, RatioAgainstThePreviousPoint) {
  const std::vector<double> x{100, 101, 99, 250, 251, 100};
  EXPECT_EQ(*PreviousPointDetector(x, 2.0, false), (std::vector<std::size_t>{3}));
  EXPECT_EQ(*PreviousPointDetector(x, 2.0, true), (std::vector<std::size_t>{3, 5}));
  EXPECT_EQ(*PreviousPointDetector(x, 1.05, false), (std::vector<std::size_t>{3}));
  const std::vector<double> with_zero{0, 100, -5, 300};
  EXPECT_TRUE(PreviousPointDetector(with_zero, 2.0, true)->empty());  // non-positive skipped
  EXPECT_EQ(PreviousPointDetector(x, 1.0, false).error().field, "ratio");
  const std::vector<double> nan{1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_EQ(PreviousPointDetector(nan, 2.0, false).error().field, "series");
}

TEST(LookbackZScoreDetectorTest, FindsAStepAndStaysQuietOnNoise) {
  // A 10% step with 1% noise: the first point of the new level is 10 standard deviations out.
  const auto step = Series(3, 300, 100, 0.01, 200, 1.10);
  auto found = LookbackZScoreDetector(step, 100, 5, 10);
  ASSERT_TRUE(found);
  ASSERT_FALSE(found->empty());
  EXPECT_EQ(found->front(), 200u);
  // Without a restart, the next points are flagged too while the lookback still holds the old
  // level (Conbench restarts its history at a confirmed change; see the header).
  EXPECT_GT(found->size(), 1u);
  // 2,000 points of pure noise: |z| > 5 has probability ~6e-7 per point.
  EXPECT_TRUE(LookbackZScoreDetector(Series(4, 2000, 100, 0.05), 100, 5, 10)->empty());
  EXPECT_EQ(LookbackZScoreDetector(step, 1, 5, 10).error().field, "lookback");
  EXPECT_EQ(LookbackZScoreDetector(step, 100, 0, 10).error().field, "z_threshold");
  EXPECT_EQ(LookbackZScoreDetector(step, 100, 5, 1).error().field, "min_history");
}

TEST(MovingWindowTTestDetectorTest, ReportsThePeakOfEachRunOfCandidates) {
  const auto step = Series(5, 120, 1000, 0.01, 60, 1.08);
  auto found = MovingWindowTTestDetector(step, 12, 7);
  ASSERT_TRUE(found);
  ASSERT_EQ(found->size(), 1u);
  EXPECT_NEAR(static_cast<double>(found->front()), 60.0, 1.0);
  // Two steps far apart: two runs, two reports.
  auto two = Series(6, 200, 1000, 0.01, 60, 1.08);
  for (std::size_t i = 140; i < two.size(); ++i) two[i] *= 0.9;
  auto both = MovingWindowTTestDetector(two, 12, 7);
  ASSERT_TRUE(both);
  ASSERT_EQ(both->size(), 2u);
  EXPECT_NEAR(static_cast<double>((*both)[1]), 140.0, 1.0);
  // No noise at all: t is infinite exactly at the step and 0 away from it.
  std::vector<double> flat(40, 10.0);
  for (std::size_t i = 25; i < flat.size(); ++i) flat[i] = 11.0;
  EXPECT_EQ(*MovingWindowTTestDetector(flat, 12, 7), (std::vector<std::size_t>{25}));
  // Pure noise, and a series shorter than two windows.
  EXPECT_TRUE(MovingWindowTTestDetector(Series(7, 2000, 1000, 0.05), 12, 7)->empty());
  EXPECT_TRUE(MovingWindowTTestDetector(std::vector<double>(23, 1.0), 12, 7)->empty());
  EXPECT_EQ(MovingWindowTTestDetector(flat, 1, 7).error().field, "window");
  EXPECT_EQ(MovingWindowTTestDetector(flat, 12, -1).error().field, "t_threshold");
}

}  // namespace
}  // namespace perfwarden::stats
