// SPDX-License-Identifier: Apache-2.0
#include "stats/paired_effect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "stats/descriptive.h"

namespace perfwarden::stats {

Result<std::vector<double>> LogRatios(std::span<const double> y, std::span<const double> x) {
  if (y.size() != x.size()) {
    return InvalidArgument("the paired samples differ in length (" + std::to_string(y.size()) +
                           " and " + std::to_string(x.size()) + " values)");
  }
  std::vector<double> d;
  d.reserve(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    if (!(y[i] > 0 && x[i] > 0 && std::isfinite(y[i]) && std::isfinite(x[i]))) {
      return InvalidArgument("pair " + std::to_string(i) +
                             " holds a value that is not a positive finite number: no log ratio");
    }
    d.push_back(std::log(y[i] / x[i]));
  }
  return d;
}

double OneSampleHodgesLehmann(std::span<const double> d) {
  if (d.empty() || std::any_of(d.begin(), d.end(), [](double v) { return std::isnan(v); })) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (size_t i = 0; i < d.size(); ++i) {
    for (size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2);
  }
  return Median(walsh);
}

}  // namespace perfwarden::stats
