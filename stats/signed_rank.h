// SPDX-License-Identifier: Apache-2.0
// Wilcoxon signed-rank test of paired differences, as scipy.stats.wilcoxon computes it (SciPy
// 1.10, two-sided): ranks of |d| with mid-ranks for ties, the statistic min(R+, R-), the exact
// null distribution or the normal approximation with the tie-corrected variance, and SciPy's
// three ways of treating zero differences.
#pragma once

#include <cstddef>
#include <span>

#include "core/result.h"

namespace perfwarden::stats {

enum class WilcoxonMethod {
  kAuto,    // exact when n <= 50 and no difference is zero, else the normal approximation
  kExact,   // exact unless a difference is zero (then the approximation, as SciPy)
  kApprox,  // normal approximation
};

enum class ZeroMethod {
  kWilcox,  // zero differences are dropped (the approximation only; the exact method has none)
  kPratt,   // zeros are ranked, then their ranks left out of R+ and R- (Pratt 1959)
  kZsplit,  // the zeros' ranks are split evenly between R+ and R-
};

struct WilcoxonOptions {
  WilcoxonMethod method = WilcoxonMethod::kAuto;
  ZeroMethod zero_method = ZeroMethod::kWilcox;
  bool correction = false;  // 0.5 continuity correction of the normal approximation
};

struct WilcoxonResult {
  double statistic = 0;  // min(R+, R-)
  double r_plus = 0;     // sum of the ranks of the positive differences
  double r_minus = 0;
  double p_two_sided = 0;
  double z = 0;  // the normal approximation's z; NaN when exact
  bool exact = false;
  size_t zeros = 0;   // zero differences in the input
  size_t ranked = 0;  // differences ranked (without zeros under kWilcox's approximation)
};

// The test of the differences d against a symmetric distribution about 0. Every number is NaN
// where SciPy answers NaN or refuses: d empty, a NaN in d, or (normal approximation, kWilcox or
// kPratt) every difference zero. With ties the exact method uses the no-ties distribution at
// the integer part of R+, as SciPy 1.10 does. An exact distribution that would cost more than
// ~2^28 steps, or n > 1000 (where 2^-n leaves double precision), uses the approximation
// instead; `exact` tells which ran.
WilcoxonResult WilcoxonSignedRank(std::span<const double> d, const WilcoxonOptions& options = {});

// wilcoxon(y, x): the test of d_i = y_i - x_i. kInvalidArgument when the lengths differ.
Result<WilcoxonResult> WilcoxonSignedRankPaired(std::span<const double> y,
                                                std::span<const double> x,
                                                const WilcoxonOptions& options = {});

// The smallest two-sided p-value the exact test reaches with n non-zero differences: 2 / 2^n,
// capped at 1 (n = 6 cannot go below 0.031). NaN when n < 1.
double WilcoxonMinTwoSidedP(int n);

}  // namespace perfwarden::stats
