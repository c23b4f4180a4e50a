// SPDX-License-Identifier: Apache-2.0
#include "stats/ttest.h"

#include <cmath>
#include <limits>
#include <vector>

#include "stats/compensated.h"
#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TTestResult AllNaN() { return {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}; }

// mean(x) - mean(y) without the cancellation of two rounded means: each mean is carried as
// hi + lo (compensated sum, exact division residual), so near-identical samples (a difference of
// 1e-7 on values near 50) keep all their digits instead of ~8.
double MeanDifference(std::span<const double> x, std::span<const double> y) {
  const DoubleDouble mx = MeanDd(x);
  const DoubleDouble my = MeanDd(y);
  const double diff = mx.hi - my.hi;
  if (!std::isfinite(diff)) return diff;
  return diff + (mx.lo - my.lo);
}

// The three p-values of t with df degrees of freedom. An infinite t (zero standard error,
// different means) decides them whatever df is, as SciPy reports for two constant samples.
void FillPValues(TTestResult& r) {
  if (std::isinf(r.t)) {
    r.p_two_sided = 0;
    r.p_less = r.t < 0 ? 0 : 1;
    r.p_greater = r.t < 0 ? 1 : 0;
    return;
  }
  r.p_two_sided = StudentTTwoSidedP(r.t, r.df);
  r.p_less = StudentTCdf(r.t, r.df);
  r.p_greater = StudentTSf(r.t, r.df);
}

// Welch-Satterthwaite degrees of freedom; NaN when both variances are zero (0 / 0).
double WelchDf(double vn_x, double vn_y, double n_x, double n_y) {
  const double sum = vn_x + vn_y;
  return sum * sum / (vn_x * vn_x / (n_x - 1) + vn_y * vn_y / (n_y - 1));
}

// Means and variances of both samples; false (result all NaN) when a side has n < 2.
bool Moments(std::span<const double> x, std::span<const double> y, TTestResult& r) {
  if (x.size() < 2 || y.size() < 2) {
    r = AllNaN();
    return false;
  }
  r.mean_x = Mean(x);
  r.mean_y = Mean(y);
  r.var_x = Variance(x, 1);
  r.var_y = Variance(y, 1);
  return true;
}

}  // namespace

double TTestResult::PValue(Alternative alternative) const {
  switch (alternative) {
    case Alternative::kLess:
      return p_less;
    case Alternative::kGreater:
      return p_greater;
    case Alternative::kTwoSided:
      break;
  }
  return p_two_sided;
}

TTestResult WelchTTest(std::span<const double> x, std::span<const double> y) {
  TTestResult r;
  if (!Moments(x, y, r)) return r;
  const double n_x = static_cast<double>(x.size());
  const double n_y = static_cast<double>(y.size());
  const double vn_x = r.var_x / n_x;
  const double vn_y = r.var_y / n_y;
  r.df = WelchDf(vn_x, vn_y, n_x, n_y);
  r.t = MeanDifference(x, y) / std::sqrt(vn_x + vn_y);
  FillPValues(r);
  return r;
}

TTestResult StudentTTest(std::span<const double> x, std::span<const double> y) {
  TTestResult r;
  if (!Moments(x, y, r)) return r;
  const double n_x = static_cast<double>(x.size());
  const double n_y = static_cast<double>(y.size());
  r.df = n_x + n_y - 2;
  const double pooled = ((n_x - 1) * r.var_x + (n_y - 1) * r.var_y) / r.df;
  r.t = MeanDifference(x, y) / std::sqrt(pooled * (1 / n_x + 1 / n_y));
  FillPValues(r);
  return r;
}

TTestResult WelchTTestLog(std::span<const double> x, std::span<const double> y) {
  std::vector<double> log_x;
  std::vector<double> log_y;
  log_x.reserve(x.size());
  log_y.reserve(y.size());
  for (double v : x) {
    if (!(v > 0)) return AllNaN();
    log_x.push_back(std::log(v));
  }
  for (double v : y) {
    if (!(v > 0)) return AllNaN();
    log_y.push_back(std::log(v));
  }
  return WelchTTest(log_x, log_y);
}

TInterval WelchDiffConfidenceInterval(std::span<const double> x, std::span<const double> y,
                                      double confidence) {
  if (x.size() < 2 || y.size() < 2 || !(confidence > 0 && confidence < 1)) {
    return {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  }
  const double n_x = static_cast<double>(x.size());
  const double n_y = static_cast<double>(y.size());
  const double vn_x = Variance(x, 1) / n_x;
  const double vn_y = Variance(y, 1) / n_y;
  TInterval ci;
  ci.estimate = MeanDifference(x, y);
  ci.std_error = std::sqrt(vn_x + vn_y);
  ci.df = WelchDf(vn_x, vn_y, n_x, n_y);
  // For c >= 0.5 the lower tail (1 - c) / 2 is exact in binary; (1 + c) / 2 would round.
  ci.t_crit = -StudentTQuantile((1 - confidence) / 2, ci.df);
  if (ci.std_error == 0 && std::isfinite(ci.estimate)) {
    // Two constant samples: df is undefined (0 / 0) but the interval is the exact difference,
    // which lets deterministic metrics (instruction counts, sizes) still reach a verdict.
    ci.lower = ci.upper = ci.estimate;
    return ci;
  }
  ci.lower = ci.estimate - ci.t_crit * ci.std_error;
  ci.upper = ci.estimate + ci.t_crit * ci.std_error;
  return ci;
}

}  // namespace perfwarden::stats
