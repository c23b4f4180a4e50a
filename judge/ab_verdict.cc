// SPDX-License-Identifier: Apache-2.0
#include "judge/ab_verdict.h"

#include <cmath>

#include "stats/mann_whitney.h"

namespace perfwarden::judge {

std::string_view AbVerdictName(AbVerdict verdict) {
  switch (verdict) {
    case AbVerdict::kBetter:
      return "better";
    case AbVerdict::kWorse:
      return "worse";
    case AbVerdict::kNoDifference:
      return "no difference";
    case AbVerdict::kUndecided:
      return "undecided";
    case AbVerdict::kTooFewRuns:
      return "too few runs";
  }
  return "undecided";
}

AbVerdict JudgeAbMetric(const AbMetricStats& m, double alpha, double threshold) {
  if (stats::MannWhitneyMinTwoSidedP(m.n_a, m.n_b) >= alpha) return AbVerdict::kTooFewRuns;
  if (m.p_value < alpha && std::fabs(m.change) > threshold) {
    return IsWorse(m.change, m.direction) ? AbVerdict::kWorse : AbVerdict::kBetter;
  }
  // Within +/- threshold, ends included: a threshold of 0 and an exactly repeated value (an
  // interval of [0, 0]) is no difference.
  if (m.ci_low >= -threshold && m.ci_high <= threshold) return AbVerdict::kNoDifference;
  return AbVerdict::kUndecided;
}

}  // namespace perfwarden::judge
