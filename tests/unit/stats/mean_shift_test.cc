// SPDX-License-Identifier: Apache-2.0
// The history detector's second candidate source (stats/mean_shift.h): its binary segmentation
// equals one written from the definition (no prefix sums), and on a single step the exhaustive
// optimal partitioning under the same penalised cost (independent O(n^2) and O(n^3) versions
// below); the robust scale ignores steps, clipping removes outliers but keeps steps in place,
// and planted steps are found where they are.
#include "stats/mean_shift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/descriptive.h"

namespace perfwarden::stats {
namespace {

std::vector<double> Noisy(uint64_t seed, std::size_t n, double sd,
                          std::vector<std::pair<std::size_t, double>> steps = {}) {
  Rng rng(seed);
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) {
    double level = 100;
    for (const auto& [index, size] : steps) level += i >= index ? size : 0.0;
    const double u = 1.0 - rng.Uniform();
    x.push_back(level + sd * std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.Uniform()));
  }
  return x;
}

double Cost(const std::vector<double>& x, std::size_t s, std::size_t t, double sigma) {
  double mean = 0;
  for (std::size_t i = s; i < t; ++i) mean += x[i];
  mean /= static_cast<double>(t - s);
  double c = 0;
  for (std::size_t i = s; i < t; ++i) c += (x[i] - mean) * (x[i] - mean);
  return c / (sigma * sigma);
}

// Binary segmentation, recursively, from the definition.
void Split(const std::vector<double>& x, std::size_t s, std::size_t t, double sigma, double beta,
           std::size_t m, std::vector<std::size_t>& out) {
  if (t - s < 2 * m) return;
  double best = 0;
  std::size_t arg = 0;
  for (std::size_t k = s + m; k + m <= t; ++k) {
    const double gain = Cost(x, s, t, sigma) - Cost(x, s, k, sigma) - Cost(x, k, t, sigma);
    if (gain > best + 1e-9) {
      best = gain;
      arg = k;
    }
  }
  if (best <= beta) return;
  Split(x, s, arg, sigma, beta, m, out);
  out.push_back(arg);
  Split(x, arg, t, sigma, beta, m, out);
}

// Optimal partitioning (Jackson et al. 2005) by exhaustive dynamic programming, straight from
// the definition: no prefix sums, no pruning.
std::vector<std::size_t> Exhaustive(const std::vector<double>& x, double sigma, double beta,
                                    std::size_t m) {
  const std::size_t n = x.size();
  auto cost = [&](std::size_t s, std::size_t t) { return Cost(x, s, t, sigma); };
  std::vector<double> f(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> last(n + 1, 0);
  f[0] = -beta;
  for (std::size_t t = m; t <= n; ++t) {
    for (std::size_t s = 0; s + m <= t; ++s) {
      if (s != 0 && s < m) continue;
      const double v = f[s] + cost(s, t) + beta;
      if (v < f[t] - 1e-9) {
        f[t] = v;
        last[t] = s;
      }
    }
  }
  std::vector<std::size_t> out;
  for (std::size_t t = last[n]; t > 0; t = last[t]) out.insert(out.begin(), t);
  return out;
}

TEST(MeanShiftTest, BinarySegmentationAsDefined) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const std::vector<double> x =
        Noisy(seed, 150 + 10 * seed, 1.0, {{40, 2.0}, {70, -1.5}, {100 + seed, 0.8}});
    for (double penalty : {1.0, 3.0}) {
      for (std::size_t m : {1u, 3u}) {
        const double beta = penalty * std::log(static_cast<double>(x.size()));
        std::vector<std::size_t> expected;
        Split(x, 0, x.size(), DifferenceSigma(x), beta, m, expected);
        EXPECT_EQ(MeanShiftChangePoints(x, {penalty, m, 0.0}), expected)
            << "seed " << seed << " penalty " << penalty << " min_segment " << m;
      }
    }
  }
}

TEST(MeanShiftTest, OneStepIsTheOptimalPartitioning) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<double> x = Noisy(seed, 60, 1.0, {{20 + 3 * seed, 2.5}});
    const double beta = 3.0 * std::log(static_cast<double>(x.size()));
    const auto found = MeanShiftChangePoints(x, {3.0, 2, 0.0});
    EXPECT_EQ(found, Exhaustive(x, DifferenceSigma(x), beta, 2)) << "seed " << seed;
    ASSERT_EQ(found.size(), 1u) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(found[0]), 20.0 + 3.0 * static_cast<double>(seed), 2.0)
        << "seed " << seed;
  }
}

TEST(MeanShiftTest, FindsPlantedSteps) {
  const std::vector<double> x = Noisy(21, 400, 1.0, {{100, 3.0}, {250, -4.0}});
  EXPECT_EQ(MeanShiftChangePoints(x, {}), (std::vector<std::size_t>{100, 250}));
  EXPECT_TRUE(MeanShiftChangePoints(Noisy(22, 400, 1.0), {}).empty());
}

TEST(MeanShiftTest, DifferenceSigmaIgnoresSteps) {
  const std::vector<double> x = Noisy(23, 2000, 2.0, {{500, 30.0}, {1000, -50.0}});
  EXPECT_NEAR(DifferenceSigma(x), 2.0, 0.15);
  EXPECT_GT(StdDev(x), 10.0);  // what a plain estimate would say
  EXPECT_DOUBLE_EQ(DifferenceSigma(std::vector<double>{5, 5, 5, 5}), 0.0);
  EXPECT_DOUBLE_EQ(DifferenceSigma(std::vector<double>{1, 2}), 0.0);
  // Quantised values: the MAD of the differences is 0, their standard deviation is not.
  EXPECT_GT(DifferenceSigma(std::vector<double>{1, 1, 1, 1, 2, 1, 1, 1, 1}), 0.0);
}

TEST(MeanShiftTest, ClippingRemovesOutliersAndKeepsSteps) {
  std::vector<double> x = Noisy(24, 200, 1.0, {{120, 10.0}});
  x[50] += 40;
  x[51] += 35;
  x[160] -= 30;
  const double sigma = DifferenceSigma(x);
  const std::vector<double> clipped = ClipOutliers(x, 3.0, sigma);
  ASSERT_EQ(clipped.size(), x.size());
  EXPECT_LT(clipped[50], 100 + 6 * sigma);
  EXPECT_LT(clipped[51], 100 + 6 * sigma);
  EXPECT_GT(clipped[160], 110 - 6 * sigma);
  EXPECT_DOUBLE_EQ(clipped[119], x[119]);  // both sides of the step are untouched
  EXPECT_DOUBLE_EQ(clipped[120], x[120]);
  // Unclipped, the two outliers are a segment of their own; clipped, only the step is left.
  EXPECT_EQ(MeanShiftChangePoints(x, {3.0, 2, 0.0}), (std::vector<std::size_t>{50, 52, 120}));
  EXPECT_EQ(MeanShiftChangePoints(x, {3.0, 2, 3.0}), (std::vector<std::size_t>{120}));
}

TEST(MeanShiftTest, ShortAndConstantSeries) {
  EXPECT_TRUE(MeanShiftChangePoints(std::vector<double>{}, {}).empty());
  EXPECT_TRUE(MeanShiftChangePoints(std::vector<double>{1, 2, 3}, {}).empty());
  EXPECT_TRUE(MeanShiftChangePoints(std::vector<double>(50, 7.0), {}).empty());
}

}  // namespace
}  // namespace perfwarden::stats
