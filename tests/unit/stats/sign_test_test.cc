// SPDX-License-Identifier: Apache-2.0
// The sign test against scipy.stats.binomtest 1.10 (golden/paired.csv: positive count, non-zero
// count and two-sided p of every row), and binomtest's two-sided rule checked by enumeration.
#include "stats/sign_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::WorstError;

constexpr double kRel = 1e-10;

TEST(SignTestOracle, CountsAndPEveryRow) {
  const auto table = testing::ReadGoldenCsv("paired.csv");
  ASSERT_EQ(table.rows.size(), 250u);
  WorstError worst("sign test p");
  for (const auto& row : table.rows) {
    const std::vector<double> x = row.Vec("x");
    const std::vector<double> y = row.Vec("y");
    std::vector<double> d;
    for (size_t i = 0; i < x.size(); ++i) d.push_back(y[i] - x[i]);
    const SignTestResult r = SignTest(d);
    EXPECT_EQ(static_cast<double>(r.positive), row.Num("sign_pos")) << row.Where();
    EXPECT_EQ(static_cast<double>(r.n), row.Num("sign_n")) << row.Where();
    EXPECT_TRUE(NearRel(r.p_two_sided, row.Num("sign_p"), kRel)) << row.Where();
    worst.Add(r.p_two_sided, row.Num("sign_p"));
  }
}

// binomtest's two-sided p: the total probability of the outcomes no more likely than k.
TEST(SignTestTest, TwoSidedRuleByEnumeration) {
  for (size_t n = 1; n <= 40; ++n) {
    std::vector<double> pmf(n + 1);
    double c = 1;  // C(n, j)
    for (size_t j = 0; j <= n; ++j) {
      pmf[j] = std::ldexp(c, -static_cast<int>(n));
      c = c * static_cast<double>(n - j) / static_cast<double>(j + 1);
    }
    for (size_t k = 0; k <= n; ++k) {
      double expected = 0;
      for (size_t j = 0; j <= n; ++j) {
        if (pmf[j] <= pmf[k] * (1 + 1e-7)) expected += pmf[j];
      }
      EXPECT_TRUE(NearRel(BinomialHalfTwoSidedP(k, n), std::min(1.0, expected), 1e-13))
          << "k=" << k << " n=" << n;
    }
  }
}

TEST(SignTestTest, ZerosDroppedAndRefusals) {
  const SignTestResult r = SignTest(std::vector<double>{0.1, 0.0, -0.2, 0.3, 0.0, 0.4});
  EXPECT_EQ(r.positive, 3u);
  EXPECT_EQ(r.n, 4u);
  EXPECT_DOUBLE_EQ(r.p_two_sided, 2 * 5.0 / 16);  // 2 P(X <= 1), X ~ Binomial(4, 1/2)
  // Nothing non-zero: binomtest refuses n = 0.
  EXPECT_TRUE(std::isnan(SignTest(std::vector<double>{0.0, 0.0}).p_two_sided));
  EXPECT_TRUE(std::isnan(SignTest(std::vector<double>{}).p_two_sided));
  EXPECT_TRUE(std::isnan(SignTest(std::vector<double>{1.0, NAN}).p_two_sided));
  EXPECT_TRUE(std::isnan(BinomialHalfTwoSidedP(3, 2)));
}

}  // namespace
}  // namespace perfwarden::stats
