// SPDX-License-Identifier: Apache-2.0
#include "stats/paired_ttest.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "stats/descriptive.h"
#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Result<std::vector<double>> Differences(std::span<const double> y, std::span<const double> x,
                                        bool logs) {
  if (y.size() != x.size()) {
    return InvalidArgument("the paired samples differ in length (" + std::to_string(y.size()) +
                           " and " + std::to_string(x.size()) + " values)");
  }
  std::vector<double> d;
  d.reserve(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    if (logs && !(y[i] > 0 && x[i] > 0)) {
      return InvalidArgument("value " + std::to_string(i) + " is not positive: no logarithm");
    }
    // SciPy subtracts the logs (not log(y / x)); the same steps give the same digits.
    d.push_back(logs ? std::log(y[i]) - std::log(x[i]) : y[i] - x[i]);
  }
  return d;
}

}  // namespace

OneSampleTTestResult OneSampleTTest(std::span<const double> x, double mu) {
  OneSampleTTestResult r;
  r.n = x.size();
  if (x.size() < 2) {
    r.t = r.df = r.p_two_sided = r.p_less = r.p_greater = r.mean = r.sd = kNaN;
    if (x.size() == 1) r.mean = x[0];
    return r;
  }
  const double n = static_cast<double>(x.size());
  r.df = n - 1;
  r.mean = Mean(x);
  r.sd = StdDev(x);
  r.t = (r.mean - mu) / (r.sd / std::sqrt(n));
  if (std::isinf(r.t)) {
    // Zero spread and a mean away from mu: certain, whatever df is (SciPy's t.sf(inf) = 0).
    r.p_two_sided = 0;
    r.p_less = r.t < 0 ? 0 : 1;
    r.p_greater = r.t < 0 ? 1 : 0;
    return r;
  }
  r.p_two_sided = StudentTTwoSidedP(r.t, r.df);
  r.p_less = StudentTCdf(r.t, r.df);
  r.p_greater = StudentTSf(r.t, r.df);
  return r;
}

Result<OneSampleTTestResult> PairedTTest(std::span<const double> y, std::span<const double> x) {
  auto d = Differences(y, x, false);
  if (!d) return tl::unexpected(d.error());
  return OneSampleTTest(*d);
}

Result<OneSampleTTestResult> PairedTTestLog(std::span<const double> y, std::span<const double> x) {
  auto d = Differences(y, x, true);
  if (!d) return tl::unexpected(d.error());
  return OneSampleTTest(*d);
}

}  // namespace perfwarden::stats
