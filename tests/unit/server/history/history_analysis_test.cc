// SPDX-License-Identifier: Apache-2.0
// The per-series history analysis (server/history/analysis.h) without a database: a planted
// step becomes one alert with its CI and direction, a known alert is not raised again, the
// fingerprint change labels it, a re-baselined series starts over, the persisted states give
// the same answer as a fresh analysis after every append, the monitors arm on their warm-up and
// agree with a large step, q-values are Benjamini-Hochberg over the series evaluated (a
// refreshed alert keeps its factor), and an environment change names the keys that differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <vector>

#include "server/history/analysis.h"
#include "server/history/service.h"
#include "stats/history_detector.h"

namespace perfwarden::server::history {
namespace {

std::vector<double> Series(std::size_t n, std::size_t step_at, double factor, double cv,
                           uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, cv);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back((i >= step_at ? 1000.0 * factor : 1000.0) * (1 + noise(rng)));
  }
  return out;
}

store::HistorySeriesData Input(std::vector<double> levels) {
  store::HistorySeriesData input;
  input.testbed_ids.assign(levels.size(), 7);
  input.levels = std::move(levels);
  return input;
}

TEST(AnalyseSeries, APlantedStepIsOneAlertWithItsRangeAndCi) {
  const HistoryParams params;
  auto out = AnalyseSeries(Input(Series(60, 30, 1.08, 0.01, 1)), params);
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  ASSERT_EQ(out->alerts.size(), 1u);
  const store::NewAlertRecord& a = out->alerts[0];
  EXPECT_EQ(a.position, 30);
  EXPECT_EQ(a.kind, "regression");
  EXPECT_EQ(a.cause, "code");
  EXPECT_NEAR(a.magnitude, 0.08, 0.01);
  ASSERT_TRUE(a.ci_low.has_value() && a.ci_high.has_value());
  EXPECT_LT(*a.ci_low, a.magnitude);
  EXPECT_GT(*a.ci_high, a.magnitude);
  EXPECT_LT(a.p_value, 1e-6);
  EXPECT_EQ(a.detectors.front(), "e-divisive");
  EXPECT_EQ(out->steps.size(), 1u);
  EXPECT_EQ(out->monitors.next_position, 60);
  EXPECT_EQ(out->detector_state.length, 60u);
}

TEST(AnalyseSeries, DirectionDecidesRegressionOrImprovement) {
  store::HistorySeriesData input = Input(Series(60, 30, 1.10, 0.01, 2));
  input.key.direction = Direction::kHigherIsBetter;  // a throughput that rose
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->alerts.size(), 1u);
  EXPECT_EQ(out->alerts[0].kind, "improvement");
}

TEST(AnalyseSeries, AKnownAlertIsNotRaisedAgainAndNoiseRaisesNothing) {
  store::HistorySeriesData input = Input(Series(60, 30, 1.08, 0.01, 3));
  input.alerted_positions = {31};  // the step as an earlier analysis placed it
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->steps.size(), 1u);
  EXPECT_TRUE(out->alerts.empty());
  EXPECT_TRUE(out->refreshed.empty());  // triaged: kept as it was
  auto noise = AnalyseSeries(Input(Series(300, 1000, 1, 0.03, 4)), HistoryParams{});
  ASSERT_TRUE(noise.has_value());
  EXPECT_TRUE(noise->alerts.empty());
}

TEST(AnalyseSeries, AnOpenAlertIsMeasuredAgainAndFollowsItsStep) {
  store::HistorySeriesData input = Input(Series(60, 30, 1.08, 0.01, 3));
  input.alerted_positions = {31};
  input.open_alerts = {{31, 1e-6, 4e-6}};
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->alerts.empty());
  ASSERT_EQ(out->refreshed.size(), 1u);
  EXPECT_EQ(out->refreshed[0].first, 31);
  const store::NewAlertRecord& again = out->refreshed[0].second;
  EXPECT_EQ(again.position, 30);
  EXPECT_NEAR(again.magnitude, 0.08, 0.01);
  ASSERT_TRUE(again.ci_low.has_value() && again.ci_high.has_value());
  EXPECT_LT(*again.ci_low, *again.ci_high);
  // The factor of the ingest that raised it (q / p = 4) on the new p-value.
  EXPECT_DOUBLE_EQ(again.q_value, std::min(1.0, again.p_value * 4));
}

TEST(AnalyseSeries, AStepWhereTheFingerprintChangedIsAnEnvironmentChange) {
  store::HistorySeriesData input = Input(Series(50, 25, 1.12, 0.01, 5));
  for (std::size_t i = 25; i < 50; ++i) input.testbed_ids[i] = 8;
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->alerts.size(), 1u);
  EXPECT_EQ(out->alerts[0].cause, "environment");
}

TEST(AnalyseSeries, ARebaselinedSeriesIsAnalysedFromItsBaseline) {
  // Points from position 30 on (the acknowledged step's first bad point): one level, nothing.
  const std::vector<double> all = Series(80, 30, 1.08, 0.01, 6);
  store::HistorySeriesData input = Input(std::vector<double>(all.begin() + 30, all.end()));
  input.baseline_from = 30;
  input.alerted_positions = {30};
  SeriesState stale;
  stale.monitors.next_position = 10;  // before the baseline: must start over
  stale.monitors.armed = true;
  auto out = AnalyseSeries(input, HistoryParams{}, stale);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->steps.empty());
  EXPECT_TRUE(out->alerts.empty());
  EXPECT_EQ(out->monitors.next_position, 80);
  EXPECT_NEAR(out->monitors.ewma_params.mu0, 1080, 15);  // re-armed on the new level
}

TEST(AnalyseSeries, PersistedStatesGiveTheFreshAnswerAfterEveryAppend) {
  const std::vector<double> all = Series(160, 70, 0.9, 0.015, 7);
  SeriesState carried;
  std::vector<int64_t> alerted;
  std::size_t alerts = 0;
  for (std::size_t n = 1; n <= all.size(); ++n) {
    store::HistorySeriesData step = Input(std::vector<double>(all.begin(), all.begin() + n));
    step.alerted_positions = alerted;
    auto out = AnalyseSeries(step, HistoryParams{}, carried);
    ASSERT_TRUE(out.has_value());
    store::HistorySeriesData fresh = Input(std::vector<double>(all.begin(), all.begin() + n));
    fresh.alerted_positions = alerted;
    auto expected = AnalyseSeries(fresh, HistoryParams{});
    ASSERT_TRUE(expected.has_value());
    ASSERT_EQ(out->steps.size(), expected->steps.size()) << n;
    for (std::size_t i = 0; i < out->steps.size(); ++i) {
      EXPECT_EQ(out->steps[i].position, expected->steps[i].position) << n;
      EXPECT_EQ(out->steps[i].step.magnitude, expected->steps[i].step.magnitude) << n;
    }
    EXPECT_EQ(MonitorStateJson(out->monitors), MonitorStateJson(expected->monitors)) << n;
    EXPECT_EQ(out->creep_scan, expected->creep_scan) << n;
    for (const store::NewAlertRecord& a : out->alerts) alerted.push_back(a.position);
    alerts += out->alerts.size();
    // Through JSON, as the store keeps them.
    const std::string detector_json = DetectorStateJson(out->detector_state, out->creep_scan);
    auto detector = ParseDetectorState(detector_json);
    auto creep = ParseCreepScan(detector_json);
    auto monitors = ParseMonitorState(MonitorStateJson(out->monitors));
    ASSERT_TRUE(detector.has_value() && creep.has_value() && monitors.has_value());
    EXPECT_EQ(*creep, out->creep_scan) << n;  // every figure reads back as written
    carried.detector = *detector;
    carried.creep = *creep;
    carried.monitors = *monitors;
  }
  EXPECT_EQ(alerts, 1u);
  ASSERT_EQ(alerted.size(), 1u);
  EXPECT_NEAR(static_cast<double>(alerted[0]), 70, 1);
}

TEST(AnalyseSeries, MonitorsArmOnTheirWarmUpAndAgreeWithALargeStep) {
  HistoryParams params;
  auto out = AnalyseSeries(Input(Series(60, 30, 1.20, 0.01, 8)), params);
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->monitors.armed);
  EXPECT_NEAR(out->monitors.ewma_params.mu0, 1000, 10);
  EXPECT_GT(out->monitors.cusum_params.h, 0);
  ASSERT_EQ(out->alerts.size(), 1u);
  const std::vector<std::string>& d = out->alerts[0].detectors;
  EXPECT_NE(std::find(d.begin(), d.end(), "ewma"), d.end());
  EXPECT_NE(std::find(d.begin(), d.end(), "cusum"), d.end());
  EXPECT_GE(out->monitors.cusum_up, 30);
  EXPECT_EQ(out->monitors.cusum_down, -1);
}

TEST(AnalyseSeries, RejectsInconsistentInput) {
  store::HistorySeriesData input = Input(Series(20, 100, 1, 0.01, 9));
  input.testbed_ids.pop_back();
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().field, "testbed_ids");
}

// The change-points route reports AnalyseSeries' steps from scratch; they are the two stages of
// stats::DetectSteps on the same levels (perfwarden analyze's answer).
// The threshold filters on the magnitude the alert carries: a -5.2% step 15 points after a +3.5%
// one is the same alert at thresholds of 3, 4 and 5%, none at 6%.
TEST(AnalyseSeries, ThresholdFiltersTheAlertedMagnitude) {
  std::vector<double> levels = Series(140, 60, 1.035, 0.002, 14);
  for (std::size_t i = 75; i < levels.size(); ++i) levels[i] *= 1 - 0.052;
  std::optional<store::NewAlertRecord> at3;
  for (double threshold : {0.03, 0.04, 0.05, 0.06}) {
    HistoryParams params;
    params.detector.threshold = threshold;
    auto out = AnalyseSeries(Input(levels), params);
    ASSERT_TRUE(out.has_value()) << out.error().ToString();
    std::vector<store::NewAlertRecord> big;
    for (const auto& a : out->alerts) {
      EXPECT_GE(std::fabs(a.magnitude), threshold);
      if (a.position == 75) big.push_back(a);
    }
    if (threshold == 0.06) {
      EXPECT_TRUE(out->alerts.empty()) << out->alerts[0].magnitude;
      continue;
    }
    EXPECT_EQ(out->alerts.size(), threshold == 0.03 ? 2u : 1u) << "at " << threshold;
    ASSERT_EQ(big.size(), 1u) << "at " << threshold;
    EXPECT_NEAR(big[0].magnitude, -0.052, 0.002);
    if (!at3) at3 = big[0];
    EXPECT_EQ(big[0].magnitude, at3->magnitude) << "at " << threshold;
    EXPECT_EQ(big[0].ci_low, at3->ci_low) << "at " << threshold;
    EXPECT_EQ(big[0].ci_high, at3->ci_high) << "at " << threshold;
    EXPECT_EQ(big[0].kind, "improvement");
  }
}

TEST(AnalyseSeries, FromScratchItsStepsAreDetectSteps) {
  std::vector<double> two_steps = Series(120, 40, 1.10, 0.01, 11);
  for (std::size_t i = 80; i < two_steps.size(); ++i) two_steps[i] *= 0.85;
  for (const std::vector<double>& levels :
       {Series(60, 30, 1.08, 0.01, 1), Series(300, 1000, 1, 0.03, 4), two_steps,
        Series(400, 150, 0.93, 0.02, 12), Series(5, 2, 2, 0.01, 13)}) {
    auto out = AnalyseSeries(Input(levels), HistoryParams{});
    ASSERT_TRUE(out.has_value());
    auto steps = stats::DetectSteps(levels, HistoryParams{}.detector);
    ASSERT_TRUE(steps.has_value());
    ASSERT_EQ(out->steps.size(), steps->size());
    for (std::size_t i = 0; i < steps->size(); ++i) {
      EXPECT_EQ(out->steps[i].position, static_cast<int64_t>((*steps)[i].index));
      EXPECT_EQ(out->steps[i].step, (*steps)[i]);
    }
  }
}

TEST(HistoryStates, UnreadableStatesAreErrorsAndEmptyOnesFresh) {
  EXPECT_FALSE(ParseMonitorState("{\"armed\": 3}").has_value());
  EXPECT_FALSE(ParseDetectorState("[1, 2]").has_value());
  auto fresh = ParseMonitorState("{}");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_FALSE(fresh->armed);
  auto none = ParseDetectorState("");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  // A detector state from before the creep search kept its own: none, so it scans afresh.
  auto older = ParseCreepScan(R"({"length": 3, "window_len": 30, "split_indices": []})");
  ASSERT_TRUE(older.has_value());
  EXPECT_FALSE(older->has_value());
  auto bad = ParseCreepScan(R"({"creep": {"length": 70, "runs": [[1, 2]]}})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "detector_state");
}

// Values near the double's range (1.7e308) overflow the monitors' sums to infinity: the state
// must still read back (it was written with nulls and re-analysed from scratch at every run).
TEST(HistoryStates, OverflowedNumbersReadBack) {
  MonitorState m;
  m.next_position = 12;
  m.warm_n = 10;
  m.warm_mean = 1.7e308;
  m.warm_m2 = HUGE_VAL;
  m.armed = true;
  m.ewma_params = {1.7e308, HUGE_VAL, 0.2, 3};
  m.ewma = {4, -HUGE_VAL};
  m.cusum_params = {1.7e308, NAN, 0.5, 5};
  m.cusum = {4, HUGE_VAL, 0};
  auto back = ParseMonitorState(MonitorStateJson(m));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->warm_mean, 1.7e308);
  EXPECT_EQ(back->warm_m2, HUGE_VAL);
  EXPECT_EQ(back->ewma_params.sigma, HUGE_VAL);
  EXPECT_EQ(back->ewma.z, -HUGE_VAL);
  EXPECT_TRUE(std::isnan(back->cusum_params.sigma));
  EXPECT_EQ(back->cusum.c_pos, HUGE_VAL);
  EXPECT_EQ(MonitorStateJson(*back), MonitorStateJson(m));
  // A word that is not one of the three is still unreadable.
  EXPECT_FALSE(ParseMonitorState(R"({"next_position": 1, "warmup": {"n": 1, "mean": "big",
      "m2": 0}, "armed": false, "signals": {"ewma_up": -1, "ewma_down": -1, "cusum_up": -1,
      "cusum_down": -1}})")
                   .has_value());
}

TEST(RefreshedQValue, KeepsTheFactorOfTheIngestThatRaisedTheAlert) {
  EXPECT_DOUBLE_EQ(RefreshedQValue({3, 1e-5, 2e-5}, 1e-6), 2e-6);
  EXPECT_EQ(RefreshedQValue({3, 0.1, 0.8}, 0.5), 1.0);  // at most 1
  // Far below 1e-154 the product p * q would underflow; the factor is taken first.
  EXPECT_DOUBLE_EQ(RefreshedQValue({3, 1e-200, 2e-200}, 1e-250), 2e-250);
  EXPECT_EQ(RefreshedQValue({3, 0, 0.25}, 1e-3), 0.25);  // no factor to keep
}

TEST(EnvironmentChangeJson, NamesTheKeysThatDifferInByteOrder) {
  auto change =
      EnvironmentChangeJson(R"({"os": "linux", "cpu_model": "a", "cores": 8})",
                            R"({"os": "linux", "cpu_model": "b", "gpu": "x", "cores": 8.0})");
  ASSERT_TRUE(change.has_value()) << change.error().ToString();
  const nlohmann::json j = nlohmann::json::parse(*change);
  EXPECT_EQ(j["changed"], nlohmann::json::array({"cpu_model", "gpu"}));
  EXPECT_EQ(j["before"]["cpu_model"], "a");
  EXPECT_EQ(j["after"]["gpu"], "x");
  EXPECT_FALSE(EnvironmentChangeJson("[1]", "{}").has_value());
  EXPECT_FALSE(EnvironmentChangeJson("{}", "not json").has_value());
}

TEST(AnalyseRun, AnEnvironmentAlertReportsTheFingerprintChange) {
  store::HistoryRunWork work;
  store::HistorySeriesData s = Input(Series(50, 25, 1.12, 0.01, 5));
  s.key.id = 1;
  for (std::size_t i = 25; i < 50; ++i) s.testbed_ids[i] = 8;
  s.monitor_state_json = "{}";
  work.series.push_back(s);
  work.testbed_fingerprints = {{7, R"({"cpu_model": "cpu-a"})"}, {8, R"({"cpu_model": "cpu-b"})"}};
  auto updates = AnalyseRun(work, HistoryParams{});
  ASSERT_TRUE(updates.has_value()) << updates.error().ToString();
  ASSERT_EQ((*updates)[0].alerts.size(), 1u);
  const store::NewAlertRecord& a = (*updates)[0].alerts[0];
  EXPECT_EQ(a.cause, "environment");
  const nlohmann::json change = nlohmann::json::parse(a.environment_change_json);
  EXPECT_EQ(change["changed"], nlohmann::json::array({"cpu_model"}));
  EXPECT_EQ(change["before"]["cpu_model"], "cpu-a");
  EXPECT_EQ(change["after"]["cpu_model"], "cpu-b");
}

TEST(QValues, BenjaminiHochbergAmongTheSeriesEvaluated) {
  // p = 0.001 and 0.01 among 10 series (the other 8 count as p = 1): q = p * 10 / rank.
  const std::vector<double> p = {0.01, 0.001};
  const std::vector<double> q = QValues(p, 10);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_DOUBLE_EQ(q[1], 0.01);
  EXPECT_DOUBLE_EQ(q[0], 0.05);
  EXPECT_TRUE(QValues({}, 5).empty());
}

TEST(AnalyseRun, AlertsCarryQValuesAndParameters) {
  store::HistoryRunWork work;
  for (int i = 0; i < 4; ++i) {
    store::HistorySeriesData s;
    s.key.id = i + 1;
    s.levels = Series(60, i == 0 ? 30 : 1000, 1.08, 0.01, 10 + static_cast<uint64_t>(i));
    s.testbed_ids.assign(60, 1);
    s.monitor_state_json = "{}";
    s.detector_state_json = i == 2 ? "not json" : "";  // unreadable: analysed from scratch
    work.series.push_back(std::move(s));
  }
  auto updates = AnalyseRun(work, HistoryParams{});
  ASSERT_TRUE(updates.has_value());
  ASSERT_EQ(updates->size(), 4u);
  ASSERT_EQ((*updates)[0].alerts.size(), 1u);
  const store::NewAlertRecord& a = (*updates)[0].alerts[0];
  EXPECT_EQ(a.kind, "regression");
  EXPECT_EQ(a.cause, "code");
  EXPECT_DOUBLE_EQ(a.q_value, std::min(1.0, a.p_value * 4));
  EXPECT_NE(a.parameters_json.find("\"threshold\":0.05"), std::string::npos);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_TRUE((*updates)[i].alerts.empty());
  EXPECT_FALSE((*updates)[2].detector_state_json.empty());
  EXPECT_TRUE(a.environment_change_json.empty());
}

}  // namespace
}  // namespace perfwarden::server::history

namespace perfwarden::server::history {
namespace {

// Every alert records the detector's settings, so that it can be replayed: the second revision's
// (the rank test's own level, the serial correction, the binary segmentation) included.
TEST(HistoryParameters, RecordTheWholeDetector) {
  HistoryParams params;
  params.detector.rank_pvalue = 0.001;
  params.detector.mean_shift = false;
  const auto json = nlohmann::json::parse(ParametersJson(params));
  EXPECT_EQ(json["algorithm"], "e-divisive+binseg+confirm/2");
  EXPECT_DOUBLE_EQ(json["rank_pvalue"].get<double>(), 0.001);
  EXPECT_EQ(json["serial_correction"], true);
  EXPECT_EQ(json["mean_shift"], false);
  EXPECT_DOUBLE_EQ(json["mean_shift_penalty"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(json["clip_sigmas"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(json["max_pvalue"].get<double>(), 0.0001);
  EXPECT_EQ(json["window"], 100);
}

}  // namespace
}  // namespace perfwarden::server::history
