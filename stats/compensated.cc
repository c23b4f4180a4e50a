// SPDX-License-Identifier: Apache-2.0
#include "stats/compensated.h"

#include <cmath>

namespace perfwarden::stats {

// Neumaier (Kahan-Babuska) summation: the running error of each addition is collected in `c`,
// so the result is close to the correctly rounded sum even for 1e9-magnitude values.
// A non-finite running sum is returned as is (the compensation would turn inf into NaN).
DoubleDouble CompensatedSum(std::span<const double> x) {
  double s = 0;
  double c = 0;
  for (double v : x) {
    const double t = s + v;
    c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
  }
  if (!std::isfinite(s)) return {s, 0};
  const double hi = s + c;
  return {hi, c - (hi - s)};
}

// The mean as hi + lo. The residual of the division, fma(-hi, n, sum), is exact, so `lo` keeps
// the digits a rounded mean loses; the variance subtracts both parts.
DoubleDouble MeanDd(std::span<const double> x) {
  const double n = static_cast<double>(x.size());
  const DoubleDouble sum = CompensatedSum(x);
  const double hi = sum.hi / n;
  if (!std::isfinite(hi)) return {hi, 0};
  return {hi, (std::fma(-hi, n, sum.hi) + sum.lo) / n};
}

}  // namespace perfwarden::stats
