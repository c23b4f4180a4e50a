#include "server/history/creep_alerts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "stats/creep.h"

namespace perfgate::server::history {

Result<std::vector<stats::Creep>> RecentCreeps(std::span<const double> levels,
                                               const std::vector<stats::Step>& steps,
                                               const stats::CreepOptions& options) {
  const std::size_t n = levels.size();
  const std::size_t w = options.window;
  for (std::size_t tail = 4 * w;; tail *= 2) {
    const std::size_t from = n > tail ? n - tail : 0;
    std::vector<std::size_t> indices;
    for (const stats::Step& s : steps) {
      if (s.index > from) indices.push_back(s.index - from);
    }
    auto creeps = stats::DetectCreeps(levels.subspan(from), indices, options);
    if (!creeps) return tl::unexpected(creeps.error());
    // A creep that starts within the tail's first window may have begun before the tail: look
    // further back. Otherwise no window before the tail can join one of the tail's creeps (its
    // windows end before the first creeping window of the tail starts).
    const bool cut = std::any_of(creeps->begin(), creeps->end(),
                                 [&](const stats::Creep& c) { return c.start < w; });
    if (from == 0 || !cut) {
      for (stats::Creep& c : *creeps) {
        c.start += from;
        c.end += from;
        for (std::size_t& step : c.steps) step += from;
      }
      return creeps;
    }
  }
}

Result<CreepPass> FindCreepAlerts(const store::HistorySeriesData& series,
                                  const HistoryParams& params,
                                  const std::vector<stats::Step>& steps) {
  stats::CreepOptions options;
  options.threshold = params.detector.threshold;
  options.min_segment = params.detector.min_segment;
  options.confidence = params.ci_confidence;
  CreepPass pass;
  if (!(options.threshold > 0)) return pass;  // nothing to drift beyond
  auto creeps = RecentCreeps(series.levels, steps, options);
  if (!creeps) return tl::unexpected(creeps.error());
  for (const stats::Creep& c : *creeps) {
    pass.replaced_steps.insert(pass.replaced_steps.end(), c.steps.begin(), c.steps.end());
    // The first bad point needs a last good one before it.
    const std::size_t first = std::max<std::size_t>(c.start, 1);
    const int64_t position = series.baseline_from + static_cast<int64_t>(first);
    const KnownAlert known = FindKnownAlert(series, position, params.same_step_points);
    if (known.position && known.open == nullptr) continue;  // triaged: kept as it was
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
    if (known.position) {
      alert.q_value = RefreshedQValue(*known.open, alert.p_value);
      pass.refreshed.emplace_back(*known.position, std::move(alert));
    } else {
      pass.alerts.push_back(std::move(alert));
    }
  }
  return pass;
}

}  // namespace perfgate::server::history
