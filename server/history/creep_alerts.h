// SPDX-License-Identifier: Apache-2.0
// The creep pass of a series' history analysis (stats/creep.h): after the steps are confirmed, a
// drift beyond the threshold with no step beyond it becomes one alert of kind "creep" (its range,
// total change and slope), and the confirmed steps it spans raise no step alerts of their own: a
// drift is one alert, not a string of steps. A creep whose first point is within
// same_step_points of an alert of the series (any state) is not raised again; while that alert is
// open it is measured again (its range grows with the drift), as an open step's alert is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/result.h"
#include "server/history/analysis.h"
#include "server/store/history_store.h"
#include "stats/creep.h"
#include "stats/history_detector.h"

namespace perfwarden::server::history {

struct CreepPass {
  std::vector<store::NewAlertRecord> alerts;  // new creep alerts
  // Open creep alerts measured again as the drift goes on (their position, the new figures, the
  // q-value refreshed as a step's), as SeriesOutput::refreshed.
  std::vector<std::pair<int64_t, store::NewAlertRecord>> refreshed;
  std::vector<std::size_t> replaced_steps;  // indices (into levels) of steps a creep spans
  std::optional<stats::CreepScan> scan;     // the windows judged, for the next analysis
};

struct RecentCreepsResult {
  std::vector<stats::Creep> creeps;
  stats::CreepScan scan;  // stats::ScanCreeps' of `levels`
};

// The creeps of stats::DetectCreeps(levels, steps, options) that reach the last 4 windows of
// `levels` (a tail doubled until no creep starts in its first window, so each is whole), in
// `levels`' indices. A window's verdict depends on its own points alone, so a creep that ends
// before the tail was the same at the analyses that saw it end: this bounds the cost of
// measuring creeps by the tail, not by the series' length; and with `previous` (the scan of the
// last analysis, stats::ScanCreeps) only the windows the new points end are judged. Errors as
// stats::DetectCreeps.
Result<RecentCreepsResult> RecentCreeps(std::span<const double> levels,
                                        const std::vector<stats::Step>& steps,
                                        const stats::CreepOptions& options,
                                        const stats::CreepScan* previous = nullptr);

// Creeps of series.levels with the detector's threshold and min_segment, the stats::CreepOptions
// defaults otherwise, resuming from `previous` when given. Errors as stats::DetectCreeps.
Result<CreepPass> FindCreepAlerts(const store::HistorySeriesData& series,
                                  const HistoryParams& params,
                                  const std::vector<stats::Step>& steps,
                                  const stats::CreepScan* previous = nullptr);

}  // namespace perfwarden::server::history
