// SPDX-License-Identifier: Apache-2.0
#include "stats/effect.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "stats/descriptive.h"

namespace perfwarden::stats {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

double MedianRelativeChange(std::span<const double> base, std::span<const double> contender) {
  if (base.empty() || contender.empty()) return kNaN;
  return RelativeChange(Median(base), Median(contender));
}

double HodgesLehmannShift(std::span<const double> x, std::span<const double> y) {
  if (x.empty() || y.empty()) return kNaN;
  std::vector<double> diffs;
  diffs.reserve(x.size() * y.size());
  for (double yj : y) {
    for (double xi : x) diffs.push_back(yj - xi);
  }
  return Median(diffs);
}

double CohensD(std::span<const double> x, std::span<const double> y) {
  if (x.size() < 2 || y.size() < 2) return kNaN;
  double nx = static_cast<double>(x.size());
  double ny = static_cast<double>(y.size());
  double pooled = ((nx - 1) * Variance(x) + (ny - 1) * Variance(y)) / (nx + ny - 2);
  double diff = Mean(y) - Mean(x);
  if (pooled == 0) return diff == 0 ? kNaN : std::copysign(INFINITY, diff);
  return diff / std::sqrt(pooled);
}

double GeometricMean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  double sum = 0;
  for (double v : x) {
    if (!(v > 0)) return kNaN;
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(x.size()));
}

}  // namespace perfwarden::stats
