// SPDX-License-Identifier: Apache-2.0
#include "server/history/went_away.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace perfwarden::server::history {
namespace {

bool Back(double level, double level_before, double threshold) {
  return level_before != 0 && std::fabs(level / level_before - 1) <= threshold / 2;
}

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", fraction * 100);
  return buffer;
}

}  // namespace

WentAwayDecision ApplyWentAway(const store::HistorySeriesData& series, SeriesOutput& output,
                               const WentAwayOptions& options) {
  WentAwayDecision decision;
  const int64_t end = series.baseline_from + static_cast<int64_t>(series.levels.size());
  std::vector<store::OpenAlertRecord> open = series.open_alerts;
  std::sort(open.begin(), open.end(),
            [](const auto& a, const auto& b) { return a.position < b.position; });
  for (const store::OpenAlertRecord& alert : open) {
    if (alert.position <= series.baseline_from || alert.position >= end) continue;
    // The trailing points back at the old level, none of them before the step.
    int64_t back_from = end;
    while (back_from - 1 > alert.position &&
           Back(series.levels[static_cast<std::size_t>(back_from - 1 - series.baseline_from)],
                alert.level_before, options.threshold)) {
      --back_from;
    }
    std::string why;
    if (end - back_from >= static_cast<int64_t>(options.points)) {
      why = "the level came back: " + std::to_string(end - back_from) + " points from position " +
            std::to_string(back_from) + " within " + Percent(options.threshold / 2) +
            " of the level before the step";
    } else {
      const double step = alert.level_after - alert.level_before;
      for (const StepFound& found : output.steps) {
        const double revert = found.step.level_after - found.step.level_before;
        if (found.position > alert.position && step * revert < 0 &&
            Back(found.step.level_after, alert.level_before, options.threshold)) {
          back_from = found.position;
          why = "the step reverted at position " + std::to_string(found.position) + " (" +
                Percent(found.step.magnitude) + "), back within " + Percent(options.threshold / 2) +
                " of the level before the step";
          break;
        }
      }
    }
    if (why.empty()) continue;
    decision.went_away.push_back({alert.position, why});
    decision.rebaseline_from = std::max(decision.rebaseline_from.value_or(0), back_from);
    const int64_t gone = alert.position;
    std::erase_if(output.refreshed, [&](const auto& r) { return r.first == gone; });
    std::erase_if(output.alerts, [&](const store::NewAlertRecord& a) { return a.position > gone; });
  }
  return decision;
}

}  // namespace perfwarden::server::history
