// SPDX-License-Identifier: Apache-2.0
// Accurate sums and means for the statistics engine: values carried as hi + lo so that
// 1e9-magnitude samples with tiny spreads, and differences of nearly equal means, keep their
// digits. Internal to stats/ (descriptive statistics and the t-tests share it).
#pragma once

#include <span>

namespace perfwarden::stats {

// A value carried as an unevaluated sum hi + lo (|lo| <= ulp(hi) / 2).
struct DoubleDouble {
  double hi = 0;
  double lo = 0;
};

// Neumaier (Kahan-Babuska) summation. A non-finite running sum is returned as is.
DoubleDouble CompensatedSum(std::span<const double> x);

// The mean as hi + lo (the division's residual, fma(-hi, n, sum), is exact). Empty: NaN.
DoubleDouble MeanDd(std::span<const double> x);

}  // namespace perfwarden::stats
