// SPDX-License-Identifier: Apache-2.0
#include "stats/sign_test.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/distributions.h"

namespace perfwarden::stats {

double BinomialHalfTwoSidedP(size_t k, size_t n) {
  if (n < 1 || k > n) return std::numeric_limits<double>::quiet_NaN();
  // binomtest sums the outcomes whose probability is at most (1 + 1e-7) times that of k; with
  // p = 1/2 they are the two tails beyond min(k, n - k), which are equal.
  if (2 * k == n) return 1.0;
  const size_t tail = std::min(k, n - k);
  return std::min(1.0, 2 * BinomialCdf(static_cast<double>(tail), static_cast<double>(n), 0.5));
}

SignTestResult SignTest(std::span<const double> d) {
  SignTestResult r;
  for (double v : d) {
    if (std::isnan(v)) return {0, 0, std::numeric_limits<double>::quiet_NaN()};
    if (v != 0) ++r.n;
    if (v > 0) ++r.positive;
  }
  r.p_two_sided = BinomialHalfTwoSidedP(r.positive, r.n);
  return r;
}

}  // namespace perfwarden::stats
