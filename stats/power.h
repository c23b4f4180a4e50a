// SPDX-License-Identifier: Apache-2.0
// Power analysis for the two-sample t-test, as statsmodels' TTestIndPower / NormalIndPower
// compute it (noncentral t, both tails for two-sided), and the question perfwarden asks of it:
// how many repetitions per side detect a given relative change at a given noise level?
#pragma once

#include "stats/ttest.h"

namespace perfwarden::stats {

// Power of the pooled two-sample t-test for standardized effect `d`, nobs1 on the first side
// and ratio * nobs1 on the second. Alternative kGreater is statsmodels' "larger", kLess its
// "smaller". NaN when a size is too small for the test (df <= 0) or an argument is invalid.
double TTestIndPower(double d, double nobs1, double ratio, double alpha, Alternative alternative);

// Power of the one-sample (or paired) t-test for standardized effect `d` (mean shift / sd) with
// `nobs` observations (df = nobs - 1), as statsmodels' TTestPower computes it. NaN when nobs <= 1
// or an argument is invalid.
double TTestPower(double d, double nobs, double alpha, Alternative alternative);

// The same with the normal approximation (statsmodels NormalIndPower).
double NormalIndPower(double d, double nobs1, double ratio, double alpha, Alternative alternative);

// The (fractional) nobs1 at which TTestIndPower reaches `power`, found by root bracketing to
// full double precision. NaN when it cannot be reached or the arguments are invalid.
double TTestIndSolveNobs1(double d, double power, double ratio, double alpha,
                          Alternative alternative);

// Repetitions per side (equal sizes, two-sided test at `alpha`) needed to detect a relative
// change `relative_change` (0.05 = 5%) of a metric whose coefficient of variation is `cv`,
// with probability `power`. Works on the log scale (d = |log(1 + change)| / sqrt(log(1+cv^2))),
// so it is right for ratio-scale metrics. At least 2. Returns -1 when an argument is invalid
// (cv <= 0 or not finite, change == 0, alpha or power outside (0, 1)).
int RepetitionsNeeded(double relative_change, double cv, double alpha, double power);

}  // namespace perfwarden::stats
