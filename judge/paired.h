// SPDX-License-Identifier: Apache-2.0
// The paired measurement judged (wire/paired.h): each series under its threshold rule (first
// match: a threshold and alpha, or IGNORED), a series with too few blocks measured on both sides
// left out as NEW with the reason, and one call of the paired statistics (stats/paired_verdict.h:
// the look's three-way verdict, Holm across the gated series, UNSTABLE at the last look; the
// series that do not gate, judge::Gating, REPORTED).
// The one home of paired judging: the runner calls it between looks to know whether to measure
// more blocks, and a stored paired verdict is this function of its measurement.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/threshold_rule.h"
#include "judge/judge.h"
#include "stats/paired_verdict.h"
#include "wire/paired.h"

namespace perfwarden::judge {

struct PairedRow {
  RowKind kind = RowKind::kNew;
  const wire::PairedSeries* series = nullptr;  // never null
  const ThresholdRule* rule = nullptr;         // the first rule that matched; null when none
  double threshold = 0;                        // the rule's or the policy's
  double alpha = 0;                            // the rule's; 0: the policy's
  bool gated = true;                           // false: judged, REPORTED (judge::Gating)
  int complete_blocks = 0;                     // blocks with values on both sides
  size_t verdict = 0;                          // kJudged: index into verdicts.metrics or reported
  std::string reason;                          // kIgnored and kNew: why
};

struct PairedJudgement {
  std::vector<PairedRow> rows;         // in the measurement's series order
  stats::PairedLookVerdicts verdicts;  // the gated series': they decide the looks and the gate
  // The reported series', each judged alone at the last look its own blocks reach (its benchmark
  // is measured while a gated metric of it is open): shown, never gating or holding a look open.
  std::vector<stats::PairedMetricVerdict> reported;
  int ignored = 0;
  int added = 0;

  const stats::PairedMetricVerdict* VerdictOf(const PairedRow& row) const {
    if (row.kind != RowKind::kJudged) return nullptr;
    return row.gated ? &verdicts.metrics[row.verdict] : &reported[row.verdict];
  }
};

// The policy a measurement was judged by: its parameters' threshold and alpha (the policy's
// defaults when absent) and its design's test, blocks and growth. kInvalidArgument naming the
// field when they are out of range.
Result<stats::PairedPolicy> PairedPolicyOf(const wire::PairedMeasurement& measurement);

// The last look of the policy's schedule that `blocks` blocks reach; -1 when they reach none.
int LookReached(const stats::PairedPolicy& policy, int blocks);

// Judges the measurement at the last look its complete blocks reach (stats::kLookReached: a
// series decided at a look needs no blocks after it, as the runner stops measuring it), as the
// last look when `budget_exhausted` (or when it is the schedule's last). kInvalidArgument when no
// series reaches the first look.
Result<PairedJudgement> JudgePaired(const wire::PairedMeasurement& measurement,
                                    const stats::PairedPolicy& policy, bool budget_exhausted);

}  // namespace perfwarden::judge
