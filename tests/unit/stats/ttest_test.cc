// SPDX-License-Identifier: Apache-2.0
// Welch and Student t-tests against every row of welch.csv (exact mpmath values from the double
// inputs) and the Welch difference intervals of ci.csv, plus the degenerate cases.
#include "stats/ttest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::OracleRow;
using ::perfwarden::testing::ReadGoldenCsv;
using ::perfwarden::testing::WorstError;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The README allows 1e-10 (1e-6 for the near-identical rows, where a naive mean difference
// cancels); the mean difference is computed in double-double, so every row meets 1e-12.
constexpr double kRel = 1e-12;

void Check(WorstError& worst, double actual, const OracleRow& row, const std::string& column,
           double rel = kRel) {
  const double expected = row.Num(column);
  worst.Add(actual, expected);
  EXPECT_TRUE(NearRel(actual, expected, rel)) << column;
}

TEST(WelchOracle, EveryRowOfWelchCsv) {
  const auto table = ReadGoldenCsv("welch.csv");
  ASSERT_EQ(table.rows.size(), 22u);
  WorstError worst("welch.csv");
  for (const auto& row : table.rows) {
    SCOPED_TRACE(row.Where());
    const std::vector<double> x = row.Vec("x");
    const std::vector<double> y = row.Vec("y");
    ASSERT_EQ(x.size(), static_cast<size_t>(row.Num("n1")));
    ASSERT_EQ(y.size(), static_cast<size_t>(row.Num("n2")));

    const TTestResult w = WelchTTest(x, y);
    Check(worst, w.mean_x, row, "mean_x");
    Check(worst, w.mean_y, row, "mean_y");
    Check(worst, w.var_x, row, "var_x_ddof1");
    Check(worst, w.var_y, row, "var_y_ddof1");
    Check(worst, w.t, row, "welch_t");
    Check(worst, w.df, row, "welch_df");
    Check(worst, w.p_two_sided, row, "welch_p_two_sided");
    Check(worst, w.p_less, row, "welch_p_less");
    Check(worst, w.p_greater, row, "welch_p_greater");
    EXPECT_TRUE(NearRel(w.PValue(Alternative::kTwoSided), w.p_two_sided, 0));
    EXPECT_TRUE(NearRel(w.PValue(Alternative::kLess), w.p_less, 0));
    EXPECT_TRUE(NearRel(w.PValue(Alternative::kGreater), w.p_greater, 0));

    const TTestResult s = StudentTTest(x, y);
    Check(worst, s.t, row, "student_t");
    Check(worst, s.df, row, "student_df");
    Check(worst, s.p_two_sided, row, "student_p_two_sided");
    Check(worst, s.mean_x, row, "mean_x");
    Check(worst, s.var_y, row, "var_y_ddof1");
  }
}

TEST(WelchOracle, UndefinedRowsAreAsScipySays) {
  // Spelled out as well, so that the CSV's meaning for both-constant samples is on record.
  const std::vector<double> three = {3, 3, 3};
  const std::vector<double> four = {4, 4, 4};
  const TTestResult equal = WelchTTest(three, three);
  EXPECT_TRUE(std::isnan(equal.t));
  EXPECT_TRUE(std::isnan(equal.df));
  EXPECT_TRUE(std::isnan(equal.p_two_sided));
  EXPECT_TRUE(std::isnan(equal.p_less));
  EXPECT_TRUE(std::isnan(equal.p_greater));
  const TTestResult different = WelchTTest(three, four);
  EXPECT_EQ(different.t, -INFINITY);
  EXPECT_TRUE(std::isnan(different.df));
  EXPECT_EQ(different.p_two_sided, 0.0);
  EXPECT_EQ(different.p_less, 0.0);
  EXPECT_EQ(different.p_greater, 1.0);
  const TTestResult reversed = WelchTTest(four, three);
  EXPECT_EQ(reversed.t, INFINITY);
  EXPECT_EQ(reversed.p_less, 1.0);
  EXPECT_EQ(reversed.p_greater, 0.0);
  const TTestResult student = StudentTTest(three, four);
  EXPECT_EQ(student.t, -INFINITY);
  EXPECT_EQ(student.df, 4.0);
  EXPECT_EQ(student.p_two_sided, 0.0);
  EXPECT_EQ(StudentTTest(three, three).df, 4.0);
  EXPECT_TRUE(std::isnan(StudentTTest(three, three).p_two_sided));
}

void ExpectAllNaN(const TTestResult& r) {
  for (double v :
       {r.t, r.df, r.p_two_sided, r.p_less, r.p_greater, r.mean_x, r.mean_y, r.var_x, r.var_y}) {
    EXPECT_TRUE(std::isnan(v));
  }
}

TEST(WelchTTest, FewerThanTwoOnASideIsAllNaN) {
  const std::vector<double> two = {1.0, 2.0};
  const std::vector<double> one = {1.0};
  ExpectAllNaN(WelchTTest(one, two));
  ExpectAllNaN(WelchTTest(two, one));
  ExpectAllNaN(WelchTTest({}, two));
  ExpectAllNaN(StudentTTest(two, one));
  ExpectAllNaN(WelchTTestLog(one, two));
}

TEST(WelchTTest, SwappingSamplesNegatesTAndSwapsTails) {
  const std::vector<double> x = {10.1, 10.4, 9.8, 10.0};
  const std::vector<double> y = {12.0, 15.5, 11.2};
  const TTestResult a = WelchTTest(x, y);
  const TTestResult b = WelchTTest(y, x);
  EXPECT_EQ(a.t, -b.t);
  EXPECT_EQ(a.df, b.df);
  EXPECT_EQ(a.p_two_sided, b.p_two_sided);
  EXPECT_EQ(a.p_less, b.p_greater);
  EXPECT_TRUE(NearRel(a.p_less + a.p_greater, 1.0, 1e-15));
  EXPECT_TRUE(NearRel(a.p_two_sided, 2 * std::min(a.p_less, a.p_greater), 1e-14));
}

TEST(WelchTTest, NaNInputGivesNaNStatistics) {
  const std::vector<double> x = {1.0, kNaN, 3.0};
  const std::vector<double> y = {1.0, 2.0, 3.0};
  const TTestResult r = WelchTTest(x, y);
  EXPECT_TRUE(std::isnan(r.t));
  EXPECT_TRUE(std::isnan(r.p_two_sided));
  EXPECT_TRUE(std::isnan(r.p_less));
  EXPECT_TRUE(std::isnan(StudentTTest(x, y).p_two_sided));
}

TEST(WelchTTestLog, IsWelchOnLogs) {
  const std::vector<double> x = {1021.5, 1019.2, 1030.8, 1025.0};
  const std::vector<double> y = {1070.1, 1081.9, 1064.2};
  std::vector<double> lx;
  std::vector<double> ly;
  for (double v : x) lx.push_back(std::log(v));
  for (double v : y) ly.push_back(std::log(v));
  const TTestResult log_test = WelchTTestLog(x, y);
  const TTestResult direct = WelchTTest(lx, ly);
  EXPECT_EQ(log_test.t, direct.t);
  EXPECT_EQ(log_test.df, direct.df);
  EXPECT_EQ(log_test.p_two_sided, direct.p_two_sided);
  EXPECT_EQ(log_test.mean_x, direct.mean_x);
  EXPECT_EQ(log_test.var_y, direct.var_y);
}

TEST(WelchTTestLog, NonPositiveOrNaNValueIsAllNaN) {
  const std::vector<double> good = {1.0, 2.0, 3.0};
  ExpectAllNaN(WelchTTestLog(std::vector<double>{1.0, 0.0, 2.0}, good));
  ExpectAllNaN(WelchTTestLog(good, std::vector<double>{1.0, -2.0}));
  ExpectAllNaN(WelchTTestLog(good, std::vector<double>{1.0, kNaN}));
}

TEST(WelchDiffConfidenceIntervalOracle, EveryWelchRowOfCiCsv) {
  const auto table = ReadGoldenCsv("ci.csv");
  WorstError worst("ci.csv welch_diff_ci (std_error, df, t_crit)");
  double worst_of_width = 0;
  int rows = 0;
  for (const auto& row : table.rows) {
    if (row.Str("kind") != "welch_diff_ci(x-y)") continue;
    ++rows;
    SCOPED_TRACE(row.Where() + " confidence=" + row.Str("confidence"));
    const TInterval ci =
        WelchDiffConfidenceInterval(row.Vec("x"), row.Vec("y"), row.Num("confidence"));
    Check(worst, ci.std_error, row, "std_error");
    Check(worst, ci.df, row, "df");
    Check(worst, ci.t_crit, row, "t_crit");
    // README: estimate and bounds to 1e-10 of the width (a bound can be near 0). The oracle's
    // estimate is the difference of two rounded NumPy means; ours is the exact difference, which
    // differs from it by 2e-8 relative (1e-15 of the width) on the near-identical row.
    const double width = row.Num("upper") - row.Num("lower");
    for (const auto& [actual, column] :
         {std::pair{ci.estimate, "estimate"}, {ci.lower, "lower"}, {ci.upper, "upper"}}) {
      const double expected = row.Num(column);
      worst_of_width = std::max(worst_of_width, std::fabs(actual - expected) / width);
      EXPECT_TRUE(NearRel(actual, expected, 0, 1e-12 * width)) << column;
    }
    if (row.Str("case") == "n10v10_near_identical_1e-6") {
      // Exact mean(x) - mean(y) of the double inputs (Python fractions).
      EXPECT_TRUE(NearRel(ci.estimate, 9.999999903698153e-08, 1e-15));
    }
  }
  EXPECT_EQ(rows, 28);
  std::cout << "[ worst error / width ] ci.csv welch_diff_ci bounds: " << worst_of_width << "\n";
}

TEST(WelchDiffConfidenceInterval, InvalidInputIsAllNaN) {
  const std::vector<double> x = {1.0, 2.0, 3.0};
  for (const TInterval& ci :
       {WelchDiffConfidenceInterval(std::vector<double>{1.0}, x, 0.95),
        WelchDiffConfidenceInterval(x, {}, 0.95), WelchDiffConfidenceInterval(x, x, 0.0),
        WelchDiffConfidenceInterval(x, x, 1.0), WelchDiffConfidenceInterval(x, x, kNaN)}) {
    for (double v : {ci.estimate, ci.lower, ci.upper, ci.std_error, ci.df, ci.t_crit}) {
      EXPECT_TRUE(std::isnan(v));
    }
  }
}

TEST(WelchDiffConfidenceInterval, ConstantSamplesGiveTheExactDifference) {
  const std::vector<double> x = {3.0, 3.0, 3.0};
  const std::vector<double> y = {4.0, 4.0, 4.0, 4.0};
  const TInterval ci = WelchDiffConfidenceInterval(x, y, 0.95);
  EXPECT_EQ(ci.estimate, -1.0);
  EXPECT_EQ(ci.lower, -1.0);
  EXPECT_EQ(ci.upper, -1.0);
  EXPECT_EQ(ci.std_error, 0.0);
  EXPECT_TRUE(std::isnan(ci.df));  // 0 / 0, as in WelchTTest
  EXPECT_TRUE(std::isnan(ci.t_crit));
}

TEST(WelchDiffConfidenceInterval, OneConstantSampleUsesTheOthersDf) {
  const std::vector<double> x = {5.0, 5.0, 5.0, 5.0};
  const std::vector<double> y = {5.5, 6.0, 5.2, 6.1, 5.9};
  const TInterval ci = WelchDiffConfidenceInterval(x, y, 0.95);
  EXPECT_TRUE(NearRel(ci.df, 4.0, 1e-15));
  EXPECT_LT(ci.lower, ci.estimate);
  EXPECT_GT(ci.upper, ci.estimate);
  EXPECT_TRUE(NearRel(ci.upper - ci.estimate, ci.t_crit * ci.std_error, 1e-14));
}

}  // namespace
}  // namespace perfwarden::stats
