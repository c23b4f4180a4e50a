// SPDX-License-Identifier: Apache-2.0
// Mann-Whitney U test, as scipy.stats.mannwhitneyu computes it (SciPy >= 1.7):
// exact null distribution when there are no ties and min(n1, n2) <= 8 ("auto"), otherwise
// the normal approximation with the tie-corrected variance and a 0.5 continuity correction.
#pragma once

#include <span>

#include "stats/ttest.h"

namespace perfwarden::stats {

enum class MwuMethod { kAuto, kExact, kAsymptotic };

struct MannWhitneyResult {
  double u1 = 0;  // statistic for x: R1 - n1(n1+1)/2 (SciPy's and R's convention)
  double u2 = 0;  // n1*n2 - u1
  double p_two_sided = 0;
  double p_less = 0;
  double p_greater = 0;
  bool exact = false;     // which method produced the p-values
  bool has_ties = false;  // ties in the pooled sample

  double PValue(Alternative alternative) const;
};

// U test of x against y. When either side is empty or holds a NaN, every field is NaN (SciPy
// raises). kExact with ties uses the asymptotic method instead (SciPy 1.10 would apply the
// no-ties distribution to a truncated U); so does any exact request whose distribution would
// cost more than ~2^31 steps or 2^22 terms (e.g. 8 vs millions of values); `exact` tells which
// ran. `continuity` applies to the asymptotic method only. With all values equal the
// asymptotic p-values are 1 with continuity and NaN without (SciPy's 0/0).
MannWhitneyResult MannWhitneyU(std::span<const double> x, std::span<const double> y,
                               MwuMethod method = MwuMethod::kAuto, bool continuity = true);

// The same on sides already sorted ascending (a baseline sorted once for many comparisons).
MannWhitneyResult MannWhitneyUSorted(std::span<const double> sorted_x,
                                     std::span<const double> sorted_y,
                                     MwuMethod method = MwuMethod::kAuto, bool continuity = true);

// The smallest two-sided p-value the exact test can give for sizes n1, n2 (no ties):
// 2 / C(n1 + n2, n1), capped at 1. Tells whether a U test can ever reach a given alpha.
double MannWhitneyMinTwoSidedP(int n1, int n2);

}  // namespace perfwarden::stats
