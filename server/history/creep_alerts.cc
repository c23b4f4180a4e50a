#include "server/history/creep_alerts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

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
    // The alert this creep already has: the nearest within same_step_points.
    std::optional<int64_t> alerted;
    for (int64_t a : series.alerted_positions) {
      const int64_t distance = std::llabs(a - position);
      if (distance <= static_cast<int64_t>(params.same_step_points) &&
          (!alerted || distance < std::llabs(*alerted - position))) {
        alerted = a;
      }
    }
    const auto open =
        alerted
            ? std::find_if(series.open_alerts.begin(), series.open_alerts.end(),
                           [&](const store::OpenAlertRecord& o) { return o.position == *alerted; })
            : series.open_alerts.end();
    if (alerted && open == series.open_alerts.end()) continue;  // triaged: kept as it was
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
    if (alerted) {
      alert.q_value = RefreshedQValue(*open, alert.p_value);
      pass.refreshed.emplace_back(*alerted, std::move(alert));
    } else {
      pass.alerts.push_back(std::move(alert));
    }
  }
  return pass;
}

}  // namespace perfgate::server::history
