// SPDX-License-Identifier: Apache-2.0
// Bootstrap: determinism, the resampled-median shortcut against a naive resampler, the
// percentile step against NumPy's quantiles, and coverage of the interval by simulation.
#include "stats/bootstrap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include "stats/descriptive.h"
#include "stats/resampled_median.h"

namespace perfwarden::stats {
namespace {

std::vector<double> Normal(Rng& rng, int n, double mean, double sd) {
  std::vector<double> out;
  while (static_cast<int>(out.size()) < n) {
    double u1 = rng.Uniform();
    double u2 = rng.Uniform();
    if (u1 <= 0) continue;
    double r = std::sqrt(-2 * std::log(u1));
    out.push_back(mean + sd * r * std::cos(2 * M_PI * u2));
  }
  return out;
}

TEST(RngTest, DeterministicAndInRange) {
  Rng a(42);
  Rng b(42);
  Rng c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    uint32_t k = a.Below(7);
    ASSERT_LT(k, 7u);
    ++counts[k];
  }
  // Each bucket expects 10000; 5 sigma is about 450.
  for (int k : counts) EXPECT_NEAR(k, 10000, 450);
  for (int i = 0; i < 1000; ++i) {
    double u = a.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(RngTest, DerivedSeedsDependOnKey) {
  std::string_view k1 = "BM_Sort/1024";
  std::string_view k2 = "BM_Sort/2048";
  EXPECT_EQ(DeriveSeed(1, k1), DeriveSeed(1, k1));
  EXPECT_NE(DeriveSeed(1, k1), DeriveSeed(1, k2));
  EXPECT_NE(DeriveSeed(1, k1), DeriveSeed(2, k1));
}

// The tabulated distribution of a resample's median is exact: enumerate every one of the n^n
// resamples of small samples (odd and even sizes, with ties) and compare probabilities.
TEST(ResampledMedianTest, ExactAgainstEnumeration) {
  const std::vector<std::vector<double>> samples = {{5.0},
                                                    {1.0, 2.0},
                                                    {1.0, 2.0, 4.0},
                                                    {1.0, 2.0, 2.0, 7.0},
                                                    {0.5, 1.0, 3.0, 3.5, 9.0},
                                                    {1.0, 1.5, 2.0, 4.0, 8.0, 16.0},
                                                    {2.0, 3.0, 5.0, 7.0, 11.0, 13.0, 17.0}};
  for (const auto& sample : samples) {
    const int n = static_cast<int>(sample.size());
    std::map<double, double> expected;
    std::vector<int> index(n, 0);
    const double weight = std::pow(static_cast<double>(n), -n);
    for (;;) {
      std::vector<double> resample;
      for (int i : index) resample.push_back(sample[i]);
      expected[Median(resample)] += weight;
      int k = 0;
      while (k < n && ++index[k] == n) index[k++] = 0;
      if (k == n) break;
    }
    ResampledMedian median(sample);
    std::map<double, double> actual;
    for (const auto& [value, probability] : median.Distribution()) actual[value] += probability;
    ASSERT_EQ(actual.size(), expected.size()) << "n=" << n;
    for (const auto& [value, probability] : expected) {
      EXPECT_NEAR(actual[value], probability, 1e-12) << "n=" << n << " median " << value;
    }
  }
}

// Draws follow the distribution (chi-square), and above the table's size limit the counting
// fallback agrees with a naive resampler on the same index stream.
TEST(ResampledMedianTest, DrawsAndFallback) {
  Rng data_rng(11);
  std::vector<double> sample = Normal(data_rng, 30, 100, 5);
  std::sort(sample.begin(), sample.end());
  ResampledMedian median(sample);
  auto cells = median.Distribution();
  std::map<double, double> probability;
  for (const auto& [value, p] : cells) probability[value] += p;
  std::map<double, int> seen;
  Rng rng(5);
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) ++seen[median.Draw(rng)];
  double chi2 = 0;
  int bins = 0;
  for (const auto& [value, p] : probability) {
    if (p * draws < 20) continue;
    const double e = p * draws;
    chi2 += (seen[value] - e) * (seen[value] - e) / e;
    ++bins;
  }
  // Mean bins, standard deviation sqrt(2 bins); 6 sigma would only fail on a real bias.
  EXPECT_LT(chi2, bins + 6 * std::sqrt(2.0 * bins)) << bins << " bins";

  std::vector<double> big = Normal(data_rng, ResampledMedian::kExactMaxSize + 1, 100, 5);
  std::sort(big.begin(), big.end());
  ResampledMedian fallback(big);
  EXPECT_TRUE(fallback.Distribution().empty());
  Rng a(9);
  Rng b(9);
  for (int r = 0; r < 20; ++r) {
    std::vector<double> resample;
    for (size_t i = 0; i < big.size(); ++i) {
      resample.push_back(big[b.Below(static_cast<uint32_t>(big.size()))]);
    }
    EXPECT_DOUBLE_EQ(fallback.Draw(a), Median(resample));
  }
}

TEST(BootstrapTest, DeterministicForSeed) {
  std::vector<double> base{10, 11, 12, 10.5, 11.5};
  std::vector<double> contender{12, 13, 12.5, 14, 13.5};
  BootstrapOptions options;
  Interval a = BootstrapMedianChangeCi(base, contender, options);
  Interval b = BootstrapMedianChangeCi(base, contender, options);
  EXPECT_EQ(a.lower, b.lower);
  EXPECT_EQ(a.upper, b.upper);
  EXPECT_LE(a.lower, 13.0 / 11.0 - 1);
  EXPECT_GE(a.upper, 13.0 / 11.0 - 1);
}

TEST(BootstrapTest, EdgeCases) {
  std::vector<double> x{1, 2, 3};
  EXPECT_TRUE(BootstrapMedianChanges({}, x, 100, 1).empty());
  EXPECT_TRUE(BootstrapMedianChanges(x, {}, 100, 1).empty());
  Interval empty = PercentileInterval({}, 0.95);
  EXPECT_TRUE(std::isnan(empty.lower));
  EXPECT_TRUE(std::isnan(empty.upper));
  // Constant samples: every replicate is the same change.
  std::vector<double> c1{4, 4, 4};
  std::vector<double> c2{5, 5, 5, 5};
  Interval ci = BootstrapMedianChangeCi(c1, c2, {});
  EXPECT_DOUBLE_EQ(ci.lower, 0.25);
  EXPECT_DOUBLE_EQ(ci.upper, 0.25);
}

// Positions between two sides: the same replicates for a seed, NaN where the two sides' resampled
// medians tie, and a probe at the high side's level sits near 1 (at the low side's, near 0).
TEST(BootstrapTest, MedianPositions) {
  std::vector<double> low{10, 10.2, 9.9, 10.1, 10};
  std::vector<double> high{12, 12.1, 11.9, 12.2, 12};
  std::vector<double> x{11.9, 12.1, 12, 12, 11.8};
  EXPECT_TRUE(BootstrapMedianPositions({}, high, x, 100, 1).empty());
  EXPECT_TRUE(BootstrapMedianPositions(low, high, {}, 100, 1).empty());
  const auto a = BootstrapMedianPositions(low, high, x, 500, 7);
  ASSERT_EQ(a.size(), 500u);
  EXPECT_EQ(a, BootstrapMedianPositions(low, high, x, 500, 7));
  const Interval ci = PercentileInterval(a, 0.98);
  EXPECT_GT(ci.lower, 0.8);
  EXPECT_LT(ci.upper, 1.2);
  EXPECT_LT(PercentileInterval(BootstrapMedianPositions(low, high, low, 500, 8), 0.98).upper, 0.2);
  // The replicate's ends tie whenever both are constant and equal.
  std::vector<double> flat{5, 5, 5};
  for (const double p : BootstrapMedianPositions(flat, flat, x, 20, 9)) EXPECT_TRUE(std::isnan(p));
}

// The percentile step is NumPy's linear quantile: check it on quantiles.csv's n=10 vector.
// Means of whole-block resamples: deterministic, each a mean of drawn values, and spread as the
// bootstrap says (mean of the replicates ~ mean of x, variance ~ population variance / n).
TEST(BootstrapTest, MeansOfResamples) {
  EXPECT_TRUE(BootstrapMeans(std::vector<double>{}, 100, 1).empty());
  EXPECT_TRUE(BootstrapMeans(std::vector<double>{1.0}, 0, 1).empty());
  const auto constant = BootstrapMeans(std::vector<double>{2.5, 2.5, 2.5}, 50, 1);
  ASSERT_EQ(constant.size(), 50u);
  for (double v : constant) EXPECT_EQ(v, 2.5);
  // Two values: a replicate of n = 2 is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4.
  const auto two = BootstrapMeans(std::vector<double>{0.0, 1.0}, 4000, 9);
  std::map<double, int> counts;
  for (double v : two) ++counts[v];
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_NEAR(counts[0.5] / 4000.0, 0.5, 4 * std::sqrt(0.25 / 4000));
  EXPECT_NEAR(counts[0.0] / 4000.0, 0.25, 4 * std::sqrt(0.1875 / 4000));

  Rng rng(11);
  const std::vector<double> x = Normal(rng, 20, 3.0, 2.0);
  const auto a = BootstrapMeans(x, 5000, 77);
  EXPECT_EQ(a, BootstrapMeans(x, 5000, 77));
  EXPECT_NE(a, BootstrapMeans(x, 5000, 78));
  const double population_var = Variance(x, 0);
  EXPECT_NEAR(Mean(a), Mean(x), 4 * std::sqrt(population_var / 20 / 5000));
  EXPECT_NEAR(Variance(a) / (population_var / 20), 1.0, 0.1);
}

TEST(BootstrapTest, PercentileStepIsNumpyLinear) {
  std::vector<double> x{0.3, 1.7, -2.0, 4.4, 0.0, 9.1, 2.2, 2.2, -0.5, 3.3};
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  Interval ci = PercentileInterval(x, 0.9);
  EXPECT_DOUBLE_EQ(ci.lower, QuantileSorted(sorted, 0.05));
  EXPECT_DOUBLE_EQ(ci.upper, QuantileSorted(sorted, 0.95));
}

// Coverage: the 90% interval of the change of medians covers the true change in roughly 90%
// of repeated experiments (percentile bootstrap of a median is approximate for small n, so the
// band is wide; a broken resampler gives coverage far outside it).
TEST(BootstrapTest, CoverageBySimulation) {
  Rng rng(2024);
  const int trials = 300;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> base = Normal(rng, 30, 100, 3);
    std::vector<double> contender = Normal(rng, 30, 110, 3);
    Interval ci = BootstrapMedianChangeCi(base, contender, {500, 0.9, rng.Next()});
    if (ci.lower <= 0.1 && 0.1 <= ci.upper) ++covered;
  }
  double coverage = static_cast<double>(covered) / trials;
  EXPECT_GT(coverage, 0.82);
  EXPECT_LT(coverage, 0.97);
}

}  // namespace
}  // namespace perfwarden::stats
