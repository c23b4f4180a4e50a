// The creep pass of a series' history analysis (stats/creep.h): after the steps are confirmed, a
// drift beyond the threshold with no step beyond it becomes one alert of kind "creep" (its range,
// total change and slope), and the confirmed steps it spans raise no step alerts of their own: a
// drift is one alert, not a string of steps. A creep whose first point is within
// same_step_points of an alert of the series (any state) is not raised again; while that alert is
// open it is measured again (its range grows with the drift), as an open step's alert is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/result.h"
#include "server/history/analysis.h"
#include "server/store/history_store.h"
#include "stats/history_detector.h"

namespace perfgate::server::history {

struct CreepPass {
  std::vector<store::NewAlertRecord> alerts;  // new creep alerts
  // Open creep alerts measured again as the drift goes on (their position, the new figures, the
  // q-value refreshed as a step's), as SeriesOutput::refreshed.
  std::vector<std::pair<int64_t, store::NewAlertRecord>> refreshed;
  std::vector<std::size_t> replaced_steps;  // indices (into levels) of steps a creep spans
};

// Creeps of series.levels with the detector's threshold and min_segment, the stats::CreepOptions
// defaults otherwise. Errors as stats::DetectCreeps.
Result<CreepPass> FindCreepAlerts(const store::HistorySeriesData& series,
                                  const HistoryParams& params,
                                  const std::vector<stats::Step>& steps);

}  // namespace perfgate::server::history
