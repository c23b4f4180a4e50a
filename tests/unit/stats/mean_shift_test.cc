// The history detector's second candidate source (stats/mean_shift.h): PELT's pruned search
// equals the exhaustive optimal partitioning under the same penalised cost (an independent
// O(n^2) implementation below), the robust scale ignores steps, clipping removes outliers
// but keeps steps in place, and planted steps are found where they are.
#include "stats/mean_shift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/descriptive.h"

namespace perfgate::stats {
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

// Optimal partitioning (Jackson et al. 2005) by exhaustive dynamic programming, straight from
// the definition: no prefix sums, no pruning.
std::vector<std::size_t> Exhaustive(const std::vector<double>& x, double sigma, double beta,
                                    std::size_t m) {
  const std::size_t n = x.size();
  auto cost = [&](std::size_t s, std::size_t t) {
    double mean = 0;
    for (std::size_t i = s; i < t; ++i) mean += x[i];
    mean /= static_cast<double>(t - s);
    double c = 0;
    for (std::size_t i = s; i < t; ++i) c += (x[i] - mean) * (x[i] - mean);
    return c / (sigma * sigma);
  };
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

TEST(MeanShiftTest, PeltEqualsExhaustiveOptimalPartitioning) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const std::vector<double> x =
        Noisy(seed, 150 + 10 * seed, 1.0, {{40, 2.0}, {70, -1.5}, {100 + seed, 0.8}});
    for (double penalty : {1.0, 3.0}) {
      for (std::size_t m : {1u, 3u}) {
        MeanShiftOptions options{penalty, m, 0.0};
        const double beta = penalty * std::log(static_cast<double>(x.size()));
        EXPECT_EQ(MeanShiftChangePoints(x, options), Exhaustive(x, DifferenceSigma(x), beta, m))
            << "seed " << seed << " penalty " << penalty << " min_segment " << m;
      }
    }
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
  // Unclipped, the outliers are segments of their own; clipped, only the step is left.
  EXPECT_EQ(MeanShiftChangePoints(x, {3.0, 2, 0.0}),
            (std::vector<std::size_t>{50, 52, 120, 160, 162}));
  EXPECT_EQ(MeanShiftChangePoints(x, {3.0, 2, 3.0}), (std::vector<std::size_t>{120}));
}

TEST(MeanShiftTest, ShortAndConstantSeries) {
  EXPECT_TRUE(MeanShiftChangePoints(std::vector<double>{}, {}).empty());
  EXPECT_TRUE(MeanShiftChangePoints(std::vector<double>{1, 2, 3}, {}).empty());
  EXPECT_TRUE(MeanShiftChangePoints(std::vector<double>(50, 7.0), {}).empty());
}

}  // namespace
}  // namespace perfgate::stats
