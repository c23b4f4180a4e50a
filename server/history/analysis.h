// SPDX-License-Identifier: Apache-2.0
// The history analysis of one series of a tracked branch, without I/O (on the store's plain
// records): the new points go through the online monitors (EWMA and tabular CUSUM, O(1) each),
// e-divisive resumes from its persisted state (stats::DetectChangePointsIncremental) and
// perfwarden's confirmation stage (stats::ConfirmSteps) names the steps; a step not alerted before
// becomes a new alert with its magnitude CI, the detectors that agree and whether the testbed's
// fingerprint changed there. Also the rules applied to alerts: refreshed q-values and what an
// environment change reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "server/store/history_store.h"
#include "stats/change_points.h"
#include "stats/creep.h"
#include "stats/history_detector.h"
#include "stats/monitors.h"

namespace perfwarden::server::history {

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

// The detector's state with the creep search's (its "creep" member, when given).
std::string DetectorStateJson(const stats::ChangePointState& state,
                              const std::optional<stats::CreepScan>& creep = std::nullopt);
// "" gives nullopt (recompute); kInvalidArgument for anything unreadable.
Result<std::optional<stats::ChangePointState>> ParseDetectorState(const std::string& json);
// The creep search's state in a detector state's JSON: nullopt when there is none ("", or a state
// written before it was kept); kInvalidArgument for anything unreadable.
Result<std::optional<stats::CreepScan>> ParseCreepScan(const std::string& json);

// The resumable state of a series' detectors: what the store persisted for it
// (HistorySeriesData's detector_state_json and monitor_state_json), parsed. Empty: analyse from
// scratch.
struct SeriesState {
  std::optional<stats::ChangePointState> detector;
  std::optional<stats::CreepScan> creep;
  MonitorState monitors;
};

// The state persisted for `series`; a state that cannot be read is replaced by a fresh one (its
// detector or monitors start from scratch), and `unreadable` (when given) says so.
SeriesState ParseSeriesState(const store::HistorySeriesData& series, bool* unreadable = nullptr);

struct StepFound {
  int64_t position = 0;  // absolute first point of the new level
  stats::Step step;
};

struct SeriesOutput {
  stats::ChangePointState detector_state;
  std::optional<stats::CreepScan> creep_scan;  // none when there is no threshold to creep beyond
  MonitorState monitors;
  std::vector<StepFound> steps;  // every confirmed step from baseline_from on
  // The steps with no alert yet: kind, cause, figures and detectors (q-value, environment
  // change and parameters are the run's: AnalyseRun in service.h fills them in).
  std::vector<store::NewAlertRecord> alerts;
  // An open alert's step seen again with more points after it: (its old position, its figures
  // measured anew, its position too when the step now sits a point or two away, q-value
  // included), so that an alert raised on the first few points of a new level does not keep
  // their rough estimate.
  std::vector<std::pair<int64_t, store::NewAlertRecord>> refreshed;
};

// The analysis of `series` resuming from `state` (by default from scratch: the answer is the
// same, tested, only slower). kInvalidArgument for inconsistent input (testbed_ids not matching
// levels, a non-finite level).
Result<SeriesOutput> AnalyseSeries(const store::HistorySeriesData& series,
                                   const HistoryParams& params, const SeriesState& state = {});

// The alert a step (or creep) whose first bad point is `position` already has: the nearest of
// series.alerted_positions within same_step_points (none: nullopt), and that alert's open
// record (nullptr when it was triaged: it is kept as it was, neither raised nor measured again).
struct KnownAlert {
  std::optional<int64_t> position;
  const store::OpenAlertRecord* open = nullptr;
};
KnownAlert FindKnownAlert(const store::HistorySeriesData& series, int64_t position,
                          std::size_t same_step_points);

// The q-value of an open alert measured again with `p_value`: the Benjamini-Hochberg factor of
// the ingest that raised it (stored q / stored p, in [1, m]) on the new p-value, at most 1; the
// factor first: p-values of long series go far below 1e-154, where p * q underflows.
double RefreshedQValue(const store::OpenAlertRecord& stored, double p_value);

// What an environment change reports: {"before": ..., "after": ..., "changed": [the top-level
// keys whose values differ or exist on one side only, in byte order]} from two fingerprints
// (JSON objects). kInvalidArgument when one is not a JSON object.
Result<std::string> EnvironmentChangeJson(const std::string& before, const std::string& after);

// Benjamini-Hochberg q-values of `p_values` (the new alerts of one ingest) among
// `series_evaluated` tests (the series that ingest analysed; the others count as p = 1).
std::vector<double> QValues(std::span<const double> p_values, std::size_t series_evaluated);

}  // namespace perfwarden::server::history
