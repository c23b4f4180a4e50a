// SPDX-License-Identifier: Apache-2.0
// Drift of the machine between the two sides of an unpaired comparison. The baseline and the
// pull request are measured at different times, often on different hosts; on a shared CI
// runner the same binary's speed moves by 10% between runs seconds apart and by up to 40% after
// a build. A drift moves every benchmark of a run the same way, so it can create regressions
// where the code did not change and hide a real one (a planted +10% measured as -8% because the
// baseline ran 40% slow). A pull request that really slows most of its benchmarks down looks
// the same from two unpaired samples; either way the unpaired verdict cannot be trusted and the
// metrics must be measured side by side (stats/paired_verdict.h). docs/statistics.md,
// "Environment shift", gives the rule and its calibration.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace perfwarden::stats {

struct ShiftPolicy {
  double threshold = 0.05;  // the gate's threshold: a shift smaller than it is not a shift
  double min_share = 0.75;  // of the metrics moving the same way as the median
  size_t min_metrics = 4;   // fewer judged metrics cannot tell a drift from a change
};

struct ShiftEvidence {
  bool shifted = false;
  size_t metrics = 0;          // metrics judged (finite log ratios)
  double median_change = 0;    // exp(median of the oriented log ratios) - 1; + is slower/worse
  double geomean_change = 0;   // exp(mean of the oriented log ratios) - 1
  double same_sign_share = 0;  // share of metrics whose log ratio has the median's sign
  std::string reason;          // one sentence with the figures
};

// `worse_log_ratios`: for each metric judged, log(median(contender) / median(base)), negated
// for a metric where higher is better, so that + always means worse. Non-finite entries are
// skipped. Shifted when at least min_metrics metrics are judged, the median log ratio is beyond
// ±log(1 + threshold) (5% slower, or 1/1.05 as fast), and at least min_share of the metrics moved
// in the median's direction.
ShiftEvidence DetectEnvironmentShift(std::span<const double> worse_log_ratios,
                                     const ShiftPolicy& policy = {});

}  // namespace perfwarden::stats
