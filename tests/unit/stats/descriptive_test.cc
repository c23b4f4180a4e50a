// SPDX-License-Identifier: Apache-2.0
// Descriptive statistics against NumPy: every row of quantiles.csv (13 methods), the t
// confidence intervals of ci.csv, and the empty / one-sample / constant / non-finite edges.
#include "stats/descriptive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::ReadGoldenCsv;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Bitwise-equal except that NaN matches NaN: the quantiles replicate NumPy's arithmetic
// operation for operation, so any difference at all is a transcription error.
::testing::AssertionResult SameDouble(double actual, double expected) {
  if ((std::isnan(actual) && std::isnan(expected)) || actual == expected) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected " << expected << ", got " << actual;
}

TEST(QuantileOracle, EveryRowOfQuantilesCsv) {
  const auto table = ReadGoldenCsv("quantiles.csv");
  ASSERT_EQ(table.rows.size(), 351u);
  for (const auto& row : table.rows) {
    SCOPED_TRACE(row.Where() + " method=" + row.Str("numpy_method") + " q=" + row.Str("q"));
    const std::vector<double> x = row.Vec("x");
    ASSERT_EQ(x.size(), static_cast<size_t>(row.Num("n")));
    const auto method = ParseQuantileMethod(row.Str("numpy_method"));
    ASSERT_TRUE(method.has_value());
    const double q = row.Num("q");
    const double expected = row.Num("quantile");
    EXPECT_TRUE(SameDouble(Quantile(x, q, *method), expected));
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_TRUE(SameDouble(QuantileSorted(sorted, q, *method), expected));
  }
}

TEST(QuantileOracle, CoversAllThirteenMethods) {
  const auto table = ReadGoldenCsv("quantiles.csv");
  std::vector<std::string> names;
  for (const auto& row : table.rows) names.push_back(row.Str("numpy_method"));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  EXPECT_EQ(names.size(), 13u);
}

TEST(ParseQuantileMethod, KnowsNumpyNamesOnly) {
  EXPECT_EQ(ParseQuantileMethod("linear"), QuantileMethod::kLinear);
  EXPECT_EQ(ParseQuantileMethod("inverted_cdf"), QuantileMethod::kInvertedCdf);
  EXPECT_EQ(ParseQuantileMethod("averaged_inverted_cdf"), QuantileMethod::kAveragedInvertedCdf);
  EXPECT_EQ(ParseQuantileMethod("closest_observation"), QuantileMethod::kClosestObservation);
  EXPECT_EQ(ParseQuantileMethod("interpolated_inverted_cdf"),
            QuantileMethod::kInterpolatedInvertedCdf);
  EXPECT_EQ(ParseQuantileMethod("hazen"), QuantileMethod::kHazen);
  EXPECT_EQ(ParseQuantileMethod("weibull"), QuantileMethod::kWeibull);
  EXPECT_EQ(ParseQuantileMethod("median_unbiased"), QuantileMethod::kMedianUnbiased);
  EXPECT_EQ(ParseQuantileMethod("normal_unbiased"), QuantileMethod::kNormalUnbiased);
  EXPECT_EQ(ParseQuantileMethod("lower"), QuantileMethod::kLower);
  EXPECT_EQ(ParseQuantileMethod("higher"), QuantileMethod::kHigher);
  EXPECT_EQ(ParseQuantileMethod("midpoint"), QuantileMethod::kMidpoint);
  EXPECT_EQ(ParseQuantileMethod("nearest"), QuantileMethod::kNearest);
  EXPECT_EQ(ParseQuantileMethod("Linear"), std::nullopt);
  EXPECT_EQ(ParseQuantileMethod("interpolation"), std::nullopt);
  EXPECT_EQ(ParseQuantileMethod(""), std::nullopt);
}

constexpr QuantileMethod kAllMethods[] = {
    QuantileMethod::kInvertedCdf,
    QuantileMethod::kAveragedInvertedCdf,
    QuantileMethod::kClosestObservation,
    QuantileMethod::kInterpolatedInvertedCdf,
    QuantileMethod::kHazen,
    QuantileMethod::kWeibull,
    QuantileMethod::kLinear,
    QuantileMethod::kMedianUnbiased,
    QuantileMethod::kNormalUnbiased,
    QuantileMethod::kLower,
    QuantileMethod::kHigher,
    QuantileMethod::kMidpoint,
    QuantileMethod::kNearest,
};

TEST(Quantile, EmptyOrQOutsideUnitIntervalIsNaN) {
  const std::vector<double> x = {1, 2, 3};
  for (QuantileMethod m : kAllMethods) {
    EXPECT_TRUE(std::isnan(Quantile({}, 0.5, m)));
    EXPECT_TRUE(std::isnan(QuantileSorted({}, 0.5, m)));
    EXPECT_TRUE(std::isnan(Quantile(x, -0.01, m)));
    EXPECT_TRUE(std::isnan(Quantile(x, 1.01, m)));
    EXPECT_TRUE(std::isnan(Quantile(x, kNaN, m)));
    EXPECT_TRUE(std::isnan(QuantileSorted(x, 2.0, m)));
  }
}

TEST(Quantile, OneSampleAndTiesAreThatValue) {
  const std::vector<double> one = {7.0};
  const std::vector<double> ties = {2.0, 5.0, 2.0, 2.0};  // np.quantile gives 2.0 for q <= 0.5
  for (QuantileMethod m : kAllMethods) {
    for (double q : {0.0, 0.3, 0.5, 1.0}) {
      EXPECT_EQ(Quantile(one, q, m), 7.0);
      EXPECT_EQ(Quantile(ties, q, m), q == 1.0 ? 5.0 : 2.0);
    }
  }
}

TEST(Quantile, NaNInSampleIsNaNAsInNumpy) {
  const std::vector<double> x = {1.0, kNaN, 3.0};
  const std::vector<double> sorted_nan_last = {1.0, 3.0, kNaN};
  for (QuantileMethod m : kAllMethods) {
    EXPECT_TRUE(std::isnan(Quantile(x, 0.0, m)));
    EXPECT_TRUE(std::isnan(QuantileSorted(sorted_nan_last, 0.0, m)));
  }
}

// Infinite values go through NumPy's _lerp unchanged, NaN artifacts (inf - inf) included;
// values from numpy 1.24.2 np.quantile(x, q, method=m), methods in kAllMethods order.
TEST(Quantile, InfiniteValuesMatchNumpyIncludingItsNaNs) {
  struct Case {
    std::vector<double> x;
    double q;
    std::vector<double> expected;
  };
  const std::vector<Case> cases = {
      {{1.0, kInf}, 0.0, {1, 1, 1, 1, 1, 1, kNaN, 1, 1, 1, 1, kNaN, 1}},
      {{1.0, kInf}, 0.3, {1, 1, 1, 1, kInf, 1, kInf, kInf, kInf, 1, kInf, kNaN, 1}},
      {{1.0, kInf}, 0.5, {1, kNaN, 1, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 1, kInf, kNaN, 1}},
      {{1.0, kInf},
       1.0,
       {kInf, kNaN, kInf, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kInf, kInf, kNaN, kInf}},
      {{-kInf, 1.0, 2.0},
       0.0,
       {-kInf, kNaN, -kInf, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, -kInf, -kInf, kNaN, -kInf}},
      {{-kInf, 1.0, 2.0},
       0.3,
       {-kInf, kNaN, -kInf, kNaN, kNaN, kNaN, -kInf, kNaN, kNaN, -kInf, 1, -kInf, 1}},
      {{-kInf, 1.0, 2.0}, 0.5, {1, kNaN, -kInf, -kInf, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
      {{-kInf, 1.0, 2.0}, 1.0, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
  };
  for (const Case& c : cases) {
    for (size_t i = 0; i < std::size(kAllMethods); ++i) {
      SCOPED_TRACE("q=" + std::to_string(c.q) + " method #" + std::to_string(i));
      EXPECT_TRUE(SameDouble(Quantile(c.x, c.q, kAllMethods[i]), c.expected[i]));
    }
  }
}

TEST(Quantile, DefaultIsLinear) {
  const std::vector<double> x = {3.0, 1.0, 4.0, 1.5, 9.0};
  EXPECT_EQ(Quantile(x, 0.25), Quantile(x, 0.25, QuantileMethod::kLinear));
  EXPECT_EQ(Quantile(x, 0.25), 1.5);
}

TEST(AllFinite, RejectsNaNAndInfinities) {
  EXPECT_TRUE(AllFinite({}));
  EXPECT_TRUE(AllFinite(std::vector<double>{1.0, -1e308, 0.0}));
  EXPECT_FALSE(AllFinite(std::vector<double>{1.0, kNaN}));
  EXPECT_FALSE(AllFinite(std::vector<double>{kInf, 1.0}));
  EXPECT_FALSE(AllFinite(std::vector<double>{-kInf}));
}

TEST(Mean, EmptyIsNaNOneIsItself) {
  EXPECT_TRUE(std::isnan(Mean({})));
  EXPECT_EQ(Mean(std::vector<double>{4.25}), 4.25);
}

TEST(Mean, KeepsDigitsOf1e9MagnitudeSamples) {
  // Exact mean of these doubles is 1000000000.2333333...; np.mean gives ...2333335.
  const std::vector<double> x = {1e9 + 0.1, 1e9 + 0.2, 1e9 + 0.4};
  EXPECT_EQ(Mean(x), 1000000000.2333333);
  // Cancellation that naive left-to-right summation gets wrong (it returns 0).
  const std::vector<double> y = {1e16, 1.0, -1e16, 1.0};
  EXPECT_EQ(Mean(y), 0.5);
}

TEST(Mean, NonFiniteValuesPropagate) {
  EXPECT_EQ(Mean(std::vector<double>{1.0, kInf}), kInf);
  EXPECT_EQ(Mean(std::vector<double>{-kInf, 1.0}), -kInf);
  EXPECT_TRUE(std::isnan(Mean(std::vector<double>{kInf, -kInf})));
  EXPECT_TRUE(std::isnan(Mean(std::vector<double>{1.0, kNaN})));
}

TEST(Variance, TooSmallIsNaN) {
  EXPECT_TRUE(std::isnan(Variance({})));
  EXPECT_TRUE(std::isnan(Variance(std::vector<double>{1.0})));
  EXPECT_TRUE(std::isnan(Variance(std::vector<double>{1.0, 2.0}, 2)));
  EXPECT_EQ(Variance(std::vector<double>{5.0}, 0), 0.0);
  EXPECT_TRUE(std::isnan(StdDev(std::vector<double>{1.0})));
}

TEST(Variance, ConstantSampleIsExactlyZero) {
  const std::vector<double> x = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
  EXPECT_EQ(Variance(x), 0.0);
  EXPECT_EQ(StdDev(x), 0.0);
  EXPECT_EQ(Variance(std::vector<double>{1e9 + 0.3, 1e9 + 0.3, 1e9 + 0.3}), 0.0);
}

TEST(Variance, Accurate1e9MagnitudeAndNearIdenticalSamples) {
  // Exact: 7/3 (np.var gives 2.3333333333333357).
  EXPECT_TRUE(NearRel(Variance(std::vector<double>{1e9 + 1, 1e9 + 2, 1e9 + 4}), 7.0 / 3, 1e-15));
  // Exact sample variance of these doubles (mpmath), spread 1e-6 around 1e3.
  const std::vector<double> near = {1000.000001, 1000.000002, 1000.000004};
  EXPECT_TRUE(NearRel(Variance(near), 2.3333333215511327e-12, 1e-12));
  EXPECT_TRUE(NearRel(Variance(std::vector<double>{1.0, 2.0, 3.0, 4.0}, 0), 1.25, 1e-15));
  EXPECT_TRUE(
      NearRel(StdDev(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7), 1e-15));
}

TEST(Variance, NonFiniteIsNaN) {
  EXPECT_TRUE(std::isnan(Variance(std::vector<double>{1.0, kInf})));
  EXPECT_TRUE(std::isnan(Variance(std::vector<double>{1.0, kNaN, 2.0})));
}

TEST(Cv, StdDevOverAbsMean) {
  EXPECT_TRUE(std::isnan(Cv({})));
  EXPECT_TRUE(std::isnan(Cv(std::vector<double>{3.0})));
  EXPECT_TRUE(std::isnan(Cv(std::vector<double>{-1.0, 1.0})));  // mean 0
  EXPECT_EQ(Cv(std::vector<double>{2.0, 2.0}), 0.0);
  EXPECT_TRUE(NearRel(Cv(std::vector<double>{-1.0, -3.0}), std::sqrt(2.0) / 2, 1e-15));
  EXPECT_TRUE(NearRel(Cv(std::vector<double>{1.0, 3.0}), std::sqrt(2.0) / 2, 1e-15));
}

TEST(Median, OddEvenTiesAndEdges) {
  EXPECT_TRUE(std::isnan(Median({})));
  EXPECT_EQ(Median(std::vector<double>{4.0}), 4.0);
  EXPECT_EQ(Median(std::vector<double>{3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(Median(std::vector<double>{4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(Median(std::vector<double>{3.0, 1.0, 2.0, 2.0}), 2.0);
  EXPECT_EQ(Median(std::vector<double>{5.0, 5.0, 5.0, 5.0}), 5.0);
  EXPECT_TRUE(std::isnan(Median(std::vector<double>{1.0, kNaN, 2.0})));
  EXPECT_EQ(Median(std::vector<double>{1.0, kInf, 2.0}), 2.0);
}

TEST(Mad, MedianOfAbsoluteDeviations) {
  EXPECT_TRUE(std::isnan(Mad({})));
  EXPECT_EQ(Mad(std::vector<double>{7.0}), 0.0);
  EXPECT_EQ(Mad(std::vector<double>{3.0, 3.0, 3.0}), 0.0);
  // scipy.stats.median_abs_deviation([1, 1, 2, 2, 4, 6, 9]) == 1.0
  const std::vector<double> x = {1, 1, 2, 2, 4, 6, 9};
  EXPECT_EQ(Mad(x), 1.0);
  EXPECT_EQ(Mad(x, 1.4826), 1.4826);
  // Even size: median 2.5, deviations {1.5, 0.5, 0.5, 97.5}, MAD 1.0.
  EXPECT_EQ(Mad(std::vector<double>{1, 2, 3, 100}), 1.0);
  EXPECT_TRUE(std::isnan(Mad(std::vector<double>{1.0, kNaN})));
}

TEST(MeanConfidenceIntervalOracle, EveryMeanRowOfCiCsv) {
  const auto table = ReadGoldenCsv("ci.csv");
  int rows = 0;
  double worst_of_width = 0;
  for (const auto& row : table.rows) {
    if (row.Str("kind") != "mean_t_ci") continue;
    ++rows;
    SCOPED_TRACE(row.Where() + " confidence=" + row.Str("confidence"));
    const TInterval ci = MeanConfidenceInterval(row.Vec("x"), row.Num("confidence"));
    const double width = row.Num("upper") - row.Num("lower");
    EXPECT_TRUE(NearRel(ci.estimate, row.Num("estimate"), 1e-15));
    EXPECT_TRUE(NearRel(ci.std_error, row.Num("std_error"), 1e-13));
    EXPECT_EQ(ci.df, row.Num("df"));
    EXPECT_TRUE(NearRel(ci.t_crit, row.Num("t_crit"), 1e-12));
    EXPECT_TRUE(NearRel(ci.lower, row.Num("lower"), 0, 1e-12 * width));
    EXPECT_TRUE(NearRel(ci.upper, row.Num("upper"), 0, 1e-12 * width));
    worst_of_width = std::max({worst_of_width, std::fabs(ci.lower - row.Num("lower")) / width,
                               std::fabs(ci.upper - row.Num("upper")) / width});
  }
  EXPECT_EQ(rows, 15);
  std::cout << "[ worst error / width ] ci.csv mean_t_ci bounds: " << worst_of_width << "\n";
}

TEST(MeanConfidenceInterval, InvalidInputIsAllNaN) {
  const std::vector<double> x = {1.0, 2.0, 3.0};
  for (const TInterval& ci :
       {MeanConfidenceInterval({}, 0.95), MeanConfidenceInterval(std::vector<double>{1.0}, 0.95),
        MeanConfidenceInterval(x, 0.0), MeanConfidenceInterval(x, 1.0),
        MeanConfidenceInterval(x, kNaN), MeanConfidenceInterval(x, 1.5)}) {
    EXPECT_TRUE(std::isnan(ci.estimate));
    EXPECT_TRUE(std::isnan(ci.lower));
    EXPECT_TRUE(std::isnan(ci.upper));
    EXPECT_TRUE(std::isnan(ci.std_error));
    EXPECT_TRUE(std::isnan(ci.df));
    EXPECT_TRUE(std::isnan(ci.t_crit));
  }
}

TEST(MeanConfidenceInterval, ConstantSampleIsAPoint) {
  const TInterval ci = MeanConfidenceInterval(std::vector<double>{2.5, 2.5, 2.5, 2.5}, 0.95);
  EXPECT_EQ(ci.estimate, 2.5);
  EXPECT_EQ(ci.lower, 2.5);
  EXPECT_EQ(ci.upper, 2.5);
  EXPECT_EQ(ci.std_error, 0.0);
  EXPECT_EQ(ci.df, 3.0);
  EXPECT_TRUE(NearRel(ci.t_crit, 3.1824463052837086, 1e-13));  // t_quantiles.csv (mpmath)
}

}  // namespace
}  // namespace perfwarden::stats
