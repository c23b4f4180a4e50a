// SPDX-License-Identifier: Apache-2.0
// The trimmed mean and its one-sample t-test (Tukey & McLaughlin 1963; Wilcox, "Introduction to
// Robust Estimation and Hypothesis Testing", 4.4.1, R's trimci): a location estimate and test
// that a few wild values cannot carry. With g = floor(trim * n) values cut from each end:
// estimate = mean of the middle n - 2g order statistics; its standard error =
// sd(winsorized x) / ((1 - 2 trim) sqrt(n)), the winsorized sample being x with the g lowest set
// to the (g+1)-th lowest and the g highest to the (g+1)-th highest (sd with ddof 1, as SciPy's
// mstats.trimmed_stde); t = (estimate - mu) / se with n - 2g - 1 degrees of freedom.
// trim 0 is the mean and the plain one-sample t-test.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "stats/descriptive.h"

namespace perfwarden::stats {

// The trimming of the paired gate's "trimmed" test.
inline constexpr double kPairedTrim = 0.2;

struct TrimmedTTestResult {
  double estimate = 0;       // the trimmed mean
  double std_error = 0;      // sd(winsorized) / ((1 - 2 trim) sqrt(n))
  double winsorized_sd = 0;  // ddof 1
  double t = 0;
  double df = 0;  // n - 2g - 1
  double p_two_sided = 0;
  double p_less = 0;     // the trimmed mean is below mu
  double p_greater = 0;  // the trimmed mean is above mu
  size_t n = 0;
  size_t g = 0;  // values cut from each end
};

// The trimmed mean of x (NaN when x is empty or trim is outside [0, 0.5)). SciPy's trim_mean.
double TrimmedMean(std::span<const double> x, double trim);

// The test of the trimmed mean of x against mu. Fewer than 2 values left with a degree of
// freedom (n - 2g < 2), or trim outside [0, 0.5): every field but n and g NaN. A winsorized sd
// of 0 gives t = NaN (estimate == mu) or -/+inf, as the plain t-test. NaN values give NaN.
TrimmedTTestResult TrimmedTTest(std::span<const double> x, double trim, double mu = 0);

// estimate +/- t_{(1+c)/2, n-2g-1} * se. All fields NaN where the test's are.
TInterval TrimmedMeanInterval(std::span<const double> x, double trim, double confidence);

// The bootstrap distribution of the trimmed mean: `resamples` replicates of x resampled with
// replacement (stats/bootstrap.h's generator), in draw order. Empty when x is empty.
std::vector<double> BootstrapTrimmedMeans(std::span<const double> x, double trim, int resamples,
                                          uint64_t seed);

}  // namespace perfwarden::stats
