// SPDX-License-Identifier: Apache-2.0
// Went away: an open alert whose series came back to the level before its step. A step that
// reverts within a few points (a flaky host, a change reverted) is not a regression to triage:
// the history worker closes its alert as went_away, with an event saying why, and re-baselines
// the series where the level came back, so that neither the step nor its revert is raised again.
// Pure: on the store's records and the series' analysis (AnalyseSeries' output).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/history/analysis.h"
#include "server/store/history_store.h"

namespace perfwarden::server::history {

struct WentAwayOptions {
  double threshold = 0.05;  // the history threshold; "back" is within half of it
  std::size_t points = 3;   // the level must have been back this long (a confirmed step's 3)
};

// The open alerts of `series` that went away, and where the series re-baselines. An open alert
// at position p (p > baseline_from) went away when either
//  - the last `points` or more points, all after p, are each within threshold/2 of the alert's
//    level_before (the level is back; the run of such points is the new baseline), or
//  - the analysis found a new step after p whose level_after is within threshold/2 of the
//    alert's level_before, in the other direction (the detector confirmed the revert; the
//    new baseline is the revert's first point).
// `output` loses what belongs to those alerts: their refreshes and the new alerts after them (the
// revert itself). Alerts are looked at oldest first; the re-baseline is the latest one.
struct WentAwayDecision {
  std::vector<store::WentAwayRecord> went_away;
  std::optional<int64_t> rebaseline_from;
};
WentAwayDecision ApplyWentAway(const store::HistorySeriesData& series, SeriesOutput& output,
                               const WentAwayOptions& options);

}  // namespace perfwarden::server::history
