// SPDX-License-Identifier: Apache-2.0
// One-sample and paired t-tests, as scipy.stats.ttest_1samp and ttest_rel compute them: the
// paired test of y against x is the one-sample test of d = y - x against 0, with n - 1 degrees
// of freedom. The log variant tests log(y) - log(x), where a ratio is a shift.
#pragma once

#include <cstddef>
#include <span>

#include "core/result.h"

namespace perfwarden::stats {

struct OneSampleTTestResult {
  double t = 0;   // (mean - mu) / (sd / sqrt(n))
  double df = 0;  // n - 1
  double p_two_sided = 0;
  double p_less = 0;     // the mean is less than mu
  double p_greater = 0;  // the mean is greater than mu
  double mean = 0;
  double sd = 0;  // ddof 1
  size_t n = 0;
};

// One-sample t-test of the mean of x against mu. With n < 2 every field but n is NaN (SciPy's
// answer). With sd 0: t = NaN (mean == mu: p NaN) or -/+inf (p two-sided 0), as SciPy.
// A NaN or infinite value makes the statistics NaN.
OneSampleTTestResult OneSampleTTest(std::span<const double> x, double mu = 0);

// ttest_rel(y, x): the one-sample test of d_i = y_i - x_i. kInvalidArgument when the lengths
// differ.
Result<OneSampleTTestResult> PairedTTest(std::span<const double> y, std::span<const double> x);

// ttest_rel(log(y), log(x)). kInvalidArgument when the lengths differ or a value is <= 0.
Result<OneSampleTTestResult> PairedTTestLog(std::span<const double> y, std::span<const double> x);

}  // namespace perfwarden::stats
