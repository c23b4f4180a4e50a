// SPDX-License-Identifier: Apache-2.0
#include "stats/environment_shift.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "stats/descriptive.h"

namespace perfwarden::stats {
namespace {

std::string Percent(double change) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", 100 * change);
  return text;
}

}  // namespace

ShiftEvidence DetectEnvironmentShift(std::span<const double> worse_log_ratios,
                                     const ShiftPolicy& policy) {
  std::vector<double> finite;
  for (double r : worse_log_ratios) {
    if (std::isfinite(r)) finite.push_back(r);
  }
  ShiftEvidence out;
  out.metrics = finite.size();
  if (finite.empty()) {
    out.reason = "no metric to judge a shift by";
    return out;
  }
  const double median = Median(finite);
  out.median_change = std::expm1(median);
  out.geomean_change = std::expm1(Mean(finite));
  size_t same = 0;
  for (double r : finite) same += (median > 0 && r > 0) || (median < 0 && r < 0) ? 1 : 0;
  out.same_sign_share = static_cast<double>(same) / static_cast<double>(finite.size());
  // Symmetric on the log scale: 5% slower or 1/1.05 as fast.
  const bool beyond = std::abs(median) > std::log1p(policy.threshold);
  out.shifted =
      finite.size() >= policy.min_metrics && beyond && out.same_sign_share >= policy.min_share;
  const std::string figures = std::to_string(same) + " of " + std::to_string(finite.size()) +
                              " metrics moved " + (median > 0 ? "worse" : "better") + ", median " +
                              Percent(out.median_change) + ", geometric mean " +
                              Percent(out.geomean_change);
  if (out.shifted) {
    out.reason = "the run's metrics moved together (" + figures +
                 "): the machine's speed differed between the baseline and this run, or the "
                 "change touches most benchmarks; only a side-by-side measurement can tell";
  } else if (finite.size() < policy.min_metrics) {
    out.reason = "too few metrics (" + std::to_string(finite.size()) + ", need " +
                 std::to_string(policy.min_metrics) + ") to tell a drift from a change";
  } else {
    out.reason = "no shift: " + figures;
  }
  return out;
}

}  // namespace perfwarden::stats
