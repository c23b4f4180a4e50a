// SPDX-License-Identifier: Apache-2.0
#include "server/history/creep_alerts.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "stats/creep.h"

namespace perfwarden::server::history {

Result<RecentCreepsResult> RecentCreeps(std::span<const double> levels,
                                        const std::vector<stats::Step>& steps,
                                        const stats::CreepOptions& options,
                                        const stats::CreepScan* previous) {
  auto scan = stats::ScanCreeps(levels, options, previous);
  if (!scan) return tl::unexpected(scan.error());
  const std::size_t n = levels.size();
  const std::size_t w = std::min(options.window, n);
  // The runs a scan of levels[from, n) alone would find are the whole scan's runs with a window
  // starting at or after `from`, cut to start there.
  auto clipped_start = [&](const stats::CreepRun& r,
                           std::size_t from) -> std::optional<std::size_t> {
    if (r.end + 1 < from + w) return std::nullopt;  // no window of it starts at or after `from`
    return std::max(r.start, from);
  };
  std::size_t from = 0;
  for (std::size_t tail = 4 * options.window;; tail *= 2) {
    from = n > tail ? n - tail : 0;
    if (from == 0) break;
    // A creep that starts within the tail's first window may have begun before the tail: look
    // further back. Otherwise no window before the tail can join one of the tail's creeps (its
    // windows end before the first creeping window of the tail starts).
    const bool cut = std::any_of(scan->runs.begin(), scan->runs.end(), [&](const auto& r) {
      const std::optional<std::size_t> start = clipped_start(r, from);
      return start && *start < from + w;
    });
    if (!cut) break;
  }
  std::vector<stats::CreepRun> recent;
  for (const stats::CreepRun& r : scan->runs) {
    if (r.start >= from) recent.push_back(r);
  }
  std::vector<std::size_t> indices;
  for (const stats::Step& s : steps) indices.push_back(s.index);
  auto creeps = stats::CreepsOfRuns(levels, recent, indices, options);
  if (!creeps) return tl::unexpected(creeps.error());
  return RecentCreepsResult{std::move(*creeps), std::move(*scan)};
}

Result<CreepPass> FindCreepAlerts(const store::HistorySeriesData& series,
                                  const HistoryParams& params,
                                  const std::vector<stats::Step>& steps,
                                  const stats::CreepScan* previous) {
  stats::CreepOptions options;
  options.threshold = params.detector.threshold;
  options.min_segment = params.detector.min_segment;
  options.confidence = params.ci_confidence;
  CreepPass pass;
  if (!(options.threshold > 0)) return pass;  // nothing to drift beyond
  auto recent = RecentCreeps(series.levels, steps, options, previous);
  if (!recent) return tl::unexpected(recent.error());
  pass.scan = std::move(recent->scan);
  for (const stats::Creep& c : recent->creeps) {
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

}  // namespace perfwarden::server::history
