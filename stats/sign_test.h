// SPDX-License-Identifier: Apache-2.0
// The sign test of paired differences: the count of positive differences against
// Binomial(n, 1/2), zeros dropped, with the two-sided p-value of scipy.stats.binomtest.
#pragma once

#include <cstddef>
#include <span>

namespace perfwarden::stats {

struct SignTestResult {
  size_t positive = 0;  // differences > 0
  size_t n = 0;         // differences != 0
  double p_two_sided = 0;
};

// binomtest(positive, n, 0.5), two-sided: the probability of a count at most as likely as the
// one seen, which for p = 1/2 is min(1, 2 P(X <= min(k, n - k))) and 1 at k = n / 2. NaN when
// no difference is non-zero (binomtest refuses n = 0) or a difference is NaN.
SignTestResult SignTest(std::span<const double> d);

// The two-sided binomtest p-value of k successes in n trials at probability 1/2. NaN when n < 1
// or k > n.
double BinomialHalfTwoSidedP(size_t k, size_t n);

}  // namespace perfwarden::stats
