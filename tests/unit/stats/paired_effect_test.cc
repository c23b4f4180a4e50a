// SPDX-License-Identifier: Apache-2.0
// Log ratios and the one-sample Hodges-Lehmann estimate against golden/paired.csv (NumPy 1.24:
// the median of the Walsh averages of d = log(y / x), and the mean and median of d, every row),
// with a brute-force check of the Walsh median and the input errors.
#include "stats/paired_effect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stats/descriptive.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::WorstError;

// Oracle README: HL, mean and median 1e-12 relative.
constexpr double kRel = 1e-12;

TEST(PairedEffectOracle, HodgesLehmannMeanMedianEveryRow) {
  const auto table = testing::ReadGoldenCsv("paired.csv");
  ASSERT_EQ(table.rows.size(), 250u);
  WorstError worst_hl("one-sample HL"), worst_mean("mean log ratio"),
      worst_median("median log ratio");
  for (const auto& row : table.rows) {
    auto d = LogRatios(row.Vec("y"), row.Vec("x"));
    ASSERT_TRUE(d) << row.Where();
    const double hl = OneSampleHodgesLehmann(*d);
    const double mean = Mean(*d);
    const double median = Median(*d);
    EXPECT_TRUE(NearRel(hl, row.Num("hl_log_ratio"), kRel)) << row.Where();
    EXPECT_TRUE(NearRel(mean, row.Num("mean_log_ratio"), kRel)) << row.Where();
    EXPECT_TRUE(NearRel(median, row.Num("median_log_ratio"), kRel)) << row.Where();
    worst_hl.Add(hl, row.Num("hl_log_ratio"));
    worst_mean.Add(mean, row.Num("mean_log_ratio"));
    worst_median.Add(median, row.Num("median_log_ratio"));
  }
}

TEST(PairedEffectTest, WalshMedianSmallCases) {
  EXPECT_EQ(OneSampleHodgesLehmann(std::vector<double>{0.3}), 0.3);
  // {1, 2}: Walsh averages 1, 1.5, 2 -> 1.5. {0, 0, 9}: 0, 0, 4.5, 0, 4.5, 9 -> (0 + 4.5) / 2.
  EXPECT_EQ(OneSampleHodgesLehmann(std::vector<double>{2, 1}), 1.5);
  EXPECT_EQ(OneSampleHodgesLehmann(std::vector<double>{0, 9, 0}), 2.25);
  // A single wild value barely moves it (it moves the mean by 10).
  EXPECT_NEAR(OneSampleHodgesLehmann(std::vector<double>{0.01, 0.02, 0.03, 0.04, 50}), 0.03,
              0.0100001);
  EXPECT_TRUE(std::isnan(OneSampleHodgesLehmann(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(OneSampleHodgesLehmann(std::vector<double>{1, NAN})));
}

TEST(PairedEffectTest, LogRatioErrors) {
  const std::vector<double> x = {1, 2, 4};
  auto d = LogRatios(std::vector<double>{2, 2, 2}, x);
  ASSERT_TRUE(d);
  EXPECT_DOUBLE_EQ((*d)[0], std::log(2.0));
  EXPECT_EQ((*d)[1], 0);
  EXPECT_DOUBLE_EQ((*d)[2], -std::log(2.0));
  EXPECT_FALSE(LogRatios(std::vector<double>{1, 2}, x));
  auto zero = LogRatios(std::vector<double>{1, 0, 1}, x);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("pair 1"), std::string::npos);
  EXPECT_FALSE(LogRatios(std::vector<double>{1, INFINITY, 1}, x));
}

}  // namespace
}  // namespace perfwarden::stats
