// SPDX-License-Identifier: Apache-2.0
// How large a paired change is: the log ratios d_i = log(y_i / x_i) of paired measurements
// (where a relative change is a shift, and a drift shared by both sides of a pair cancels) and
// the one-sample Hodges-Lehmann estimate of their centre, the estimator that goes with the
// signed-rank test.
#pragma once

#include <span>
#include <vector>

#include "core/result.h"

namespace perfwarden::stats {

// d_i = log(y_i / x_i). kInvalidArgument (naming the position) when the lengths differ or a value
// is not a positive finite number.
Result<std::vector<double>> LogRatios(std::span<const double> y, std::span<const double> x);

// Median of the n(n+1)/2 Walsh averages (d_i + d_j) / 2, i <= j (NumPy's median: the mean of the
// two middle values for an even count). O(n^2) memory and time: 200 values make 20,100 averages.
// NaN when empty or a value is NaN.
double OneSampleHodgesLehmann(std::span<const double> d);

}  // namespace perfwarden::stats
