// The history analysis of one series of a tracked branch, without I/O: the new points go
// through the online monitors (EWMA and tabular CUSUM, O(1) each), e-divisive resumes from its
// persisted state (stats::DetectChangePointsIncremental) and perfgate's confirmation stage
// (stats::ConfirmSteps) names the steps; a step not alerted before becomes a new alert with its
// magnitude CI, the detectors that agree and whether the testbed's fingerprint changed there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "stats/change_points.h"
#include "stats/history_detector.h"
#include "stats/monitors.h"

namespace perfgate::server::history {

struct HistoryParams {
  stats::HistoryOptions detector;  // threshold (5%), window, p-value, ...
  double ewma_lambda = 0.2;
  double monitor_arl0 = 1000;        // in-control average run length of EWMA and CUSUM
  std::size_t monitor_warmup = 10;   // points that estimate the in-control level and spread
  std::size_t same_step_points = 5;  // a step this close to an alerted one is that one
  int ci_resamples = 2000;
  double ci_confidence = 0.95;
};

// The monitors of one series: warm-up accumulators until armed, then EWMA and CUSUM with
// parameters derived from the warm-up (in-control level and spread) and the threshold: CUSUM's
// reference value k is half the threshold's shift in sigmas (clamped to [0.25, 3]), h and the
// EWMA's L give the configured in-control ARL. The last signal position of each monitor and
// direction ("up": the level rose) names the detectors that agree with a step.
struct MonitorState {
  int64_t next_position = 0;  // the first point not fed yet (absolute)
  int64_t warm_n = 0;
  double warm_mean = 0;
  double warm_m2 = 0;
  bool armed = false;
  stats::EwmaParams ewma_params;
  stats::EwmaState ewma;
  stats::CusumParams cusum_params;
  stats::CusumState cusum;
  int64_t ewma_up = -1, ewma_down = -1, cusum_up = -1, cusum_down = -1;
};

std::string MonitorStateJson(const MonitorState& state);
// "" or "{}" give a fresh state; kInvalidArgument for anything unreadable.
Result<MonitorState> ParseMonitorState(const std::string& json);

std::string DetectorStateJson(const stats::ChangePointState& state);
// "" gives nullopt (recompute); kInvalidArgument for anything unreadable.
Result<std::optional<stats::ChangePointState>> ParseDetectorState(const std::string& json);

struct SeriesInput {
  Direction direction = Direction::kLowerIsBetter;
  int64_t baseline_from = 0;         // absolute position of levels[0]
  std::vector<double> levels;        // per-commit medians from baseline_from on
  std::vector<int64_t> testbed_ids;  // the fingerprint that measured each point
  std::optional<stats::ChangePointState> detector_state;
  MonitorState monitors;
  std::vector<int64_t> alerted_positions;     // positions of this series' alerts, any state
  std::vector<int64_t> open_alert_positions;  // those of them still open
};

struct StepFound {
  int64_t position = 0;  // absolute first point of the new level
  stats::Step step;
};

struct NewAlert {
  int64_t position = 0;
  bool regression = false;   // worse in the metric's direction (else an improvement)
  bool environment = false;  // the testbed fingerprint changed at this point
  double magnitude = 0;
  double ci_low = 0, ci_high = 0;  // NaN when a side has a single point
  double p_value = 1;
  double level_before = 0, level_after = 0;
  std::vector<std::string> detectors;
};

// An open alert's step seen again with more points after it: its figures measured anew (and
// its position, when the step now sits a point or two away), so that an alert raised on the
// first few points of a new level does not keep their rough estimate.
struct AlertRefresh {
  int64_t old_position = 0;
  NewAlert alert;
};

struct SeriesOutput {
  stats::ChangePointState detector_state;
  MonitorState monitors;
  std::vector<StepFound> steps;  // every confirmed step from baseline_from on
  std::vector<NewAlert> alerts;  // the steps with no alert yet
  std::vector<AlertRefresh> refreshed;
};

// kInvalidArgument for inconsistent input (testbed_ids not matching levels, a non-finite level).
Result<SeriesOutput> AnalyseSeries(const SeriesInput& input, const HistoryParams& params);

// Benjamini-Hochberg q-values of `p_values` (the new alerts of one ingest) among
// `series_evaluated` tests (the series that ingest analysed; the others count as p = 1).
std::vector<double> QValues(std::span<const double> p_values, std::size_t series_evaluated);

}  // namespace perfgate::server::history
