// SPDX-License-Identifier: Apache-2.0
// Distribution wrappers against every row of t_quantiles.csv (exact mpmath values, not SciPy's:
// scipy 1.10 t.ppf is off by up to 2e-9), plus the NaN-instead-of-exception contract.
#include "stats/distributions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::ReadGoldenCsv;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(DistributionsOracle, EveryRowOfTQuantilesCsv) {
  const auto table = ReadGoldenCsv("t_quantiles.csv");
  ASSERT_EQ(table.rows.size(), 265u);
  double worst = 0;
  int checked = 0;
  for (const auto& row : table.rows) {
    SCOPED_TRACE(row.Where() + " df=" + row.Str("df") + " prob=" + row.Str("prob") +
                 " stat=" + row.Str("stat"));
    const std::string& function = row.Str("function");
    double actual = kNaN;
    if (function == "t_ppf") {
      actual = StudentTQuantile(row.Num("prob"), row.Num("df"));
    } else if (function == "t_two_sided_p") {
      actual = StudentTTwoSidedP(row.Num("stat"), row.Num("df"));
    } else if (function == "norm_ppf") {
      actual = NormalQuantile(row.Num("prob"));
    } else if (function == "norm_two_sided_p") {
      actual = NormalTwoSidedP(row.Num("stat"));
    } else {
      ADD_FAILURE() << "unknown function " << function;
      continue;
    }
    ++checked;
    const double expected = row.Num("value");  // mpmath, 50 digits
    if (expected != 0) worst = std::max(worst, std::fabs(actual - expected) / std::fabs(expected));
    // README: 1e-12 relative; exact zeros (the median of t) compared with an absolute 1e-14.
    EXPECT_TRUE(NearRel(actual, expected, 1e-12, 1e-14));
  }
  EXPECT_EQ(checked, 265);
  std::cout << "[ worst rel error ] t_quantiles.csv: " << worst << "\n";
}

TEST(StudentT, InvalidArgumentsAreNaN) {
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.5, kNaN)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.5, 0.0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(0.5, -3.0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(-0.1, 5.0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(1.1, 5.0)));
  EXPECT_TRUE(std::isnan(StudentTQuantile(kNaN, 5.0)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(kNaN, 5.0)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(1.0, kNaN)));
  EXPECT_TRUE(std::isnan(StudentTTwoSidedP(1.0, 0.0)));
  EXPECT_TRUE(std::isnan(StudentTCdf(1.0, kNaN)));
  EXPECT_TRUE(std::isnan(StudentTCdf(kNaN, 3.0)));
  EXPECT_TRUE(std::isnan(StudentTSf(1.0, -1.0)));
  EXPECT_TRUE(std::isnan(StudentTSf(kNaN, 3.0)));
}

TEST(StudentT, BoundariesAndInfinities) {
  EXPECT_EQ(StudentTQuantile(0.0, 5.0), -kInf);
  EXPECT_EQ(StudentTQuantile(1.0, 5.0), kInf);
  EXPECT_EQ(StudentTCdf(-kInf, 5.0), 0.0);
  EXPECT_EQ(StudentTCdf(kInf, 5.0), 1.0);
  EXPECT_EQ(StudentTSf(kInf, 5.0), 0.0);
  EXPECT_EQ(StudentTTwoSidedP(kInf, 5.0), 0.0);
  EXPECT_EQ(StudentTTwoSidedP(0.0, 5.0), 1.0);
  // Infinite df is the normal distribution.
  EXPECT_EQ(StudentTQuantile(0.975, kInf), NormalQuantile(0.975));
  EXPECT_EQ(StudentTCdf(1.3, kInf), NormalCdf(1.3));
}

TEST(StudentT, TailsAreComplementsAndSymmetric) {
  for (double df : {1.0, 2.5, 7.53, 30.0, 1e6}) {
    for (double t : {-40.0, -2.0, -0.3, 0.0, 0.7, 3.0}) {
      SCOPED_TRACE("df=" + std::to_string(df) + " t=" + std::to_string(t));
      EXPECT_TRUE(NearRel(StudentTCdf(t, df) + StudentTSf(t, df), 1.0, 1e-15));
      EXPECT_EQ(StudentTSf(t, df), StudentTCdf(-t, df));
      EXPECT_TRUE(NearRel(StudentTTwoSidedP(t, df), 2 * StudentTSf(std::fabs(t), df), 1e-15));
    }
    // Far upper tail: computed directly, not as 1 - cdf (which would be 0). For df 1e6 the
    // tail at 40 is below the smallest double (~1e-350).
    if (df <= 30) {
      EXPECT_GT(StudentTSf(40.0, df), 0.0);
    }
    EXPECT_TRUE(NearRel(StudentTCdf(StudentTQuantile(0.01, df), df), 0.01, 1e-12));
  }
}

TEST(Normal, InvalidArgumentsAndBoundaries) {
  EXPECT_TRUE(std::isnan(NormalQuantile(-0.1)));
  EXPECT_TRUE(std::isnan(NormalQuantile(1.1)));
  EXPECT_TRUE(std::isnan(NormalQuantile(kNaN)));
  EXPECT_TRUE(std::isnan(NormalCdf(kNaN)));
  EXPECT_TRUE(std::isnan(NormalSf(kNaN)));
  EXPECT_TRUE(std::isnan(NormalTwoSidedP(kNaN)));
  EXPECT_EQ(NormalQuantile(0.0), -kInf);
  EXPECT_EQ(NormalQuantile(1.0), kInf);
  EXPECT_EQ(NormalCdf(-kInf), 0.0);
  EXPECT_EQ(NormalSf(-kInf), 1.0);
  EXPECT_EQ(NormalTwoSidedP(kInf), 0.0);
  EXPECT_EQ(NormalTwoSidedP(0.0), 1.0);
  EXPECT_EQ(NormalTwoSidedP(-1.5), NormalTwoSidedP(1.5));
  EXPECT_GT(NormalSf(37.0), 0.0);
}

TEST(NonCentralT, ZeroNoncentralityIsCentralTAndInvalidIsNaN) {
  for (double t : {-2.0, 0.5, 3.0}) {
    EXPECT_TRUE(NearRel(NonCentralTCdf(t, 9.0, 0.0), StudentTCdf(t, 9.0), 1e-12));
    EXPECT_TRUE(NearRel(NonCentralTSf(t, 9.0, 0.0), StudentTSf(t, 9.0), 1e-12));
  }
  EXPECT_TRUE(std::isnan(NonCentralTCdf(1.0, kNaN, 1.0)));
  EXPECT_TRUE(std::isnan(NonCentralTCdf(1.0, 5.0, kNaN)));
  EXPECT_TRUE(std::isnan(NonCentralTSf(kNaN, 5.0, 1.0)));
  EXPECT_EQ(NonCentralTCdf(kInf, 5.0, 1.0), 1.0);
  EXPECT_EQ(NonCentralTSf(kInf, 5.0, 1.0), 0.0);
}

// Binomial cdf against sums of exact terms, and its boundaries.
TEST(Binomial, CdfMatchesSummedTermsAndBoundaries) {
  // n = 10, p = 0.3: P(X <= k) summed from C(10, j) 0.3^j 0.7^(10 - j).
  double c = 1, sum = 0;
  for (int k = 0; k <= 10; ++k) {
    sum += c * std::pow(0.3, k) * std::pow(0.7, 10 - k);
    c = c * (10 - k) / (k + 1);
    EXPECT_TRUE(NearRel(BinomialCdf(k, 10, 0.3), sum, 1e-13)) << k;
  }
  EXPECT_EQ(BinomialCdf(-1, 10, 0.3), 0);
  EXPECT_EQ(BinomialCdf(10, 10, 0.3), 1);
  EXPECT_EQ(BinomialCdf(2.7, 4, 0.5), BinomialCdf(2, 4, 0.5));
  EXPECT_TRUE(std::isnan(BinomialCdf(1, 4, 1.5)));
  EXPECT_TRUE(std::isnan(BinomialCdf(1, -1, 0.5)));
  EXPECT_TRUE(std::isnan(BinomialCdf(NAN, 4, 0.5)));
}

}  // namespace
}  // namespace perfwarden::stats
