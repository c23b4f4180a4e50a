#include "server/history/creep_alerts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "stats/creep.h"

namespace perfgate::server::history {

Result<CreepPass> FindCreepAlerts(const store::HistorySeriesData& series,
                                  const HistoryParams& params,
                                  const std::vector<stats::Step>& steps) {
  stats::CreepOptions options;
  options.threshold = params.detector.threshold;
  options.min_segment = params.detector.min_segment;
  options.confidence = params.ci_confidence;
  CreepPass pass;
  if (!(options.threshold > 0)) return pass;  // nothing to drift beyond
  std::vector<std::size_t> indices;
  for (const stats::Step& s : steps) indices.push_back(s.index);
  auto creeps = stats::DetectCreeps(series.levels, indices, options);
  if (!creeps) return tl::unexpected(creeps.error());
  for (const stats::Creep& c : *creeps) {
    pass.replaced_steps.insert(pass.replaced_steps.end(), c.steps.begin(), c.steps.end());
    // The first bad point needs a last good one before it.
    const std::size_t first = std::max<std::size_t>(c.start, 1);
    const int64_t position = series.baseline_from + static_cast<int64_t>(first);
    const bool alerted = std::any_of(
        series.alerted_positions.begin(), series.alerted_positions.end(), [&](int64_t a) {
          return std::llabs(a - position) <= static_cast<int64_t>(params.same_step_points);
        });
    if (alerted) continue;
    store::NewAlertRecord alert;
    alert.position = position;
    alert.kind = "creep";
    bool testbed_changed = false;
    for (std::size_t i = first; i <= c.end; ++i) {
      testbed_changed |= series.testbed_ids[i] != series.testbed_ids[i - 1];
    }
    alert.cause = testbed_changed ? "environment" : "code";
    alert.magnitude = c.total_change;
    alert.p_value = std::clamp(c.p_value, 0.0, 1.0);
    alert.level_before = c.level_start;
    alert.level_after = c.level_end;
    alert.detectors = {"mann-kendall", "theil-sen"};
    alert.creep = store::CreepFigures{series.baseline_from + static_cast<int64_t>(c.end), c.slope,
                                      c.slope_low, c.slope_high};
    pass.alerts.push_back(std::move(alert));
  }
  return pass;
}

}  // namespace perfgate::server::history
