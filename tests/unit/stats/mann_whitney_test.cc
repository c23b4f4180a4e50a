// SPDX-License-Identifier: Apache-2.0
// Mann-Whitney U against scipy.stats.mannwhitneyu 1.10 (golden/mannwhitney.csv, every row and
// every method variant), Google Benchmark compare.py's U-test cases, and the edge cases the
// oracle cannot express (empty, NaN, infinities, huge exact and long double exact sizes).
#include "stats/mann_whitney.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::ParseNumber;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Oracle README: exact p-values 1e-12 relative, asymptotic 1e-10.
constexpr double kExactRel = 1e-12;
constexpr double kAsymptoticRel = 1e-10;

// The oracle writes long constant runs as "VALUE xCOUNT" (e.g. "1.0 x1000").
std::vector<double> ParseSample(const std::string& cell) {
  std::vector<double> values;
  std::istringstream in(cell);
  std::string token;
  while (in >> token) {
    if (token[0] == 'x' && !values.empty()) {
      const long count = std::stol(token.substr(1));
      values.insert(values.end(), static_cast<size_t>(count - 1), values.back());
    } else {
      values.push_back(ParseNumber(token));
    }
  }
  return values;
}

double RelError(double actual, double expected) {
  if (std::isnan(expected) || actual == expected) return 0;
  return std::fabs(actual - expected) / std::max(std::fabs(expected), 1e-300);
}

void ExpectMatchesRow(const MannWhitneyResult& r, const testing::OracleRow& row, double rel,
                      double* worst) {
  EXPECT_EQ(r.u1, row.Num("U1_for_x")) << row.Where();
  EXPECT_EQ(r.u2, row.Num("U2")) << row.Where();
  EXPECT_EQ(std::min(r.u1, r.u2), row.Num("U_min")) << row.Where();
  EXPECT_EQ(r.has_ties, row.Num("has_ties") == 1) << row.Where();
  EXPECT_TRUE(NearRel(r.p_two_sided, row.Num("p_two_sided"), rel)) << row.Where() << " two-sided";
  EXPECT_TRUE(NearRel(r.p_less, row.Num("p_less"), rel)) << row.Where() << " less";
  EXPECT_TRUE(NearRel(r.p_greater, row.Num("p_greater"), rel)) << row.Where() << " greater";
  for (const char* column : {"p_two_sided", "p_less", "p_greater"}) {
    const double actual = std::string(column) == "p_two_sided" ? r.p_two_sided
                          : std::string(column) == "p_less"    ? r.p_less
                                                               : r.p_greater;
    *worst = std::max(*worst, RelError(actual, row.Num(column)));
  }
}

TEST(MannWhitneyOracle, EveryRowEveryVariant) {
  const auto table = testing::ReadGoldenCsv("mannwhitney.csv");
  ASSERT_EQ(table.rows.size(), 55u);
  double worst_exact = 0;
  double worst_asymptotic = 0;
  int auto_rows = 0;
  for (const auto& row : table.rows) {
    const std::vector<double> x = ParseSample(row.Str("x"));
    const std::vector<double> y = ParseSample(row.Str("y"));
    ASSERT_EQ(static_cast<double>(x.size()), row.Num("n1")) << row.Where();
    ASSERT_EQ(static_cast<double>(y.size()), row.Num("n2")) << row.Where();
    const bool exact = row.Str("method") == "exact";
    ASSERT_TRUE(exact || row.Str("method") == "asymptotic") << row.Where();
    const bool continuity = row.Num("use_continuity") == 1;
    const double rel = exact ? kExactRel : kAsymptoticRel;
    double* worst = exact ? &worst_exact : &worst_asymptotic;

    const MannWhitneyResult r =
        MannWhitneyU(x, y, exact ? MwuMethod::kExact : MwuMethod::kAsymptotic, continuity);
    EXPECT_EQ(r.exact, exact) << row.Where();
    ExpectMatchesRow(r, row, rel, worst);

    if (row.Num("is_scipy_auto_choice") == 1) {
      ++auto_rows;
      const MannWhitneyResult a = MannWhitneyU(x, y, MwuMethod::kAuto, continuity);
      EXPECT_EQ(a.exact, exact) << row.Where() << " auto picked the other method";
      ExpectMatchesRow(a, row, rel, worst);
    }
  }
  EXPECT_GT(auto_rows, 20);
  std::cout << "mannwhitney.csv worst rel error: exact " << worst_exact << ", asymptotic "
            << worst_asymptotic << "\n";
}

// Google Benchmark tools/gbench/report.py TestReportDifferenceWithUTest (test3_run0/1.json):
// scipy defaults, two-sided, real time and CPU time separately.
TEST(MannWhitneyGbench, CompareUTestCases) {
  struct Case {
    std::vector<double> lhs, rhs;
    double p;
    bool exact;
  };
  const Case cases[] = {
      {{9, 8}, {10, 7}, 1.0, true},                         // BM_Two real_time
      {{90, 86}, {89, 72}, 0.6666666666666666, true},       // BM_Two cpu_time
      {{8, 8}, {7, 4.54, 800}, 0.7670968684102772, false},  // short real_time (tie)
      {{80, 77}, {75, 66.6, 1}, 0.2, true},                 // short cpu_time
  };
  for (const Case& c : cases) {
    const MannWhitneyResult r = MannWhitneyU(c.lhs, c.rhs);
    EXPECT_TRUE(NearRel(r.p_two_sided, c.p, kExactRel)) << c.p;
    EXPECT_EQ(r.exact, c.exact) << c.p;
    EXPECT_DOUBLE_EQ(r.PValue(Alternative::kTwoSided), r.p_two_sided);
  }
}

// test5 (TestReportDifferenceWithUTestWhileDisplayingAggregatesOnly2): one benchmark repeated
// 1000x; real 1 s vs 1000 s, CPU 1000 s vs 1 s. Both p print as 0.0000 (they are exactly 0).
TEST(MannWhitneyGbench, ThousandRepetitionsPrintAsZero) {
  const std::vector<double> one(1000, 1.0);
  const std::vector<double> thousand(1000, 1000.0);
  for (const auto& [lhs, rhs] : {std::pair{&one, &thousand}, std::pair{&thousand, &one}}) {
    const MannWhitneyResult r = MannWhitneyU(*lhs, *rhs);
    EXPECT_FALSE(r.exact);
    EXPECT_TRUE(r.has_ties);
    EXPECT_EQ(r.p_two_sided, 0.0);
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", r.p_two_sided);
    EXPECT_STREQ(text, "0.0000");
  }
}

TEST(MannWhitneyEdge, EmptySideGivesNaN) {
  const std::vector<double> some = {1, 2, 3};
  const std::vector<double> none;
  for (const auto& r : {MannWhitneyU(none, some), MannWhitneyU(some, none),
                        MannWhitneyU(none, none, MwuMethod::kExact)}) {
    EXPECT_TRUE(std::isnan(r.u1));
    EXPECT_TRUE(std::isnan(r.u2));
    EXPECT_TRUE(std::isnan(r.p_two_sided));
    EXPECT_TRUE(std::isnan(r.p_less));
    EXPECT_TRUE(std::isnan(r.p_greater));
  }
}

// SciPy raises on NaN input; here the whole result is NaN.
TEST(MannWhitneyEdge, NaNInputGivesNaN) {
  const std::vector<double> x = {1, kNaN, 3};
  const std::vector<double> y = {4, 5, 6};
  for (const auto& r : {MannWhitneyU(x, y), MannWhitneyU(y, x, MwuMethod::kAsymptotic)}) {
    EXPECT_TRUE(std::isnan(r.u1));
    EXPECT_TRUE(std::isnan(r.p_two_sided));
    EXPECT_TRUE(std::isnan(r.p_less));
    EXPECT_TRUE(std::isnan(r.p_greater));
  }
}

TEST(MannWhitneyEdge, OneValueEachSide) {
  const std::vector<double> one = {1.0};
  const std::vector<double> two = {2.0};
  const MannWhitneyResult r = MannWhitneyU(one, two);  // scipy: 1.0, 0.5, 1.0
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u1, 0);
  EXPECT_EQ(r.u2, 1);
  EXPECT_EQ(r.p_two_sided, 1.0);
  EXPECT_EQ(r.p_less, 0.5);
  EXPECT_EQ(r.p_greater, 1.0);

  const MannWhitneyResult tie = MannWhitneyU(one, one);  // tie: asymptotic, zero variance
  EXPECT_FALSE(tie.exact);
  EXPECT_EQ(tie.u1, 0.5);
  EXPECT_EQ(tie.p_two_sided, 1.0);
  EXPECT_EQ(tie.p_less, 1.0);
  EXPECT_EQ(tie.p_greater, 1.0);
  const MannWhitneyResult no_cc = MannWhitneyU(one, one, MwuMethod::kAuto, false);
  EXPECT_TRUE(std::isnan(no_cc.p_two_sided));  // scipy: 0/0
}

// Zero variance at a size where (n + 1) - tie_term / (n (n - 1)) could round away from 0.
TEST(MannWhitneyEdge, AllEqualLargeIsOneWithContinuity) {
  const std::vector<double> v(300, 5.0);
  const MannWhitneyResult r = MannWhitneyU(v, v);
  EXPECT_EQ(r.u1, 45000);
  EXPECT_TRUE(r.has_ties);
  EXPECT_EQ(r.p_two_sided, 1.0);
  EXPECT_EQ(r.p_less, 1.0);
  EXPECT_EQ(r.p_greater, 1.0);
  const MannWhitneyResult no_cc = MannWhitneyU(v, v, MwuMethod::kAsymptotic, false);
  EXPECT_TRUE(std::isnan(no_cc.p_two_sided));
  EXPECT_TRUE(std::isnan(no_cc.p_less));
}

// SciPy 1.10 with method="exact" would truncate U and use the no-ties distribution; perfwarden
// uses the asymptotic method (values: scipy method="asymptotic").
TEST(MannWhitneyEdge, ExactWithTiesUsesAsymptotic) {
  const std::vector<double> x = {1, 2, 2, 3};
  const std::vector<double> y = {2, 4, 5};
  const MannWhitneyResult r = MannWhitneyU(x, y, MwuMethod::kExact);
  EXPECT_FALSE(r.exact);
  EXPECT_TRUE(r.has_ties);
  EXPECT_EQ(r.u1, 2.0);
  EXPECT_TRUE(NearRel(r.p_two_sided, 0.19908985214820463, kAsymptoticRel));
  EXPECT_TRUE(NearRel(r.p_less, 0.09954492607410231, kAsymptoticRel));
  EXPECT_TRUE(NearRel(r.p_greater, 0.9506356760525876, kAsymptoticRel));
}

TEST(MannWhitneyEdge, Infinities) {
  // scipy: U = 4, p 0.8 / 0.8 / 0.4.
  const std::vector<double> x = {1.0, kInf};
  const std::vector<double> y = {2.0, 0.0, 5.0};
  const MannWhitneyResult r = MannWhitneyU(x, y);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u1, 4);
  EXPECT_TRUE(NearRel(r.p_two_sided, 0.8, kExactRel));
  EXPECT_TRUE(NearRel(r.p_less, 0.8, kExactRel));
  EXPECT_TRUE(NearRel(r.p_greater, 0.4, kExactRel));
  // SciPy 1.10 returns NaN when both +inf and -inf occur (its NaN check sums the data); ranks
  // are well defined, so perfwarden treats them as the extreme values they are, tied with equals.
  const std::vector<double> a = {-kInf, 1.0, kInf};
  const std::vector<double> b = {kInf, 0.0, 2.0};
  const std::vector<double> a_finite = {-1e300, 1.0, 1e300};
  const std::vector<double> b_finite = {1e300, 0.0, 2.0};
  const MannWhitneyResult inf = MannWhitneyU(a, b);
  const MannWhitneyResult fin = MannWhitneyU(a_finite, b_finite);
  EXPECT_TRUE(inf.has_ties);
  EXPECT_EQ(inf.u1, fin.u1);
  EXPECT_EQ(inf.p_two_sided, fin.p_two_sided);
  EXPECT_EQ(inf.p_less, fin.p_less);
  EXPECT_EQ(inf.p_greater, fin.p_greater);
}

TEST(MannWhitneyEdge, SwappingSidesSwapsTails) {
  const std::vector<double> x = {1.1, 3.3, 5.5, 7.7, 0.2};
  const std::vector<double> y = {2.2, 4.4, 6.6, 8.8, 9.9, 10.5};
  for (MwuMethod method : {MwuMethod::kExact, MwuMethod::kAsymptotic}) {
    const MannWhitneyResult xy = MannWhitneyU(x, y, method);
    const MannWhitneyResult yx = MannWhitneyU(y, x, method);
    EXPECT_EQ(xy.u1, yx.u2);
    EXPECT_EQ(xy.u2, yx.u1);
    EXPECT_EQ(xy.p_less, yx.p_greater);
    EXPECT_EQ(xy.p_greater, yx.p_less);
    EXPECT_EQ(xy.p_two_sided, yx.p_two_sided);
    EXPECT_EQ(xy.PValue(Alternative::kLess), xy.p_less);
    EXPECT_EQ(xy.PValue(Alternative::kGreater), xy.p_greater);
  }
}

// 8 vs 5000 without ties: the auto rule picks the exact distribution, which must stay cheap.
// Values: scipy 1.10 method="exact" for the tail (two-sided/less, agree to 1.4e-15) and exact
// rational arithmetic (Python integers) for all three.
TEST(MannWhitneyExact, EightVersusFiveThousand) {
  std::vector<double> y(5000);
  for (size_t j = 0; j < y.size(); ++j) y[j] = static_cast<double>(j);
  std::vector<double> tail_x(8);
  std::vector<double> mid_x(8);
  for (size_t i = 0; i < 8; ++i) {
    tail_x[i] = 100.0 * static_cast<double>(i) + 0.5;
    mid_x[i] = 625.0 * static_cast<double>(i) + 312.5;
  }
  const MannWhitneyResult tail = MannWhitneyU(tail_x, y);
  EXPECT_TRUE(tail.exact);
  EXPECT_EQ(tail.u1, 2808);
  EXPECT_TRUE(NearRel(tail.p_two_sided, 5.135588327819505e-07, kExactRel));
  EXPECT_TRUE(NearRel(tail.p_less, 2.5677941639097527e-07, kExactRel));
  EXPECT_TRUE(NearRel(tail.p_greater, 0.9999997439464722, kExactRel));

  const MannWhitneyResult mid = MannWhitneyU(mid_x, y);
  EXPECT_TRUE(mid.exact);
  EXPECT_EQ(mid.u1, 20004);
  EXPECT_TRUE(NearRel(mid.p_two_sided, 0.9993294921866078, kExactRel));
  EXPECT_TRUE(NearRel(mid.p_less, 0.5004310407052669, kExactRel));
  EXPECT_TRUE(NearRel(mid.p_greater, 0.4996647460933039, kExactRel));
}

// 70 vs 70: C(140, 70) ~ 9e40 exceeds 128 bits, so the long double path runs. Values: exact
// rational arithmetic (Python integers, the q-Pascal recurrence); scipy 1.10 agrees to 2e-16.
TEST(MannWhitneyExact, LongDoublePathSeventyVersusSeventy) {
  struct Case {
    double shift, u1, two_sided, less, greater;
  };
  const Case cases[] = {
      {30.5, 780, 1.488854653021955e-13, 7.444273265109775e-14, 0.9999999999999284},
      {5.5, 2080, 0.12383711169373181, 0.061918555846865904, 0.9385908970269954},
  };
  for (const Case& c : cases) {
    std::vector<double> x(70);
    std::vector<double> y(70);
    for (size_t i = 0; i < 70; ++i) {
      x[i] = static_cast<double>(i);
      y[i] = static_cast<double>(i) + c.shift;
    }
    const MannWhitneyResult r = MannWhitneyU(x, y, MwuMethod::kExact);
    EXPECT_TRUE(r.exact);
    EXPECT_EQ(r.u1, c.u1);
    EXPECT_TRUE(NearRel(r.p_two_sided, c.two_sided, kExactRel)) << c.shift;
    EXPECT_TRUE(NearRel(r.p_less, c.less, kExactRel)) << c.shift;
    EXPECT_TRUE(NearRel(r.p_greater, c.greater, kExactRel)) << c.shift;
  }
}

// An exact request far beyond the work bound falls back instead of stalling.
TEST(MannWhitneyExact, HugeExactRequestFallsBack) {
  std::vector<double> x(3000);
  std::vector<double> y(3000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 2.0 * static_cast<double>(i);
    y[i] = 2.0 * static_cast<double>(i) + 1.0;
  }
  const MannWhitneyResult r = MannWhitneyU(x, y, MwuMethod::kExact);
  EXPECT_FALSE(r.exact);
  const MannWhitneyResult a = MannWhitneyU(x, y, MwuMethod::kAsymptotic);
  EXPECT_EQ(r.p_two_sided, a.p_two_sided);
}

TEST(MannWhitneyMinTwoSidedP, Values) {
  EXPECT_EQ(MannWhitneyMinTwoSidedP(1, 1), 1.0);
  EXPECT_TRUE(NearRel(MannWhitneyMinTwoSidedP(2, 2), 1.0 / 3, 1e-15));
  EXPECT_TRUE(NearRel(MannWhitneyMinTwoSidedP(3, 3), 0.1, 1e-15));
  EXPECT_TRUE(NearRel(MannWhitneyMinTwoSidedP(5, 5), 2.0 / 252, 1e-15));
  EXPECT_TRUE(NearRel(MannWhitneyMinTwoSidedP(8, 8), 2.0 / 12870, 1e-15));
  EXPECT_TRUE(NearRel(MannWhitneyMinTwoSidedP(3, 8), MannWhitneyMinTwoSidedP(8, 3), 1e-15));
  EXPECT_EQ(MannWhitneyMinTwoSidedP(1000, 1000), 0.0);  // underflows
  EXPECT_TRUE(std::isnan(MannWhitneyMinTwoSidedP(0, 5)));
  EXPECT_TRUE(std::isnan(MannWhitneyMinTwoSidedP(5, -1)));
  // It is the exact two-sided p of completely separated samples (n3v3_separated: 0.1).
  const std::vector<double> lo = {1, 2, 3, 4};
  const std::vector<double> hi = {5, 6, 7, 8, 9};
  EXPECT_TRUE(NearRel(MannWhitneyU(lo, hi).p_two_sided, MannWhitneyMinTwoSidedP(4, 5), 1e-15));
}

}  // namespace
}  // namespace perfwarden::stats
