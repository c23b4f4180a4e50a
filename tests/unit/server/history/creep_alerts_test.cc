// SPDX-License-Identifier: Apache-2.0
// Creep alerts without a database (server/history/creep_alerts.h through AnalyseSeries): a drift
// of 0.15% per point over 60 points is one "creep" alert with its range and slope and no step
// alerts, whatever steps the detector cut it into; it is not raised again; a plain step is still
// a regression; the alert's JSON carries kind "creep" and its "creep" object (and decodes back);
// the webhook's line says creep with the slope and the range; tests/fixtures/alerts/creep.json is
// that alert's JSON.
#include "server/history/creep_alerts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <vector>

#include "server/history/alert_json.h"
#include "server/history/analysis.h"
#include "stats/creep.h"
#include "wire/alert.h"

namespace perfwarden::server::history {
namespace {

// Deterministic normal noise (LCG and Box-Muller).
class Noise {
 public:
  explicit Noise(uint64_t seed) : state_(seed) {}
  double Next() {
    const double u1 = Uniform(), u2 = Uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  double Uniform() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state_ >> 11) + 0.5) / 9007199254740992.0;
  }
  uint64_t state_;
};

// 60 points at 1000, 60 rising by total / 60 of 1000 each (by default 0.15% a point, 9% in
// all), 60 at the new level; noise cv.
store::HistorySeriesData Drift(double cv, uint64_t seed, double total = 0.09) {
  Noise noise(seed);
  store::HistorySeriesData input;
  double level = 1000;
  for (int i = 0; i < 180; ++i) {
    if (i >= 60 && i < 120) level += 1000 * total / 60;
    input.levels.push_back(level * (1 + cv * noise.Next()));
  }
  input.testbed_ids.assign(input.levels.size(), 7);
  return input;
}

TEST(CreepAlerts, ADriftIsOneCreepAlertAndNoStepAlerts) {
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    SCOPED_TRACE(seed);
    auto out = AnalyseSeries(Drift(0.005, seed), HistoryParams{});
    ASSERT_TRUE(out.has_value()) << out.error().ToString();
    ASSERT_EQ(out->alerts.size(), 1u);
    const store::NewAlertRecord& a = out->alerts[0];
    EXPECT_EQ(a.kind, "creep");
    EXPECT_EQ(a.cause, "code");
    ASSERT_TRUE(a.creep.has_value());
    EXPECT_LT(a.position, 90);  // the range overlaps the ramp [60, 120)
    EXPECT_GT(a.creep->range_end, 90);
    EXPECT_NEAR(a.magnitude, 0.09, 0.015);
    EXPECT_NEAR(a.level_before, 1000, 10);
    EXPECT_NEAR(a.level_after, 1090, 10);
    EXPECT_NEAR(a.creep->slope, 0.0015, 0.0004);
    EXPECT_LT(a.creep->slope_low, a.creep->slope);
    EXPECT_GT(a.creep->slope_low, 0);
    EXPECT_GT(a.creep->slope_high, a.creep->slope);
    EXPECT_LT(a.p_value, 1e-4);
    EXPECT_EQ(a.detectors, (std::vector<std::string>{"mann-kendall", "theil-sen"}));
    // The detector's change points are kept as such; only their alerts give way.
    for (const auto& [position, step] : out->steps) {
      EXPECT_TRUE(position > a.position && position <= a.creep->range_end) << position;
    }
  }
}

// The case the creep exists for: a steeper drift in noisier points (20% over 60 points, CV 2%),
// which the step detector cuts into steps (the serial correction keeps a clean ramp whole):
// still one creep alert, and the steps inside its range raise none.
TEST(CreepAlerts, ADriftCutIntoStepsIsStillOneCreepAlert) {
  std::size_t steps_replaced = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    SCOPED_TRACE(seed);
    auto out = AnalyseSeries(Drift(0.02, seed, 0.2), HistoryParams{});
    ASSERT_TRUE(out.has_value()) << out.error().ToString();
    ASSERT_EQ(out->alerts.size(), 1u);
    const store::NewAlertRecord& a = out->alerts[0];
    EXPECT_EQ(a.kind, "creep");
    ASSERT_TRUE(a.creep.has_value());
    EXPECT_NEAR(a.magnitude, 0.2, 0.05);
    for (const auto& [position, step] : out->steps) {
      EXPECT_TRUE(position > a.position && position <= a.creep->range_end) << position;
    }
    steps_replaced += out->steps.size();
  }
  EXPECT_GT(steps_replaced, 0u);
}

// The server judges only the windows that reach the end of the series (and as far back as a
// creep that reaches them goes): the same creeps as the whole scan for every creep that reaches
// the last windows, on long series with drifts everywhere (one across the tail's first window,
// one from far back to the end, one long finished). Series end at every 20th point of the last
// 400, so that the tail's edge cuts every drift at some length.
TEST(CreepAlerts, RecentCreepsAreTheWholeScansCreepsThatReachTheEnd) {
  const stats::CreepOptions options;
  const std::size_t w = options.window;
  Noise noise(11);
  std::vector<double> levels;
  double level = 1000;
  for (int i = 0; i < 2400; ++i) {
    const bool drifting = (i >= 200 && i < 800) || (i >= 1500 && i < 1640) ||
                          (i >= 1900 && i < 1990) || (i >= 2080 && i < 2400);
    if (drifting) level *= (i % 400 < 200 ? 1.0012 : 0.9988);
    levels.push_back(level * (1 + 0.004 * noise.Next()));
  }
  std::size_t compared = 0, extended = 0;
  std::optional<stats::CreepScan> previous;
  for (std::size_t n = 2000; n <= levels.size(); n += 20) {
    SCOPED_TRACE(n);
    const std::span<const double> series(levels.data(), n);
    auto whole = stats::DetectCreeps(series, {}, options);
    auto result = RecentCreeps(series, {}, options);
    // Resuming from the last length's scan judges only the new windows, to the same answer.
    auto resumed = RecentCreeps(series, {}, options, previous ? &*previous : nullptr);
    ASSERT_TRUE(whole.has_value() && result.has_value() && resumed.has_value());
    EXPECT_EQ(resumed->creeps, result->creeps);
    EXPECT_EQ(resumed->scan, result->scan);
    previous = resumed->scan;
    const std::vector<stats::Creep>* recent = &result->creeps;
    for (const stats::Creep& c : *whole) {
      const bool reaches = c.end + 3 * w >= n;
      const auto same = std::find_if(recent->begin(), recent->end(), [&](const stats::Creep& r) {
        return r.start == c.start && r.end == c.end && r.slope == c.slope &&
               r.total_change == c.total_change && r.p_value == c.p_value;
      });
      if (reaches) {
        EXPECT_NE(same, recent->end()) << "creep " << c.start << ".." << c.end;
        ++compared;
        extended += c.start + 4 * w < n;
      }
    }
    for (const stats::Creep& r : *recent) {
      EXPECT_TRUE(
          std::any_of(whole->begin(), whole->end(),
                      [&](const stats::Creep& c) { return c.start == r.start && c.end == r.end; }))
          << "creep " << r.start << ".." << r.end;
    }
  }
  EXPECT_GT(compared, 20u);
  EXPECT_GT(extended, 5u);  // the tail had to reach back for a creep that began before it
}

TEST(CreepAlerts, NotRaisedAgainAndAStepIsStillARegression) {
  store::HistorySeriesData input = Drift(0.005, 1);
  auto first = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->alerts.size(), 1u);
  const int64_t stored = first->alerts[0].position + 2;
  input.alerted_positions = {stored};  // as stored, triaged
  auto again = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(again->alerts.empty());
  EXPECT_TRUE(again->refreshed.empty());
  // Still open: measured again (the range and figures follow the drift), not raised again.
  input.open_alerts = {{stored, 1e-10, 3e-10}};
  auto refreshed = AnalyseSeries(input, HistoryParams{});
  ASSERT_TRUE(refreshed.has_value());
  EXPECT_TRUE(refreshed->alerts.empty());
  ASSERT_EQ(refreshed->refreshed.size(), 1u);
  const auto& [old_position, alert] = refreshed->refreshed[0];
  EXPECT_EQ(old_position, stored);
  EXPECT_EQ(alert.kind, "creep");
  ASSERT_TRUE(alert.creep.has_value());
  EXPECT_EQ(alert.position, first->alerts[0].position);
  EXPECT_EQ(alert.creep->range_end, first->alerts[0].creep->range_end);
  EXPECT_DOUBLE_EQ(alert.q_value, std::min(1.0, alert.p_value * 3));  // the stored q/p factor

  // A clean 8% step: a regression, no creep.
  store::HistorySeriesData step;
  Noise noise(9);
  for (int i = 0; i < 120; ++i)
    step.levels.push_back((i < 60 ? 1000 : 1080) * (1 + 0.005 * noise.Next()));
  step.testbed_ids.assign(step.levels.size(), 7);
  auto out = AnalyseSeries(step, HistoryParams{});
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->alerts.size(), 1u);
  EXPECT_EQ(out->alerts[0].kind, "regression");
  EXPECT_FALSE(out->alerts[0].creep.has_value());
}

store::AlertRecord CreepRecord() {
  store::AlertRecord a;
  a.id = 42;
  a.project = "demo";
  a.series.branch = "main";
  a.series.testbed = "ci-1";
  a.series.key.suite = "s";
  a.series.key.benchmark = "BM_Leak";
  a.series.key.metric = "real_time";
  a.series.unit = "ns";
  a.position = 61;
  a.kind = "creep";
  a.cause = "code";
  a.state = "open";
  a.last_good.sha = std::string(40, 'a');
  a.first_bad.sha = std::string(40, 'b');
  a.first_bad.subject = "grow the cache";
  a.magnitude = 0.09;
  a.p_value = 1e-20;
  a.level_before = 1000;
  a.level_after = 1090;
  a.detectors = {"mann-kendall", "theil-sen"};
  a.created_at = "2026-11-29T07:00:00Z";
  a.creep = store::CreepFigures{119, 0.0015, 0.0014, 0.0016};
  return a;
}

TEST(CreepAlerts, JsonAndWebhookSayCreepWithSlopeAndRange) {
  const store::AlertRecord record = CreepRecord();
  const wire::Alert alert = ToWire(record);
  ASSERT_TRUE(alert.creep.has_value());
  EXPECT_EQ(*alert.creep, (wire::AlertCreep{61, 119, 0.0015, 0.0014, 0.0016}));
  const nlohmann::ordered_json json = wire::EncodeAlert(alert);
  EXPECT_EQ(json["kind"], "creep");
  EXPECT_EQ(json["creep"], nlohmann::ordered_json::parse(
                               R"({"start": 61, "end": 119, "slope": 0.0015, "slope_low": 0.0014,
                                   "slope_high": 0.0016})"));
  auto decoded = wire::DecodeAlert(json.dump());
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, alert);
  // A step alert has no "creep" key at all.
  store::AlertRecord step = record;
  step.kind = "regression";
  step.creep.reset();
  EXPECT_FALSE(wire::EncodeAlert(ToWire(step)).contains("creep"));

  // tests/fixtures/alerts/creep.json (the dashboard's browser test answers with it) is this
  // alert as the server writes it.
  std::ifstream in(std::string(PERFWARDEN_FIXTURES_DIR) + "/alerts/creep.json");
  const nlohmann::ordered_json fixture = nlohmann::ordered_json::parse(in, nullptr, false);
  EXPECT_EQ(fixture, json) << json.dump(2);

  store::AlertGroupDetail group;
  group.group.id = 7;
  group.members = {record};
  const std::string text = GroupWebhookBody(group, "")["text"];
  EXPECT_NE(text.find("\n• creep +9.0% BM_Leak real_time on ci-1 (+0.15% per point over points "
                      "61-119) (alert 42)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace perfwarden::server::history
