// SPDX-License-Identifier: Apache-2.0
// Two-sample t-tests: Welch's (unequal variances, Welch-Satterthwaite df) and Student's
// (pooled), as scipy.stats.ttest_ind computes them. The log variant tests ratio-scale metrics
// (times, throughputs) on log values, where a relative change is a shift.
#pragma once

#include <span>

#include "stats/descriptive.h"

namespace perfwarden::stats {

enum class Alternative {
  kTwoSided,
  kLess,     // the first sample's location is less than the second's
  kGreater,  // the first sample's location is greater than the second's
};

struct TTestResult {
  double t = 0;  // (mean_x - mean_y) / se
  double df = 0;
  double p_two_sided = 0;
  double p_less = 0;
  double p_greater = 0;
  double mean_x = 0;
  double mean_y = 0;
  double var_x = 0;  // ddof 1
  double var_y = 0;

  double PValue(Alternative alternative) const;
};

// Welch's t-test of x against y. With n < 2 on a side, every field NaN. With both variances
// zero: t = NaN (equal means) or -/+inf (different means), df NaN, p as SciPy gives
// (NaN for equal means; 0 two-sided for different means).
TTestResult WelchTTest(std::span<const double> x, std::span<const double> y);

// Student's pooled-variance t-test (df = n1 + n2 - 2). Same edge cases as WelchTTest.
TTestResult StudentTTest(std::span<const double> x, std::span<const double> y);

// Welch's t-test on natural logs of the values. Every field NaN when a value is <= 0.
TTestResult WelchTTestLog(std::span<const double> x, std::span<const double> y);

// Welch confidence interval of mean(x) - mean(y). All fields NaN when a side has n < 2 or
// confidence is not in (0, 1). Both variances zero: lower = upper = estimate (df, t_crit NaN).
TInterval WelchDiffConfidenceInterval(std::span<const double> x, std::span<const double> y,
                                      double confidence);

}  // namespace perfwarden::stats
