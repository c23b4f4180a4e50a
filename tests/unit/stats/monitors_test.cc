// SPDX-License-Identifier: Apache-2.0
// Online monitors against every row of ewma_cusum.csv (formula transcription) and the ARL
// functions against every row of spc_arl.csv (R spc 0.6.7), plus reset/persistence behaviour
// and Page-Hinkley on planted steps.
#include "stats/monitors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <tuple>
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
constexpr double kInf = std::numeric_limits<double>::infinity();

// ewma_cusum.csv is a transcription of the same recurrences in double: README 1e-12.
constexpr double kChartRel = 1e-14;
// Values that are a difference of nearly equal numbers (C+ = 0.05 from 9.8 - 10.125 + 0.375)
// carry absolute rounding of a few ulps of the operands; the floor is far below any value.
constexpr double kChartAbs = 1e-15;

// spc_arl.csv: the README allows 1e-6 (numerical integration). Our Nystrom solutions are
// converged to rounding and the fixed-limit / CUSUM rows agree with spc to ~3e-12 (spc prints
// 15 digits; the residue is rounding in I - K, which grows like ARL * 1e-15).
constexpr double kArlRel = 1e-11;
// spc's vacl ARL stops its series when its geometric upper and lower tail bounds agree to
// 1e-7 and reports their midpoint, so its last digits are spc's own truncation: our exact
// propagation differs from it by ~5e-9.
constexpr double kVaclRel = 2e-8;
// spc's xewma.crit / xcusum.crit stop their secant search when the ARL is within ~1e-6 of the
// target, so the printed L and h are ~3e-10 from the exact roots we find.
constexpr double kCritRel = 1e-9;

// ---------------------------------------------------------------------------------------------
// ewma_cusum.csv
// ---------------------------------------------------------------------------------------------

TEST(ChartOracle, EveryRowOfEwmaCusumCsv) {
  const auto table = ReadGoldenCsv("ewma_cusum.csv");
  ASSERT_EQ(table.rows.size(), 90u);
  WorstError worst("ewma_cusum.csv");
  // One chart per parameter set, fed the series in row order (rows are i = 1..15 per set).
  std::map<std::tuple<double, double, double, double>, EwmaChart> ewmas;
  std::map<std::tuple<double, double, double, double>, TabularCusum> cusums;
  int ewma_rows = 0;
  int cusum_rows = 0;
  for (const OracleRow& row : table.rows) {
    SCOPED_TRACE(row.Where());
    const double mu0 = row.Num("mu0");
    const double sigma = row.Num("sigma");
    const double x = row.Num("x_i");
    const auto i = static_cast<int64_t>(row.Num("i"));
    const bool signal = row.Num("signal") != 0;
    auto check = [&](double actual, const std::string& column) {
      const double expected = row.Num(column);
      worst.Add(actual, expected);
      EXPECT_TRUE(NearRel(actual, expected, kChartRel, kChartAbs)) << column;
    };
    if (row.Str("chart") == "ewma") {
      ++ewma_rows;
      const EwmaParams params{mu0, sigma, row.Num("lambda"), row.Num("L")};
      const auto key = std::make_tuple(mu0, sigma, params.lambda, params.L);
      auto it = ewmas.try_emplace(key, params).first;
      const EwmaStep step = it->second.Update(x);
      EXPECT_EQ(step.i, i);
      check(step.z, "ewma_z");
      check(step.lcl, "lcl");
      check(step.ucl, "ucl");
      EXPECT_EQ(step.signal, signal);
      EXPECT_EQ(it->second.state().i, i);
      EXPECT_EQ(it->second.state().z, step.z);
    } else {
      ++cusum_rows;
      const CusumParams params{mu0, sigma, row.Num("k_sigma"), row.Num("h_sigma")};
      const auto key = std::make_tuple(mu0, sigma, params.k, params.h);
      auto it = cusums.try_emplace(key, params).first;
      const CusumStep step = it->second.Update(x);
      EXPECT_EQ(step.i, i);
      check(step.c_pos, "cusum_pos");
      check(step.c_neg, "cusum_neg");
      EXPECT_EQ(step.signal_up || step.signal_down, signal);
      EXPECT_FALSE(step.signal_down);  // the series only rises
    }
  }
  EXPECT_EQ(ewma_rows, 45);
  EXPECT_EQ(cusum_rows, 45);
  EXPECT_EQ(ewmas.size(), 3u);
  EXPECT_EQ(cusums.size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// EWMA chart behaviour
// ---------------------------------------------------------------------------------------------

TEST(EwmaChart, StartsAtTargetAndLimitsWidenToTheAsymptote) {
  const EwmaParams params{100, 2, 0.2, 3};
  EwmaChart chart(params);
  EXPECT_EQ(chart.state().i, 0);
  EXPECT_EQ(chart.state().z, 100);  // the default state means "just reset", whatever mu0 is
  double previous_width = 0;
  for (int i = 1; i <= 200; ++i) {
    const EwmaStep step = chart.Update(100);
    EXPECT_EQ(step.z, 100);
    EXPECT_FALSE(step.signal);
    const double width = step.ucl - 100;
    EXPECT_NEAR(100 - step.lcl, width, 1e-12);
    EXPECT_GE(width, previous_width);
    previous_width = width;
  }
  EXPECT_NEAR(previous_width, 3 * 2 * std::sqrt(0.2 / 1.8), 1e-12);
}

TEST(EwmaChart, LambdaOneIsShewhart) {
  EwmaChart chart({0, 1, 1.0, 3});
  EwmaStep step = chart.Update(2.9);
  EXPECT_EQ(step.z, 2.9);
  EXPECT_NEAR(step.ucl, 3, 1e-15);
  EXPECT_FALSE(step.signal);
  step = chart.Update(-3.1);
  EXPECT_EQ(step.z, -3.1);
  EXPECT_TRUE(step.signal);
  step = chart.Update(0);
  EXPECT_FALSE(step.signal);  // no memory
}

TEST(EwmaChart, ResetAndStateRoundTrip) {
  const EwmaParams params{10, 0.5, 0.1, 2.7};
  const std::vector<double> series = {10, 10.5, 9.8, 10.2, 10.1, 9.9, 10.4, 10.6, 11.2, 11.5};
  EwmaChart straight(params);
  std::vector<EwmaStep> expected;
  for (double x : series) expected.push_back(straight.Update(x));

  // Persist after every point and restore into a fresh object: identical steps.
  EwmaState persisted{};
  for (size_t j = 0; j < series.size(); ++j) {
    EwmaChart restored(params, persisted);
    const EwmaStep step = restored.Update(series[j]);
    EXPECT_EQ(step.i, expected[j].i);
    EXPECT_EQ(step.z, expected[j].z);
    EXPECT_EQ(step.lcl, expected[j].lcl);
    EXPECT_EQ(step.ucl, expected[j].ucl);
    EXPECT_EQ(step.signal, expected[j].signal);
    persisted = restored.state();
  }
  EXPECT_TRUE(expected.back().signal);

  // Reset re-baselines: the next point behaves like the very first one.
  straight.Reset();
  EXPECT_EQ(straight.state().i, 0);
  EXPECT_EQ(straight.state().z, 10);
  const EwmaStep first = straight.Update(10);
  EXPECT_EQ(first.i, 1);
  EXPECT_EQ(first.z, expected.front().z);
  EXPECT_EQ(first.lcl, expected.front().lcl);
  EXPECT_FALSE(first.signal);
}

TEST(EwmaChart, NonFiniteInputIsNotAbsorbed) {
  EwmaChart chart({0, 1, 0.2, 3});
  chart.Update(0.5);
  const EwmaState before = chart.state();
  for (double bad : {kNaN, kInf, -kInf}) {
    const EwmaStep step = chart.Update(bad);
    EXPECT_FALSE(step.signal);
    EXPECT_EQ(step.i, before.i);
    EXPECT_EQ(step.z, before.z);
    EXPECT_EQ(chart.state().i, before.i);
    EXPECT_EQ(chart.state().z, before.z);
  }
  EXPECT_EQ(chart.Update(0.5).i, 2);
}

// ---------------------------------------------------------------------------------------------
// Tabular CUSUM behaviour
// ---------------------------------------------------------------------------------------------

TEST(TabularCusum, DetectsBothDirectionsAndResets) {
  TabularCusum cusum({0, 1, 0.5, 4});
  for (int i = 0; i < 50; ++i) {
    const CusumStep step = cusum.Update(0);
    EXPECT_EQ(step.c_pos, 0);
    EXPECT_EQ(step.c_neg, 0);
    EXPECT_FALSE(step.signal_up || step.signal_down);
  }
  // A 2-sigma drop accumulates 1.5 per point: above h = 4 at the third point.
  CusumStep step;
  for (int i = 0; i < 3; ++i) step = cusum.Update(-2);
  EXPECT_EQ(step.c_pos, 0);
  EXPECT_DOUBLE_EQ(step.c_neg, 4.5);
  EXPECT_TRUE(step.signal_down);
  EXPECT_FALSE(step.signal_up);
  EXPECT_EQ(step.i, 53);

  // Exactly h is not a signal (strict inequality).
  TabularCusum edge({0, 1, 0.5, 4});
  edge.Update(2.5);
  step = edge.Update(2.5);
  EXPECT_EQ(step.c_pos, 4);
  EXPECT_FALSE(step.signal_up);

  cusum.Reset();
  EXPECT_EQ(cusum.state().i, 0);
  EXPECT_EQ(cusum.state().c_pos, 0);
  EXPECT_EQ(cusum.state().c_neg, 0);
  EXPECT_FALSE(cusum.Update(-2).signal_down);
}

TEST(TabularCusum, StateRoundTripAndNonFiniteInput) {
  const CusumParams params{10, 0.5, 0.25, 8};
  const std::vector<double> series = {10, 10.5, 9.8, 10.2, 10.1, 9.9, 10.4, 10.6, 11.2, 11.5, 11.1};
  TabularCusum straight(params);
  CusumState persisted{};
  for (double x : series) {
    const CusumStep a = straight.Update(x);
    TabularCusum restored(params, persisted);
    const CusumStep b = restored.Update(x);
    EXPECT_EQ(a.i, b.i);
    EXPECT_EQ(a.c_pos, b.c_pos);
    EXPECT_EQ(a.c_neg, b.c_neg);
    EXPECT_EQ(a.signal_up, b.signal_up);
    persisted = restored.state();
  }
  EXPECT_TRUE(straight.Update(11.8).signal_up);
  const CusumState before = straight.state();
  const CusumStep bad = straight.Update(kNaN);
  EXPECT_FALSE(bad.signal_up || bad.signal_down);
  EXPECT_EQ(straight.state().i, before.i);
  EXPECT_EQ(straight.state().c_pos, before.c_pos);
}

// ---------------------------------------------------------------------------------------------
// Page-Hinkley
// ---------------------------------------------------------------------------------------------

TEST(PageHinkley, QuietOnAConstantSeries) {
  PageHinkley ph({0.005, 1.0});
  for (int i = 0; i < 10000; ++i) {
    const PageHinkleyStep step = ph.Update(42.0);
    EXPECT_FALSE(step.signal_up || step.signal_down) << i;
  }
  // Constant data: mean == x, so m_up falls by delta per point and its minimum follows it.
  EXPECT_EQ(ph.state().n, 10000);
  EXPECT_EQ(ph.state().mean, 42.0);
  EXPECT_NEAR(ph.state().m_up, -50.0, 1e-9);
  EXPECT_EQ(ph.state().m_up, ph.state().min_up);
  EXPECT_NEAR(ph.state().m_down, 50.0, 1e-9);
  EXPECT_EQ(ph.state().m_down, ph.state().max_down);
}

TEST(PageHinkley, DetectsAPlantedStepUpQuicklyAndNotBefore) {
  // Deterministic +/-0.5 noise around 10, step to 13 at t = 200.
  PageHinkley ph({0.1, 20});
  int64_t first_signal = -1;
  for (int t = 0; t < 400; ++t) {
    const double x = (t < 200 ? 10.0 : 13.0) + ((t * 7919) % 11 - 5) * 0.1;
    const PageHinkleyStep step = ph.Update(x);
    EXPECT_FALSE(step.signal_down) << t;
    if (step.signal_up && first_signal < 0) first_signal = t;
  }
  ASSERT_GE(first_signal, 200);
  EXPECT_LT(first_signal, 215);
}

TEST(PageHinkley, DetectsAPlantedStepDownAndResets) {
  const PageHinkleyParams params{0.05, 10};
  PageHinkley ph(params);
  int64_t first_signal = -1;
  for (int t = 0; t < 200; ++t) {
    const double x = t < 100 ? 5.0 : 3.0;
    const PageHinkleyStep step = ph.Update(x);
    EXPECT_FALSE(step.signal_up);
    if (step.signal_down && first_signal < 0) first_signal = t;
  }
  EXPECT_GE(first_signal, 100);
  EXPECT_LT(first_signal, 110);

  // After acknowledging, the new level is the baseline: quiet.
  ph.Reset();
  EXPECT_EQ(ph.state().n, 0);
  for (int t = 0; t < 200; ++t) {
    const PageHinkleyStep step = ph.Update(3.0);
    EXPECT_FALSE(step.signal_up || step.signal_down);
  }

  // Persist/restore mid-stream reproduces the straight run.
  PageHinkley straight(params);
  PageHinkleyState persisted{};
  for (int t = 0; t < 150; ++t) {
    const double x = t < 100 ? 5.0 : 3.0;
    const PageHinkleyStep a = straight.Update(x);
    PageHinkley restored(params, persisted);
    const PageHinkleyStep b = restored.Update(x);
    EXPECT_EQ(a.ph_up, b.ph_up);
    EXPECT_EQ(a.ph_down, b.ph_down);
    EXPECT_EQ(a.signal_down, b.signal_down);
    persisted = restored.state();
  }
  const PageHinkleyStep bad = straight.Update(kNaN);
  EXPECT_FALSE(bad.signal_up || bad.signal_down);
  EXPECT_EQ(straight.state().n, 150);
  EXPECT_FALSE(std::isnan(straight.state().mean));
}

// ---------------------------------------------------------------------------------------------
// spc_arl.csv
// ---------------------------------------------------------------------------------------------

TEST(ArlOracle, EveryRowOfSpcArlCsv) {
  const auto table = ReadGoldenCsv("spc_arl.csv");
  ASSERT_EQ(table.rows.size(), 114u);
  WorstError worst_fixed("spc_arl.csv ewma fixed");
  WorstError worst_vacl("spc_arl.csv ewma vacl");
  WorstError worst_cusum("spc_arl.csv cusum");
  WorstError worst_crit("spc_arl.csv critical L/h");
  std::map<std::string, int> counts;
  for (const OracleRow& row : table.rows) {
    SCOPED_TRACE(row.Where());
    const std::string& chart = row.Str("chart");
    ++counts[chart];
    if (chart == "ewma_two_sided_fixed_limits" || chart == "ewma_two_sided_vacl_limits") {
      const bool vacl = chart == "ewma_two_sided_vacl_limits";
      const double actual = EwmaArl(row.Num("lambda"), row.Num("L"), row.Num("mu"),
                                    vacl ? EwmaLimits::kVarianceAdjusted : EwmaLimits::kFixed);
      (vacl ? worst_vacl : worst_fixed).Add(actual, row.Num("arl"));
      EXPECT_TRUE(NearRel(actual, row.Num("arl"), vacl ? kVaclRel : kArlRel));
    } else if (chart == "cusum_one_sided" || chart == "cusum_two_sided") {
      const double k = row.Num("k");
      const double h = row.Num("h");
      const double mu = row.Num("mu");
      const double actual =
          chart == "cusum_one_sided" ? CusumArlOneSided(k, h, mu) : CusumArlTwoSided(k, h, mu);
      worst_cusum.Add(actual, row.Num("arl"));
      EXPECT_TRUE(NearRel(actual, row.Num("arl"), kArlRel));
    } else if (chart == "ewma_crit_L_for_target_ARL0") {
      const double lambda = row.Num("lambda");
      const double arl0 = row.Num("arl");
      const double L = EwmaCriticalL(lambda, arl0);
      worst_crit.Add(L, row.Num("L"));
      EXPECT_TRUE(NearRel(L, row.Num("L"), kCritRel));
      EXPECT_TRUE(NearRel(EwmaArl(lambda, L, 0), arl0, 1e-10));
    } else if (chart == "cusum_crit_h_for_target_ARL0_two_sided") {
      const double k = row.Num("k");
      const double arl0 = row.Num("arl");
      const double h = CusumCriticalH(k, arl0);
      worst_crit.Add(h, row.Num("h"));
      EXPECT_TRUE(NearRel(h, row.Num("h"), kCritRel));
      EXPECT_TRUE(NearRel(CusumArlTwoSided(k, h, 0), arl0, 1e-10));
    } else {
      ADD_FAILURE() << "unknown chart " << chart;
    }
  }
  EXPECT_EQ(counts["ewma_two_sided_fixed_limits"], 48);
  EXPECT_EQ(counts["ewma_two_sided_vacl_limits"], 4);
  EXPECT_EQ(counts["cusum_one_sided"], 24);
  EXPECT_EQ(counts["cusum_two_sided"], 24);
  EXPECT_EQ(counts["ewma_crit_L_for_target_ARL0"], 8);
  EXPECT_EQ(counts["cusum_crit_h_for_target_ARL0_two_sided"], 6);
}

// ---------------------------------------------------------------------------------------------
// ARL properties beyond the oracle
// ---------------------------------------------------------------------------------------------

TEST(Arl, ClosedFormsAndSymmetry) {
  // Shewhart chart: ARL = 1 / P(|X + mu| > L).
  for (const double mu : {0.0, 0.5, 1.0, 2.0}) {
    const double p_signal =
        std::erfc((3 - mu) / std::sqrt(2.0)) / 2 + std::erfc((3 + mu) / std::sqrt(2.0)) / 2;
    EXPECT_TRUE(NearRel(EwmaArl(1.0, 3.0, mu), 1 / p_signal, 1e-11)) << mu;
    EXPECT_TRUE(NearRel(EwmaArl(1.0, 3.0, mu, EwmaLimits::kVarianceAdjusted), 1 / p_signal, 1e-11));
  }
  // h = 0: the one-sided CUSUM signals on the first point above k.
  EXPECT_TRUE(NearRel(CusumArlOneSided(0.5, 0, 0), 2 / std::erfc(0.5 / std::sqrt(2.0)), 1e-12));
  // Two-sided charts are symmetric in the shift.
  EXPECT_TRUE(NearRel(EwmaArl(0.2, 2.86, 0.7), EwmaArl(0.2, 2.86, -0.7), 1e-11));
  EXPECT_TRUE(NearRel(EwmaArl(0.2, 2.86, 0.7, EwmaLimits::kVarianceAdjusted),
                      EwmaArl(0.2, 2.86, -0.7, EwmaLimits::kVarianceAdjusted), 1e-11));
  EXPECT_TRUE(NearRel(CusumArlTwoSided(0.5, 4, 0.7), CusumArlTwoSided(0.5, 4, -0.7), 1e-11));
  // Two-sided at mu = 0 is half the one-sided ARL.
  EXPECT_TRUE(NearRel(CusumArlTwoSided(0.5, 4, 0), CusumArlOneSided(0.5, 4, 0) / 2, 1e-14));
  // L = 0 signals at once.
  EXPECT_EQ(EwmaArl(0.1, 0.0, 0), 1.0);
}

TEST(Arl, MonotoneAndVaclFasterThanFixed) {
  double previous = kInf;
  for (const double mu : {0.0, 0.25, 0.5, 1.0, 2.0, 4.0}) {
    const double fixed = EwmaArl(0.1, 2.7, mu);
    const double vacl = EwmaArl(0.1, 2.7, mu, EwmaLimits::kVarianceAdjusted);
    EXPECT_LT(fixed, previous);
    EXPECT_LT(vacl, fixed);  // narrower early limits can only signal sooner
    EXPECT_GE(vacl, 1.0);
    previous = fixed;
  }
  EXPECT_LT(CusumArlOneSided(0.5, 4, 0), CusumArlOneSided(0.5, 5, 0));
  EXPECT_GT(CusumArlOneSided(0.5, 4, -1), CusumArlOneSided(0.5, 4, 0));
}

TEST(Arl, SmallLambdaConvergesWithItsNodeCount) {
  // lambda = 0.01 needs ~110 nodes. The root (1.8196874581698 by an independent 300-node
  // solution) must return its own ARL, and vacl limits can only shorten the run.
  const double L = EwmaCriticalL(0.01, 370.4);
  EXPECT_TRUE(NearRel(L, 1.8196874581698, 1e-9));
  EXPECT_TRUE(NearRel(EwmaArl(0.01, L, 0), 370.4, 1e-9));
  const double vacl = EwmaArl(0.01, L, 0, EwmaLimits::kVarianceAdjusted);
  EXPECT_LT(vacl, 370.4);
  EXPECT_GT(vacl, 100);
}

TEST(Arl, InvalidArgumentsGiveNaN) {
  EXPECT_TRUE(std::isnan(EwmaArl(0, 3, 0)));
  EXPECT_TRUE(std::isnan(EwmaArl(1.5, 3, 0)));
  // Below lambda = 1e-3 the quadrature would be too costly or inaccurate: NaN, not a stall.
  EXPECT_TRUE(std::isnan(EwmaArl(1e-4, 3, 0)));
  EXPECT_TRUE(std::isnan(EwmaArl(1e-6, 3, 0, EwmaLimits::kVarianceAdjusted)));
  EXPECT_TRUE(std::isnan(EwmaCriticalL(1e-4, 370)));
  EXPECT_TRUE(std::isnan(EwmaArl(kNaN, 3, 0)));
  EXPECT_TRUE(std::isnan(EwmaArl(0.2, -1, 0)));
  EXPECT_TRUE(std::isnan(EwmaArl(0.2, kInf, 0)));
  EXPECT_TRUE(std::isnan(EwmaArl(0.2, 3, kNaN)));
  EXPECT_TRUE(std::isnan(EwmaArl(0.2, 3, kNaN, EwmaLimits::kVarianceAdjusted)));
  EXPECT_TRUE(std::isnan(CusumArlOneSided(kNaN, 4, 0)));
  EXPECT_TRUE(std::isnan(CusumArlOneSided(0.5, -1, 0)));
  EXPECT_TRUE(std::isnan(CusumArlOneSided(0.5, 4, kInf)));
  EXPECT_TRUE(std::isnan(CusumArlTwoSided(0.5, kNaN, 0)));
  EXPECT_TRUE(std::isnan(EwmaCriticalL(0.2, 1.0)));
  EXPECT_TRUE(std::isnan(EwmaCriticalL(0.2, kNaN)));
  EXPECT_TRUE(std::isnan(EwmaCriticalL(0, 370)));
  EXPECT_TRUE(std::isnan(EwmaCriticalL(0.2, 1e300)));  // beyond any representable L
  EXPECT_TRUE(std::isnan(CusumCriticalH(0.5, 0.5)));
  EXPECT_TRUE(std::isnan(CusumCriticalH(kNaN, 370)));
  // With k = 2 the two-sided chart's ARL at h = 0 is already 22: 10 is unreachable.
  EXPECT_TRUE(std::isnan(CusumCriticalH(2.0, 10)));
}

}  // namespace
}  // namespace perfwarden::stats
