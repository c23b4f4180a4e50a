// SPDX-License-Identifier: Apache-2.0
// The trimmed mean and its one-sample t-test. Oracles: values of Wilcox's trimci (Tukey &
// McLaughlin) computed with 40-digit mpmath 1.3 (t distribution by its regularized incomplete
// beta function) on four samples, wild values included; and, at trim 0, scipy.stats.ttest_rel
// 1.10 on every row of golden/paired.csv (the trimmed test is then the plain t-test).
#include "stats/trimmed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/paired_ttest.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;

constexpr double kRel = 1e-9;

struct TrimciCase {
  const char* name;
  std::vector<double> x;
  double mu;
  double confidence;
  size_t g;
  double estimate, se, winsorized_sd, t, df, p_two_sided, p_less, p_greater, lower, upper;
};

std::vector<double> TwentyTwo() {
  std::vector<double> x;
  for (int i = 0; i < 22; ++i) x.push_back(static_cast<double>((i * 37) % 23 - 11) / 500);
  return x;
}

TEST(TrimmedTTestOracle, MatchesTrimciComputedWithMpmath) {
  const std::vector<TrimciCase> cases = {
      {"ten, two wild values",
       {0.012, -0.004, 0.031, 0.002, -0.011, 0.45, 0.007, -0.38, 0.015, 0.001},
       0,
       0.95,
       2,
       0.0055,
       0.0043691539424515025,
       0.0082898867436305919,
       1.2588249515680804,
       5,
       0.26366781664839691,
       0.86816609167580154,
       0.13183390832419846,
       -0.0057312677615646249,
       0.016731267761564625},
      {"fifteen, one wild on each side",
       {1.2, 0.8, 1.1, 0.95, 1.05, 3.9, 1.0, 0.99, 1.02, -2.5, 1.01, 0.97, 1.03, 1.08, 0.92},
       0,
       0.95,
       3,
       1.0111111111111111,
       0.022447273120509274,
       0.052162748978101085,
       45.043828071361368,
       8,
       6.5160286711293863e-11,
       0.99999999996741986,
       3.2580143355646932e-11,
       0.95934760647115941,
       1.0628746157510628},
      {"seven against mu 0.05 at 90%",
       {0.05, 0.06, 0.049, 0.051, 0.2, 0.048, 0.052},
       0.05,
       0.90,
       1,
       0.0524,
       0.0030860669992418373,
       0.0048989794855663546,
       0.77768888380894234,
       4,
       0.48018428590960928,
       0.75990785704519536,
       0.24009214295480464,
       0.045820977985277562,
       0.058979022014722437},
      {"twenty-two, trim 0.2 cuts 4", TwentyTwo(), 0, 0.95, 4, 0.00028571428571428572,
       0.0040076231526642582, 0.011278451276813817, 0.071292702639554208, 13, 0.94424991944554869,
       0.52787504027722565, 0.47212495972277435, -0.0083722291602161766, 0.0089436577316447481},
  };
  for (const TrimciCase& c : cases) {
    SCOPED_TRACE(c.name);
    const TrimmedTTestResult r = TrimmedTTest(c.x, kPairedTrim, c.mu);
    EXPECT_EQ(r.n, c.x.size());
    EXPECT_EQ(r.g, c.g);
    EXPECT_TRUE(NearRel(r.estimate, c.estimate, kRel));
    EXPECT_TRUE(NearRel(TrimmedMean(c.x, kPairedTrim), c.estimate, kRel));
    EXPECT_TRUE(NearRel(r.std_error, c.se, kRel));
    EXPECT_TRUE(NearRel(r.winsorized_sd, c.winsorized_sd, kRel));
    EXPECT_TRUE(NearRel(r.t, c.t, kRel));
    EXPECT_EQ(r.df, c.df);
    EXPECT_TRUE(NearRel(r.p_two_sided, c.p_two_sided, kRel));
    EXPECT_TRUE(NearRel(r.p_less, c.p_less, kRel));
    EXPECT_TRUE(NearRel(r.p_greater, c.p_greater, kRel));
    const TInterval ci = TrimmedMeanInterval(c.x, kPairedTrim, c.confidence);
    EXPECT_TRUE(NearRel(ci.lower, c.lower, kRel));
    EXPECT_TRUE(NearRel(ci.upper, c.upper, kRel));
    EXPECT_EQ(ci.df, c.df);
  }
}

TEST(TrimmedTTestOracle, TrimZeroIsScipysTTestOnEveryGoldenRow) {
  const auto table = testing::ReadGoldenCsv("paired.csv");
  ASSERT_FALSE(table.rows.empty());
  for (const auto& row : table.rows) {
    const std::vector<double> x = row.Vec("x");
    const std::vector<double> y = row.Vec("y");
    std::vector<double> d;
    for (size_t i = 0; i < x.size(); ++i) d.push_back(y[i] - x[i]);
    const TrimmedTTestResult r = TrimmedTTest(d, 0);
    EXPECT_EQ(r.g, 0u);
    EXPECT_TRUE(NearRel(r.t, row.Num("t_rel"), 1e-10)) << row.Where();
    EXPECT_EQ(r.df, row.Num("df_rel")) << row.Where();
    EXPECT_TRUE(NearRel(r.p_two_sided, row.Num("p_rel"), 1e-10)) << row.Where();
  }
}

TEST(TrimmedTTest, WildValuesDoNotMoveIt) {
  // Ten calm values: the trimmed test of them and of them with two replaced by wild ones agree
  // on the estimate's side and stay significant; the plain t-test loses it.
  std::vector<double> calm = {0.021, 0.019, 0.020, 0.022, 0.018, 0.020, 0.021, 0.019, 0.020, 0.020};
  std::vector<double> wild = calm;
  wild[3] = 0.9;
  wild[7] = -0.9;
  EXPECT_LT(TrimmedTTest(calm, kPairedTrim).p_greater, 1e-6);
  EXPECT_LT(TrimmedTTest(wild, kPairedTrim).p_greater, 1e-6);
  EXPECT_GT(OneSampleTTest(wild).p_greater, 0.3);
  EXPECT_NEAR(TrimmedMean(wild, kPairedTrim), 0.02, 1e-3);
}

TEST(TrimmedTTest, EdgeCases) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(TrimmedMean({}, 0.2)));
  EXPECT_TRUE(std::isnan(TrimmedMean(std::vector<double>{1, 2}, 0.5)));
  EXPECT_TRUE(std::isnan(TrimmedMean(std::vector<double>{1, 2}, -0.1)));
  // Too few values for a degree of freedom.
  const TrimmedTTestResult one = TrimmedTTest(std::vector<double>{1.0}, 0.2);
  EXPECT_EQ(one.n, 1u);
  EXPECT_TRUE(std::isnan(one.t));
  EXPECT_TRUE(std::isnan(one.p_two_sided));
  // All equal: t is NaN at mu, infinite elsewhere, as the plain t-test.
  const std::vector<double> same(10, 0.5);
  EXPECT_TRUE(std::isnan(TrimmedTTest(same, 0.2, 0.5).t));
  EXPECT_EQ(TrimmedTTest(same, 0.2, 0.0).t, std::numeric_limits<double>::infinity());
  EXPECT_EQ(TrimmedTTest(same, 0.2, 0.0).p_greater, 0);
  // A NaN makes it NaN.
  std::vector<double> with_nan = {1, 2, 3, kNaN, 5};
  EXPECT_TRUE(std::isnan(TrimmedTTest(with_nan, 0.2).t));
  EXPECT_TRUE(std::isnan(TrimmedMeanInterval(with_nan, 0.2, 0.95).lower));
  EXPECT_TRUE(std::isnan(TrimmedMeanInterval(same, 0.2, 1.5).lower));
}

TEST(BootstrapTrimmedMeans, SeededAndCentredOnTheTrimmedMean) {
  const std::vector<double> x = {0.012, -0.004, 0.031, 0.002, -0.011,
                                 0.45,  0.007,  -0.38, 0.015, 0.001};
  const std::vector<double> a = BootstrapTrimmedMeans(x, kPairedTrim, 2000, 7);
  const std::vector<double> b = BootstrapTrimmedMeans(x, kPairedTrim, 2000, 7);
  ASSERT_EQ(a.size(), 2000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, BootstrapTrimmedMeans(x, kPairedTrim, 2000, 8));
  const Interval ci = PercentileInterval(a, 0.9);
  EXPECT_LT(ci.lower, TrimmedMean(x, kPairedTrim));
  EXPECT_GT(ci.upper, TrimmedMean(x, kPairedTrim));
  // The wild values stay out of most replicates: the interval is far narrower than theirs.
  EXPECT_LT(ci.upper - ci.lower, 0.2);
  EXPECT_TRUE(BootstrapTrimmedMeans({}, kPairedTrim, 10, 1).empty());
}

TEST(BootstrapTrimmedMeans, EachReplicateIsTheTrimmedMeanOfItsResample) {
  // Drawn as indices into the sorted values: the same draws, resampled and trimmed by hand.
  std::vector<double> x = {0.3, -0.2, 0.05, 0.9,   0.01, -0.7, 0.02,
                           0.0, 0.04, 0.1,  -0.05, 0.2,  0.15};
  std::sort(x.begin(), x.end());
  const std::vector<double> replicates = BootstrapTrimmedMeans(x, kPairedTrim, 300, 11);
  Rng rng(11);
  for (double replicate : replicates) {
    std::vector<double> resample;
    for (size_t i = 0; i < x.size(); ++i) {
      resample.push_back(x[rng.Below(static_cast<uint32_t>(x.size()))]);
    }
    EXPECT_NEAR(replicate, TrimmedMean(resample, kPairedTrim), 1e-15);
  }
}

}  // namespace
}  // namespace perfwarden::stats
