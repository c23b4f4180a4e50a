// SPDX-License-Identifier: Apache-2.0
// The Wilcoxon signed-rank test against scipy.stats.wilcoxon 1.10 (golden/paired.csv: the
// statistic and two-sided p of every row, for method auto and the approximation with and without
// continuity correction under the three zero methods), and what SciPy refuses.
#include "stats/signed_rank.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::WorstError;

// Oracle README: exact p 1e-12 relative, the normal approximation 1e-10.
constexpr double kExactRel = 1e-12;
constexpr double kApproxRel = 1e-10;

WilcoxonOptions RowOptions(const testing::OracleRow& row) {
  WilcoxonOptions options;
  const std::string& method = row.Str("wilcoxon_method");
  options.method = method == "auto"    ? WilcoxonMethod::kAuto
                   : method == "exact" ? WilcoxonMethod::kExact
                                       : WilcoxonMethod::kApprox;
  const std::string& zeros = row.Str("zero_method");
  options.zero_method = zeros == "pratt"    ? ZeroMethod::kPratt
                        : zeros == "zsplit" ? ZeroMethod::kZsplit
                                            : ZeroMethod::kWilcox;
  options.correction = row.Num("correction") == 1;
  return options;
}

TEST(SignedRankOracle, StatisticAndPEveryRowEveryVariant) {
  const auto table = testing::ReadGoldenCsv("paired.csv");
  ASSERT_EQ(table.rows.size(), 250u);
  WorstError worst_exact("wilcoxon exact p"), worst_approx("wilcoxon approximate p");
  int exact_rows = 0, variants_seen = 0;
  for (const auto& row : table.rows) {
    const std::vector<double> x = row.Vec("x");
    const std::vector<double> y = row.Vec("y");
    const WilcoxonOptions options = RowOptions(row);
    auto r = WilcoxonSignedRankPaired(y, x, options);
    ASSERT_TRUE(r) << row.Where();
    const double expected_p = row.Num("w_p");
    if (std::isnan(expected_p)) {  // SciPy refused: so must we
      EXPECT_TRUE(std::isnan(r->p_two_sided)) << row.Where();
      EXPECT_TRUE(std::isnan(r->statistic)) << row.Where();
      continue;
    }
    ++variants_seen;
    EXPECT_EQ(r->statistic, row.Num("w_stat")) << row.Where();
    if (options.method == WilcoxonMethod::kAuto) {
      EXPECT_EQ(r->exact, x.size() <= 50 && r->zeros == 0) << row.Where();
    } else {
      EXPECT_FALSE(r->exact) << row.Where();
    }
    if (r->exact) {
      ++exact_rows;
      EXPECT_TRUE(NearRel(r->p_two_sided, expected_p, kExactRel)) << row.Where();
      worst_exact.Add(r->p_two_sided, expected_p);
    } else {
      EXPECT_TRUE(NearRel(r->p_two_sided, expected_p, kApproxRel)) << row.Where();
      worst_approx.Add(r->p_two_sided, expected_p);
    }
  }
  EXPECT_EQ(exact_rows, 33);  // n <= 50 without zero differences
  EXPECT_GT(variants_seen, 200);
}

TEST(SignedRankTest, RefusesWhatScipyRefuses) {
  // Empty: NaN. Every difference zero: the approximation under wilcox and pratt has nothing to
  // rank (SciPy raises); zsplit splits the zeros' ranks and gives p = 1.
  EXPECT_TRUE(std::isnan(WilcoxonSignedRank(std::vector<double>{}).p_two_sided));
  const std::vector<double> zeros(5, 0.0);
  for (ZeroMethod zm : {ZeroMethod::kWilcox, ZeroMethod::kPratt}) {
    for (WilcoxonMethod m :
         {WilcoxonMethod::kAuto, WilcoxonMethod::kExact, WilcoxonMethod::kApprox}) {
      const auto r = WilcoxonSignedRank(zeros, {m, zm, false});
      EXPECT_TRUE(std::isnan(r.p_two_sided));
      EXPECT_TRUE(std::isnan(r.statistic));
      EXPECT_EQ(r.zeros, 5u);
    }
  }
  const auto split = WilcoxonSignedRank(zeros, {WilcoxonMethod::kAuto, ZeroMethod::kZsplit, false});
  EXPECT_EQ(split.statistic, 7.5);
  EXPECT_EQ(split.p_two_sided, 1.0);
  EXPECT_TRUE(std::isnan(WilcoxonSignedRank(std::vector<double>{1, NAN, 2}).p_two_sided));
  EXPECT_FALSE(WilcoxonSignedRankPaired(std::vector<double>{1, 2}, std::vector<double>{1}));
}

TEST(SignedRankTest, ExactTailsByEnumeration) {
  // All 2^n sign patterns of ranks 1..n: P(R+ <= r) counted directly, for n = 1..12 and every r.
  for (int n = 1; n <= 12; ++n) {
    const int total = n * (n + 1) / 2;
    std::vector<int> count(static_cast<size_t>(total) + 1, 0);
    for (int mask = 0; mask < (1 << n); ++mask) {
      int r_plus = 0;
      for (int i = 0; i < n; ++i) {
        if (mask & (1 << i)) r_plus += i + 1;
      }
      ++count[static_cast<size_t>(r_plus)];
    }
    int cumulative = 0;
    for (int r = 0; r <= total; ++r) {
      cumulative += count[static_cast<size_t>(r)];
      // The differences: ranks 1..n, the first r_plus-making ones positive is not needed; build
      // a sample with R+ = r from a greedy subset of ranks.
      std::vector<double> d;
      int remaining = r;
      for (int rank = n; rank >= 1; --rank) {
        const bool positive = remaining >= rank;
        if (positive) remaining -= rank;
        d.push_back(positive ? rank : -rank);
      }
      ASSERT_EQ(remaining, 0);
      const auto result =
          WilcoxonSignedRank(d, {WilcoxonMethod::kExact, ZeroMethod::kWilcox, false});
      ASSERT_TRUE(result.exact);
      EXPECT_EQ(result.r_plus, r);
      const int k = std::min(r, total - r);
      int lower = 0;
      for (int j = 0; j <= k; ++j) lower += count[static_cast<size_t>(j)];
      const double expected =
          r == total / 2 ? 1.0 : std::min(1.0, 2.0 * lower / static_cast<double>(1 << n));
      EXPECT_EQ(result.p_two_sided, expected) << "n=" << n << " r=" << r;
    }
    EXPECT_EQ(cumulative, 1 << n);
  }
}

TEST(SignedRankTest, MinimumPAndLargeExactFallsBack) {
  EXPECT_EQ(WilcoxonMinTwoSidedP(6), 2.0 / 64);
  EXPECT_EQ(WilcoxonMinTwoSidedP(1), 1.0);
  EXPECT_TRUE(std::isnan(WilcoxonMinTwoSidedP(0)));
  // All positive: the smallest p the exact test gives.
  std::vector<double> d;
  for (int i = 1; i <= 10; ++i) d.push_back(i * 0.01);
  EXPECT_EQ(WilcoxonSignedRank(d).p_two_sided, WilcoxonMinTwoSidedP(10));
  // 2,000 differences balanced around 0: the exact distribution would be beyond its bounds.
  std::vector<double> big;
  for (int i = 1; i <= 2000; ++i) big.push_back(i % 2 ? i : -i);
  const auto r = WilcoxonSignedRank(big, {WilcoxonMethod::kExact, ZeroMethod::kWilcox, false});
  EXPECT_FALSE(r.exact);
  EXPECT_GT(r.p_two_sided, 0.5);
}

}  // namespace
}  // namespace perfwarden::stats
