// SPDX-License-Identifier: Apache-2.0
#include "stats/distributions.h"

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/policies/policy.hpp>
#include <cmath>
#include <limits>

namespace perfwarden::stats {
namespace {

// Domain and overflow errors become NaN/inf return values instead of exceptions.
using Policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::rounding_error<boost::math::policies::ignore_error>>;
using Normal = boost::math::normal_distribution<double, Policy>;
using StudentT = boost::math::students_t_distribution<double, Policy>;
using NonCentralT = boost::math::non_central_t_distribution<double, Policy>;
using Binomial = boost::math::binomial_distribution<double, Policy>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool ValidDf(double df) { return std::isfinite(df) ? df > 0 : df == INFINITY; }

}  // namespace

double NormalCdf(double z) {
  if (std::isnan(z)) return kNaN;
  if (std::isinf(z)) return z > 0 ? 1.0 : 0.0;
  return boost::math::cdf(Normal(), z);
}

double NormalSf(double z) {
  if (std::isnan(z)) return kNaN;
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(Normal(), z));
}

double NormalQuantile(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  return boost::math::quantile(Normal(), p);
}

double NormalTwoSidedP(double z) {
  if (std::isnan(z)) return kNaN;
  return std::fmin(1.0, 2.0 * NormalSf(std::fabs(z)));
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t) || !ValidDf(df)) return kNaN;
  if (std::isinf(df)) return NormalCdf(t);
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(StudentT(df), t);
}

double StudentTSf(double t, double df) {
  if (std::isnan(t) || !ValidDf(df)) return kNaN;
  if (std::isinf(df)) return NormalSf(t);
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(StudentT(df), t));
}

double StudentTQuantile(double p, double df) {
  if (std::isnan(p) || p < 0 || p > 1 || !ValidDf(df)) return kNaN;
  if (std::isinf(df)) return NormalQuantile(p);
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  return boost::math::quantile(StudentT(df), p);
}

double StudentTTwoSidedP(double t, double df) {
  if (std::isnan(t) || !ValidDf(df)) return kNaN;
  return std::fmin(1.0, 2.0 * StudentTSf(std::fabs(t), df));
}

double BinomialCdf(double k, double n, double p) {
  if (std::isnan(k) || !(n >= 0) || !std::isfinite(n) || !(p >= 0 && p <= 1)) return kNaN;
  const double whole = std::floor(k);
  if (whole < 0) return 0;
  if (whole >= n) return 1;
  return boost::math::cdf(Binomial(n, p), whole);
}

double NonCentralTCdf(double t, double df, double noncentrality) {
  if (std::isnan(t) || !ValidDf(df) || !std::isfinite(noncentrality)) return kNaN;
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(NonCentralT(df, noncentrality), t);
}

double NonCentralTSf(double t, double df, double noncentrality) {
  if (std::isnan(t) || !ValidDf(df) || !std::isfinite(noncentrality)) return kNaN;
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(NonCentralT(df, noncentrality), t));
}

}  // namespace perfwarden::stats
