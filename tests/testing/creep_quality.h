// SPDX-License-Identifier: Apache-2.0
// Creep detection on the labelled history corpus (tests/fixtures/history; docs/statistics.md,
// "Creep"): every series goes through the history detector, then stats::DetectCreeps with its
// confirmed steps. A labelled drift is caught by a creep whose range overlaps it, else by a
// confirmed step (not replaced by a creep) inside it (give or take 5 points), else missed; a creep
// that overlaps no drift is false; a confirmed step that a creep replaced within 5 points of a
// planted step of at least 5% (outside any drift) is a real step lost. Shared by
// bench/creep_quality.cc (the table) and tests/unit/stats/creep_quality_test.cc (the pin).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "stats/creep.h"
#include "stats/history_detector.h"
#include "tests/testing/history_quality.h"

namespace perfwarden::quality {

struct CreepScore {
  std::size_t series = 0, points = 0;
  std::size_t drifts = 0;
  std::size_t drifts_by_creep = 0;  // a creep overlaps the drift
  std::size_t drifts_by_step = 0;   // no creep, a confirmed step within [start - 5, end + 5)
  std::size_t drifts_missed = 0;
  std::size_t creeps = 0;
  std::size_t false_creeps = 0;             // creeps that overlap no drift
  std::size_t series_with_false_creep = 0;  // series with at least one
  std::size_t steps_replaced = 0;           // confirmed steps inside a creep
  std::size_t real_steps_lost = 0;          // of which near a planted step >= 5%
};

// Per category, plus "all".
Result<std::map<std::string, CreepScore>> EvaluateCreeps(const std::vector<LabelledSeries>& corpus,
                                                         const stats::HistoryOptions& history = {},
                                                         const stats::CreepOptions& creep = {});

std::string FormatCreepTable(const std::map<std::string, CreepScore>& scores);

}  // namespace perfwarden::quality
