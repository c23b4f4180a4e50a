// The per-series history analysis (server/history/analysis.h) without a database: a planted
// step becomes one alert with its CI and direction, a known alert is not raised again, the
// fingerprint change labels it, a re-baselined series starts over, the persisted states give
// the same answer as a fresh analysis after every append, the monitors arm on their warm-up and
// agree with a large step, and q-values are Benjamini-Hochberg over the series evaluated.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "server/history/analysis.h"
#include "server/history/service.h"

namespace perfgate::server::history {
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

SeriesInput Input(std::vector<double> levels) {
  SeriesInput input;
  input.testbed_ids.assign(levels.size(), 7);
  input.levels = std::move(levels);
  return input;
}

TEST(AnalyseSeries, APlantedStepIsOneAlertWithItsRangeAndCi) {
  const HistoryParams params;
  auto out = AnalyseSeries(Input(Series(60, 30, 1.08, 0.01, 1)), params);
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  ASSERT_EQ(out->alerts.size(), 1u);
  const NewAlert& a = out->alerts[0];
  EXPECT_EQ(a.position, 30);
  EXPECT_TRUE(a.regression);
  EXPECT_FALSE(a.environment);
  EXPECT_NEAR(a.magnitude, 0.08, 0.01);
  EXPECT_LT(a.ci_low, a.magnitude);
  EXPECT_GT(a.ci_high, a.magnitude);
  EXPECT_LT(a.p_value, 1e-6);
  EXPECT_EQ(a.detectors.front(), "e-divisive");
  EXPECT_EQ(out->steps.size(), 1u);
  EXPECT_EQ(out->monitors.next_position, 60);
  EXPECT_EQ(out->detector_state.length, 60u);
}

TEST(AnalyseSeries, DirectionDecidesRegressionOrImprovement) {
  SeriesInput input = Input(Series(60, 30, 1.10, 0.01, 2));
  input.direction = Direction::kHigherIsBetter;  // a throughput that rose
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->alerts.size(), 1u);
  EXPECT_FALSE(out->alerts[0].regression);
}

TEST(AnalyseSeries, AKnownAlertIsNotRaisedAgainAndNoiseRaisesNothing) {
  SeriesInput input = Input(Series(60, 30, 1.08, 0.01, 3));
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
  SeriesInput input = Input(Series(60, 30, 1.08, 0.01, 3));
  input.alerted_positions = {31};
  input.open_alert_positions = {31};
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->alerts.empty());
  ASSERT_EQ(out->refreshed.size(), 1u);
  EXPECT_EQ(out->refreshed[0].old_position, 31);
  EXPECT_EQ(out->refreshed[0].alert.position, 30);
  EXPECT_NEAR(out->refreshed[0].alert.magnitude, 0.08, 0.01);
  EXPECT_LT(out->refreshed[0].alert.ci_low, out->refreshed[0].alert.ci_high);
}

TEST(AnalyseSeries, AStepWhereTheFingerprintChangedIsAnEnvironmentChange) {
  SeriesInput input = Input(Series(50, 25, 1.12, 0.01, 5));
  for (std::size_t i = 25; i < 50; ++i) input.testbed_ids[i] = 8;
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->alerts.size(), 1u);
  EXPECT_TRUE(out->alerts[0].environment);
}

TEST(AnalyseSeries, ARebaselinedSeriesIsAnalysedFromItsBaseline) {
  // Points from position 30 on (the acknowledged step's first bad point): one level, nothing.
  const std::vector<double> all = Series(80, 30, 1.08, 0.01, 6);
  SeriesInput input = Input(std::vector<double>(all.begin() + 30, all.end()));
  input.baseline_from = 30;
  input.alerted_positions = {30};
  MonitorState stale;
  stale.next_position = 10;  // before the baseline: must start over
  stale.armed = true;
  input.monitors = stale;
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->steps.empty());
  EXPECT_TRUE(out->alerts.empty());
  EXPECT_EQ(out->monitors.next_position, 80);
  EXPECT_NEAR(out->monitors.ewma_params.mu0, 1080, 15);  // re-armed on the new level
}

TEST(AnalyseSeries, PersistedStatesGiveTheFreshAnswerAfterEveryAppend) {
  const std::vector<double> all = Series(160, 70, 0.9, 0.015, 7);
  SeriesInput carried = Input({});
  std::vector<int64_t> alerted;
  std::size_t alerts = 0;
  for (std::size_t n = 1; n <= all.size(); ++n) {
    SeriesInput step = Input(std::vector<double>(all.begin(), all.begin() + n));
    step.detector_state = carried.detector_state;
    step.monitors = carried.monitors;
    step.alerted_positions = alerted;
    auto out = AnalyseSeries(step, HistoryParams{});
    ASSERT_TRUE(out.has_value());
    SeriesInput fresh = Input(std::vector<double>(all.begin(), all.begin() + n));
    fresh.alerted_positions = alerted;
    auto expected = AnalyseSeries(fresh, HistoryParams{});
    ASSERT_TRUE(expected.has_value());
    ASSERT_EQ(out->steps.size(), expected->steps.size()) << n;
    for (std::size_t i = 0; i < out->steps.size(); ++i) {
      EXPECT_EQ(out->steps[i].position, expected->steps[i].position) << n;
      EXPECT_EQ(out->steps[i].step.magnitude, expected->steps[i].step.magnitude) << n;
    }
    EXPECT_EQ(MonitorStateJson(out->monitors), MonitorStateJson(expected->monitors)) << n;
    for (const NewAlert& a : out->alerts) alerted.push_back(a.position);
    alerts += out->alerts.size();
    // Through JSON, as the store keeps them.
    auto detector = ParseDetectorState(DetectorStateJson(out->detector_state));
    auto monitors = ParseMonitorState(MonitorStateJson(out->monitors));
    ASSERT_TRUE(detector.has_value() && monitors.has_value());
    carried.detector_state = *detector;
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
  SeriesInput input = Input(Series(20, 100, 1, 0.01, 9));
  input.testbed_ids.pop_back();
  auto out = AnalyseSeries(input, HistoryParams{});
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().field, "testbed_ids");
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
}

}  // namespace
}  // namespace perfgate::server::history
