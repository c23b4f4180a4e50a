// SPDX-License-Identifier: Apache-2.0
// Effect sizes: relative change (compare.py's zero rule), Hodges-Lehmann, Cohen's d, geomean.
#include "stats/effect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace perfwarden::stats {
namespace {

TEST(RelativeChangeTest, PlainAndZeroBase) {
  EXPECT_NEAR(RelativeChange(100, 110), 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(RelativeChange(100, 50), -0.5);
  EXPECT_EQ(RelativeChange(0, 0), 0);
  // compare.py: old == 0 and new != 0 -> (new - old) / ((old + new) / 2)
  EXPECT_DOUBLE_EQ(RelativeChange(0, 4), 2.0);
  EXPECT_TRUE(std::isnan(RelativeChange(NAN, 1)));
}

TEST(RelativeChangeTest, OfMedians) {
  std::vector<double> base{10, 11, 9, 100};   // median 10.5
  std::vector<double> contender{21, 20, 22};  // median 21
  EXPECT_DOUBLE_EQ(MedianRelativeChange(base, contender), 1.0);
  EXPECT_TRUE(std::isnan(MedianRelativeChange({}, contender)));
}

TEST(HodgesLehmannTest, MedianOfPairwiseDifferences) {
  // Differences y - x: {1-1, 1-2, 5-1, 5-2} = {0, -1, 4, 3} -> median 1.5.
  std::vector<double> x{1, 2};
  std::vector<double> y{1, 5};
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(x, y), 1.5);
  // A pure shift is recovered exactly.
  std::vector<double> a{3.0, 1.0, 4.0, 1.5, 9.0};
  std::vector<double> b;
  for (double v : a) b.push_back(v + 2.5);
  EXPECT_DOUBLE_EQ(HodgesLehmannShift(a, b), 2.5);
  EXPECT_TRUE(std::isnan(HodgesLehmannShift({}, b)));
}

TEST(CohensDTest, PooledStandardDeviation) {
  // x: mean 2, var 1; y: mean 4, var 1 -> d = 2.
  std::vector<double> x{1, 2, 3};
  std::vector<double> y{3, 4, 5};
  EXPECT_NEAR(CohensD(x, y), 2.0, 1e-15);
  EXPECT_NEAR(CohensD(y, x), -2.0, 1e-15);
  std::vector<double> c1{5, 5, 5};
  std::vector<double> c2{6, 6};
  EXPECT_EQ(CohensD(c1, c2), INFINITY);
  EXPECT_TRUE(std::isnan(CohensD(c1, c1)));
  EXPECT_TRUE(std::isnan(CohensD(std::vector<double>{1}, y)));
}

TEST(GeometricMeanTest, PositiveOnly) {
  std::vector<double> x{1, 4, 16};
  EXPECT_NEAR(GeometricMean(x), 4.0, 1e-15);
  std::vector<double> bad{1, 0};
  EXPECT_TRUE(std::isnan(GeometricMean(bad)));
  EXPECT_TRUE(std::isnan(GeometricMean({})));
}

}  // namespace
}  // namespace perfwarden::stats
