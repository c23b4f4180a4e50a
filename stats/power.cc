// SPDX-License-Identifier: Apache-2.0
#include "stats/power.h"

#include <algorithm>
#include <boost/math/tools/toms748_solve.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool ValidAlpha(double alpha) { return alpha > 0 && alpha < 1; }

// statsmodels' ttest_power with an explicit df: the rejection probability of the t statistic
// whose noncentrality is d * sqrt(nobs). Two-sided splits alpha over both tails and adds the
// probability of the "wrong" tail too, as statsmodels does.
double TTestPowerDf(double d, double nobs, double df, double alpha, Alternative alternative) {
  // Boost's noncentral t throws (rounding_error in itrunc(nc^2 / 2)) once nc^2 / 2 exceeds
  // INT_MAX. Power is monotone in nc and already 1 (or 0) to double precision far below the
  // clamp unless df << 1, so clamping only matters for absurd inputs such as a zero-noise
  // benchmark's enormous d.
  constexpr double kMaxNoncentrality = 3e4;
  const double nc = std::clamp(d * std::sqrt(nobs), -kMaxNoncentrality, kMaxNoncentrality);
  const double alpha_tail = alternative == Alternative::kTwoSided ? alpha / 2 : alpha;
  // t.isf(a) == -t.ppf(a) by symmetry; the lower quantile is the accurate one for small a.
  const double crit_low = StudentTQuantile(alpha_tail, df);
  if (std::isnan(crit_low)) return kNaN;
  double power = 0;
  if (alternative != Alternative::kLess) power += NonCentralTSf(-crit_low, df, nc);
  if (alternative != Alternative::kGreater) power += NonCentralTCdf(crit_low, df, nc);
  return power;
}

bool ValidArgs(double d, double nobs1, double ratio, double alpha) {
  return std::isfinite(d) && std::isfinite(nobs1) && nobs1 > 0 && std::isfinite(ratio) &&
         ratio > 0 && ValidAlpha(alpha);
}

}  // namespace

double TTestIndPower(double d, double nobs1, double ratio, double alpha, Alternative alternative) {
  if (!ValidArgs(d, nobs1, ratio, alpha)) return kNaN;
  const double nobs2 = nobs1 * ratio;
  const double df = nobs1 + nobs2 - 2;
  if (!(df > 0)) return kNaN;
  const double nobs = 1.0 / (1.0 / nobs1 + 1.0 / nobs2);
  return TTestPowerDf(d, nobs, df, alpha, alternative);
}

double TTestPower(double d, double nobs, double alpha, Alternative alternative) {
  if (!std::isfinite(d) || !std::isfinite(nobs) || !(nobs > 1) || !ValidAlpha(alpha)) return kNaN;
  return TTestPowerDf(d, nobs, nobs - 1, alpha, alternative);
}

double NormalIndPower(double d, double nobs1, double ratio, double alpha, Alternative alternative) {
  // statsmodels treats ratio == 0 as the one-sample case (nobs = nobs1); keep that.
  if (!(std::isfinite(d) && std::isfinite(nobs1) && nobs1 > 0 && std::isfinite(ratio) &&
        ratio >= 0 && ValidAlpha(alpha))) {
    return kNaN;
  }
  const double nobs = ratio > 0 ? 1.0 / (1.0 / nobs1 + 1.0 / (nobs1 * ratio)) : nobs1;
  const double shift = d * std::sqrt(nobs);
  const double alpha_tail = alternative == Alternative::kTwoSided ? alpha / 2 : alpha;
  const double crit = -NormalQuantile(alpha_tail);  // norm.isf(alpha_tail)
  double power = 0;
  if (alternative != Alternative::kLess) power += NormalSf(crit - shift);
  if (alternative != Alternative::kGreater) power += NormalCdf(-crit - shift);
  return power;
}

double TTestIndSolveNobs1(double d, double power, double ratio, double alpha,
                          Alternative alternative) {
  if (!ValidArgs(d, 2.0, ratio, alpha) || !(power > 0 && power < 1)) return kNaN;
  // The smallest nobs1 with df > 0; power is increasing in nobs1 whenever the target is
  // reachable, so one bracket [lo, hi] with a sign change holds the only root.
  const double boundary = 2.0 / (1.0 + ratio);
  auto excess = [&](double n) { return TTestIndPower(d, n, ratio, alpha, alternative) - power; };

  double lo = 2.0;
  double f_lo = excess(lo);
  if (std::isnan(f_lo)) return kNaN;
  double hi = lo;
  double f_hi = f_lo;
  if (f_lo > 0) {
    // The root lies below 2 (large effect): halve the distance to the df = 0 boundary.
    hi = lo;
    for (int i = 0; i < 60 && f_lo > 0; ++i) {
      hi = lo;
      f_hi = f_lo;
      lo = boundary + (lo - boundary) / 2;
      f_lo = excess(lo);
      if (std::isnan(f_lo)) return kNaN;
    }
    if (f_lo > 0) return kNaN;
  } else {
    // Power approaches 1 (or stays at alpha for d == 0): grow until the target is passed.
    for (int i = 0; i < 200 && f_hi < 0; ++i) {
      lo = hi;
      f_lo = f_hi;
      hi *= 2;
      if (hi > 1e15) return kNaN;
      f_hi = excess(hi);
      if (std::isnan(f_hi)) return kNaN;
    }
    if (f_hi < 0) return kNaN;
  }
  if (f_lo == 0) return lo;
  if (f_hi == 0) return hi;
  std::uintmax_t max_iter = 200;
  const auto bracket = boost::math::tools::toms748_solve(
      excess, lo, hi, f_lo, f_hi,
      boost::math::tools::eps_tolerance<double>(std::numeric_limits<double>::digits - 2), max_iter);
  return bracket.first + (bracket.second - bracket.first) / 2;
}

int RepetitionsNeeded(double relative_change, double cv, double alpha, double power) {
  if (!std::isfinite(relative_change) || relative_change == 0 || relative_change <= -1 ||
      !std::isfinite(cv) || !(cv > 0) || !ValidAlpha(alpha) || !(power > 0 && power < 1)) {
    return -1;
  }
  const double d = std::fabs(std::log1p(relative_change)) / std::sqrt(std::log1p(cv * cv));
  if (!(d > 0) || !std::isfinite(d)) return -1;
  // Fewer than two repetitions leave no variance estimate, whatever the power says.
  if (TTestIndPower(d, 2.0, 1.0, alpha, Alternative::kTwoSided) >= power) return 2;
  const double n = TTestIndSolveNobs1(d, power, 1.0, alpha, Alternative::kTwoSided);
  if (std::isnan(n)) return std::numeric_limits<int>::max();  // beyond any feasible size
  const double reps = std::ceil(n);
  if (reps >= static_cast<double>(std::numeric_limits<int>::max())) {
    return std::numeric_limits<int>::max();
  }
  return reps < 2 ? 2 : static_cast<int>(reps);
}

}  // namespace perfwarden::stats
