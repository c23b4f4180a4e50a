// SPDX-License-Identifier: Apache-2.0
// Multiple-comparison corrections against statsmodels 0.13 multipletests
// (golden/multitest.csv, every row), plus empty/single/NaN/0/1 edge cases.
#include "stats/multiple_testing.h"

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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kRel = 1e-12;  // oracle README

constexpr Correction kAll[] = {Correction::kNone,
                               Correction::kBonferroni,
                               Correction::kSidak,
                               Correction::kHolm,
                               Correction::kHolmSidak,
                               Correction::kBenjaminiHochberg,
                               Correction::kBenjaminiYekutieli};

TEST(MultipleTestingOracle, EveryRow) {
  const auto table = testing::ReadGoldenCsv("multitest.csv");
  ASSERT_EQ(table.rows.size(), 60u);
  double worst = 0;
  for (const auto& row : table.rows) {
    const std::vector<double> p = row.Vec("pvalues");
    const std::vector<double> expected = row.Vec("adjusted_pvalues_in_input_order");
    const std::vector<double> reject = row.Vec("reject");
    const double alpha = row.Num("alpha");
    ASSERT_EQ(static_cast<double>(p.size()), row.Num("m")) << row.Where();
    ASSERT_EQ(expected.size(), p.size()) << row.Where();
    ASSERT_EQ(reject.size(), p.size()) << row.Where();
    const auto method = ParseCorrection(row.Str("method"));
    ASSERT_TRUE(method.has_value()) << row.Where();

    const std::vector<double> adjusted = AdjustPValues(p, *method);
    ASSERT_EQ(adjusted.size(), p.size()) << row.Where();
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(NearRel(adjusted[i], expected[i], kRel)) << row.Where() << " index " << i;
      // The gate rejects on adjusted <= alpha; statsmodels decides on the raw p-values against
      // the method's thresholds. The two must agree on every oracle row.
      EXPECT_EQ(adjusted[i] <= alpha, reject[i] == 1) << row.Where() << " index " << i;
      if (expected[i] != 0) {
        worst = std::max(worst, std::fabs(adjusted[i] - expected[i]) / expected[i]);
      } else {
        EXPECT_EQ(adjusted[i], 0.0) << row.Where();
      }
    }
  }
  std::cout << "multitest.csv worst rel error: " << worst << "\n";
}

TEST(MultipleTesting, ParseCorrection) {
  EXPECT_EQ(ParseCorrection("none"), Correction::kNone);
  EXPECT_EQ(ParseCorrection("bonferroni"), Correction::kBonferroni);
  EXPECT_EQ(ParseCorrection("sidak"), Correction::kSidak);
  EXPECT_EQ(ParseCorrection("holm"), Correction::kHolm);
  EXPECT_EQ(ParseCorrection("holm-sidak"), Correction::kHolmSidak);
  EXPECT_EQ(ParseCorrection("fdr_bh"), Correction::kBenjaminiHochberg);
  EXPECT_EQ(ParseCorrection("fdr_by"), Correction::kBenjaminiYekutieli);
  EXPECT_EQ(ParseCorrection("Holm"), Correction::kHolm);  // statsmodels lower-cases too
  EXPECT_FALSE(ParseCorrection("hochberg").has_value());
  EXPECT_FALSE(ParseCorrection("").has_value());
}

TEST(MultipleTesting, EmptyInEmptyOut) {
  for (Correction c : kAll) EXPECT_TRUE(AdjustPValues({}, c).empty());
}

TEST(MultipleTesting, SingleValueIsUnchanged) {
  const std::vector<double> p = {0.037};
  for (Correction c : kAll) {
    const auto adjusted = AdjustPValues(p, c);
    ASSERT_EQ(adjusted.size(), 1u);
    EXPECT_TRUE(NearRel(adjusted[0], 0.037, 1e-15));
  }
}

// NaN entries (e.g. a benchmark whose test was undefined) stay NaN in place and do not count
// towards m: the result equals the correction of the non-NaN values alone.
TEST(MultipleTesting, NaNEntriesStayAndAreNotCounted) {
  const std::vector<double> with_nan = {0.04, kNaN, 0.01, kNaN, 0.03};
  const std::vector<double> without = {0.04, 0.01, 0.03};
  for (Correction c : kAll) {
    const auto a = AdjustPValues(with_nan, c);
    const auto b = AdjustPValues(without, c);
    ASSERT_EQ(a.size(), 5u);
    EXPECT_TRUE(std::isnan(a[1]));
    EXPECT_TRUE(std::isnan(a[3]));
    EXPECT_EQ(a[0], b[0]);
    EXPECT_EQ(a[2], b[1]);
    EXPECT_EQ(a[4], b[2]);
  }
  // m = 3, not 5: Bonferroni of 0.01 is 0.03.
  EXPECT_DOUBLE_EQ(AdjustPValues(with_nan, Correction::kBonferroni)[2], 0.03);
  for (Correction c : kAll) {
    const auto all_nan = AdjustPValues(std::vector<double>{kNaN, kNaN}, c);
    EXPECT_TRUE(std::isnan(all_nan[0]) && std::isnan(all_nan[1]));
  }
}

TEST(MultipleTesting, ZeroStaysZeroAndOneStaysOne) {
  const std::vector<double> p = {1.0, 0.0, 0.5, 1.0};
  for (Correction c : kAll) {
    const auto adjusted = AdjustPValues(p, c);
    EXPECT_EQ(adjusted[1], 0.0);
    EXPECT_EQ(adjusted[0], 1.0);
    EXPECT_EQ(adjusted[3], 1.0);
    for (double a : adjusted) EXPECT_LE(a, 1.0);
  }
  // All ones: every method leaves 1.
  for (Correction c : kAll) {
    for (double a : AdjustPValues(std::vector<double>(7, 1.0), c)) EXPECT_EQ(a, 1.0);
  }
}

// Adjusted values keep the order of the raw values (the methods' monotonicity), whatever the
// input order, and are never below the raw value.
TEST(MultipleTesting, MonotoneInRawOrder) {
  const std::vector<double> p = {0.3, 0.001, 0.04, 0.04, 0.2, 0.0005, 0.9, 0.012, 0.6};
  for (Correction c : kAll) {
    const auto adjusted = AdjustPValues(p, c);
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_GE(adjusted[i], p[i] * (1 - 1e-15));
      for (size_t j = 0; j < p.size(); ++j) {
        if (p[i] < p[j]) {
          EXPECT_LE(adjusted[i], adjusted[j]) << i << " " << j;
        }
        if (p[i] == p[j]) {
          EXPECT_EQ(adjusted[i], adjusted[j]) << i << " " << j;
        }
      }
    }
  }
}

// BY's harmonic number for m > 8 uses numpy's pairwise summation; a 150-value vector takes the
// recursive branch. Reference: statsmodels would give m * H_m * p_(1) for the smallest p when
// BY's step-up minimum is attained there.
TEST(MultipleTesting, ByLargeM) {
  std::vector<double> p(150, 0.9);
  p[17] = 1e-6;
  const auto adjusted = AdjustPValues(p, Correction::kBenjaminiYekutieli);
  double harmonic = 0;
  for (int i = 150; i >= 1; --i) harmonic += 1.0 / i;
  EXPECT_TRUE(NearRel(adjusted[17], 1e-6 * 150 * harmonic, 1e-14));
  EXPECT_EQ(adjusted[0], 1.0);
}

}  // namespace
}  // namespace perfwarden::stats
