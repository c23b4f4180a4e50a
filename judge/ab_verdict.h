// SPDX-License-Identifier: Apache-2.0
// `perfwarden ab`'s verdict on one metric of two configurations' runs, by the gate's rule
// (stats::JudgeMetrics): better or worse when the change is significant (a two-sided U test
// below alpha) and beyond the threshold; no difference when its confidence interval lies within
// +/- the threshold; otherwise undecided (more runs would tell); too few runs when the runs
// cannot reach alpha at all (2 against 2 never can). So an exactly repeatable change of 0.01%
// is no difference, not "worse with p 0.001".
#pragma once

#include <string_view>

#include "core/metric.h"

namespace perfwarden::judge {

enum class AbVerdict { kBetter, kWorse, kNoDifference, kUndecided, kTooFewRuns };

// "better", "worse", "no difference", "undecided", "too few runs".
std::string_view AbVerdictName(AbVerdict verdict);

struct AbMetricStats {
  int n_a = 0, n_b = 0;
  double change = 0;               // median_b / median_a - 1
  double ci_low = 0, ci_high = 0;  // the change's confidence interval
  double p_value = 1;              // two-sided Mann-Whitney U
  Direction direction = Direction::kLowerIsBetter;
};

// alpha in (0, 0.5], threshold >= 0 (a fraction: 0.01 is 1%).
AbVerdict JudgeAbMetric(const AbMetricStats& metric, double alpha, double threshold);

}  // namespace perfwarden::judge
