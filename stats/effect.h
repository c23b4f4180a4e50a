// SPDX-License-Identifier: Apache-2.0
// Effect sizes: how big a change is, next to whether it is significant.
#pragma once

#include <cmath>
#include <limits>
#include <span>

namespace perfwarden::stats {

// Relative change of a location: contender / base - 1. When base is 0: 0 if contender is 0
// too, otherwise (contender - base) / ((|base| + |contender|) / 2) (compare.py's rule).
// Inline: the bootstrap calls it once per replicate.
inline double RelativeChange(double base, double contender) {
  if (std::isnan(base) || std::isnan(contender)) return std::numeric_limits<double>::quiet_NaN();
  if (base == 0) {
    if (contender == 0) return 0;
    return (contender - base) / ((std::fabs(base) + std::fabs(contender)) / 2);
  }
  return contender / base - 1;
}

// Relative change of the medians. NaN when a side is empty.
double MedianRelativeChange(std::span<const double> base, std::span<const double> contender);

// Hodges-Lehmann estimate of the shift y - x: the median of all pairwise differences
// y_j - x_i (the estimator that goes with the Mann-Whitney test). NaN when a side is empty.
double HodgesLehmannShift(std::span<const double> x, std::span<const double> y);

// Cohen's d of y against x: (mean_y - mean_x) / pooled sample stddev. NaN when a side has
// fewer than 2 values, or when the pooled stddev is 0 and the means are equal; +/-inf when it
// is 0 and they differ.
double CohensD(std::span<const double> x, std::span<const double> y);

// Geometric mean of positive values. NaN when empty or a value is <= 0.
double GeometricMean(std::span<const double> x);

}  // namespace perfwarden::stats
