// SPDX-License-Identifier: Apache-2.0
// The one-sample and paired t-tests against scipy.stats.ttest_rel 1.10 (golden/paired.csv: t,
// df and two-sided p on raw and on log values, every row), and the edge cases SciPy defines.
#include "stats/paired_ttest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::WorstError;

// Oracle README: t and p to 1e-10 relative.
constexpr double kRel = 1e-10;

TEST(PairedTTestOracle, RawAndLogEveryRow) {
  const auto table = testing::ReadGoldenCsv("paired.csv");
  ASSERT_EQ(table.rows.size(), 250u);
  WorstError worst_t("ttest_rel t"), worst_p("ttest_rel p");
  WorstError worst_t_log("ttest_rel(log) t"), worst_p_log("ttest_rel(log) p");
  for (const auto& row : table.rows) {
    const std::vector<double> x = row.Vec("x");
    const std::vector<double> y = row.Vec("y");
    ASSERT_EQ(static_cast<double>(x.size()), row.Num("n")) << row.Where();
    auto raw = PairedTTest(y, x);
    ASSERT_TRUE(raw) << row.Where();
    EXPECT_TRUE(NearRel(raw->t, row.Num("t_rel"), kRel)) << row.Where();
    EXPECT_EQ(raw->df, row.Num("df_rel")) << row.Where();
    EXPECT_TRUE(NearRel(raw->p_two_sided, row.Num("p_rel"), kRel)) << row.Where();
    worst_t.Add(raw->t, row.Num("t_rel"));
    worst_p.Add(raw->p_two_sided, row.Num("p_rel"));
    auto logs = PairedTTestLog(y, x);
    ASSERT_TRUE(logs) << row.Where();
    EXPECT_TRUE(NearRel(logs->t, row.Num("t_rel_log"), kRel)) << row.Where();
    EXPECT_TRUE(NearRel(logs->p_two_sided, row.Num("p_rel_log"), kRel)) << row.Where();
    worst_t_log.Add(logs->t, row.Num("t_rel_log"));
    worst_p_log.Add(logs->p_two_sided, row.Num("p_rel_log"));
  }
}

TEST(OneSampleTTestTest, HandComputedCase) {
  // d = 1, 2, 3, 4, 6: mean 3.2, sd sqrt(3.7), t = 3.2 / (sqrt(3.7) / sqrt(5)).
  const std::vector<double> d = {1, 2, 3, 4, 6};
  const auto r = OneSampleTTest(d);
  EXPECT_DOUBLE_EQ(r.mean, 3.2);
  EXPECT_DOUBLE_EQ(r.sd, std::sqrt(3.7));
  EXPECT_DOUBLE_EQ(r.t, 3.2 / (std::sqrt(3.7) / std::sqrt(5.0)));
  EXPECT_EQ(r.df, 4);
  EXPECT_EQ(r.n, 5u);
  EXPECT_NEAR(r.p_less + r.p_greater, 1.0, 1e-15);
  EXPECT_NEAR(r.p_two_sided, 2 * r.p_greater, 1e-15);
  // Against a mu the test shifts.
  const auto shifted = OneSampleTTest(d, 3.2);
  EXPECT_EQ(shifted.t, 0);
  EXPECT_EQ(shifted.p_two_sided, 1);
}

TEST(OneSampleTTestTest, EdgeCasesAsScipy) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Fewer than 2 values: NaN.
  EXPECT_TRUE(std::isnan(OneSampleTTest(std::vector<double>{}).p_two_sided));
  const auto one = OneSampleTTest(std::vector<double>{2.0});
  EXPECT_TRUE(std::isnan(one.t));
  EXPECT_EQ(one.mean, 2.0);
  // Constant and away from mu: t = +inf, p = 0. Constant at mu: 0 / 0.
  const auto constant = OneSampleTTest(std::vector<double>{0.5, 0.5, 0.5});
  EXPECT_EQ(constant.t, std::numeric_limits<double>::infinity());
  EXPECT_EQ(constant.p_two_sided, 0);
  EXPECT_EQ(constant.p_greater, 0);
  EXPECT_EQ(constant.p_less, 1);
  const auto at_mu = OneSampleTTest(std::vector<double>{0.0, 0.0, 0.0});
  EXPECT_TRUE(std::isnan(at_mu.t));
  EXPECT_TRUE(std::isnan(at_mu.p_two_sided));
  EXPECT_TRUE(std::isnan(OneSampleTTest(std::vector<double>{1.0, nan, 2.0}).p_two_sided));
}

TEST(PairedTTestTest, RejectsMismatchedAndNonPositive) {
  const std::vector<double> x = {1, 2, 3};
  const std::vector<double> short_y = {1, 2};
  EXPECT_FALSE(PairedTTest(short_y, x));
  EXPECT_FALSE(PairedTTestLog(short_y, x));
  const std::vector<double> with_zero = {1, 0, 3};
  EXPECT_TRUE(PairedTTest(with_zero, x));
  auto log_result = PairedTTestLog(with_zero, x);
  ASSERT_FALSE(log_result);
  EXPECT_NE(log_result.error().message.find("not positive"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::stats
