// SPDX-License-Identifier: Apache-2.0
#include "stats/peer_detectors.h"

#include <cmath>
#include <limits>

#include "stats/descriptive.h"

namespace perfwarden::stats {
namespace {

Result<void> CheckFinite(std::span<const double> x) {
  if (!AllFinite(x)) return InvalidArgument("a value is NaN or infinite", "series");
  return {};
}

}  // namespace

Result<std::vector<std::size_t>> PreviousPointDetector(std::span<const double> x, double ratio,
                                                       bool both_directions) {
  if (!(ratio > 1) || !std::isfinite(ratio)) {
    return InvalidArgument("must be a finite ratio above 1 (2 = 200%)", "ratio");
  }
  if (auto finite = CheckFinite(x); !finite) return tl::unexpected(finite.error());
  std::vector<std::size_t> out;
  for (std::size_t i = 1; i < x.size(); ++i) {
    if (!(x[i] > 0 && x[i - 1] > 0)) continue;
    if (x[i] / x[i - 1] > ratio || (both_directions && x[i - 1] / x[i] > ratio)) {
      out.push_back(i);
    }
  }
  return out;
}

Result<std::vector<std::size_t>> LookbackZScoreDetector(std::span<const double> x,
                                                        std::size_t lookback, double z_threshold,
                                                        std::size_t min_history) {
  if (lookback < 2) return InvalidArgument("must be at least 2", "lookback");
  if (!(z_threshold > 0) || !std::isfinite(z_threshold)) {
    return InvalidArgument("must be a positive number", "z_threshold");
  }
  if (min_history < 2) return InvalidArgument("must be at least 2", "min_history");
  if (auto finite = CheckFinite(x); !finite) return tl::unexpected(finite.error());
  std::vector<std::size_t> out;
  for (std::size_t i = min_history; i < x.size(); ++i) {
    const std::size_t first = i > lookback ? i - lookback : 0;
    const std::span<const double> history = x.subspan(first, i - first);
    const double sd = StdDev(history);
    if (!(sd > 0)) continue;
    if (std::fabs(x[i] - Mean(history)) / sd > z_threshold) out.push_back(i);
  }
  return out;
}

Result<std::vector<std::size_t>> MovingWindowTTestDetector(std::span<const double> x,
                                                           std::size_t window, double t_threshold) {
  if (window < 2) return InvalidArgument("must be at least 2", "window");
  if (!(t_threshold > 0) || !std::isfinite(t_threshold)) {
    return InvalidArgument("must be a positive number", "t_threshold");
  }
  if (auto finite = CheckFinite(x); !finite) return tl::unexpected(finite.error());
  std::vector<std::size_t> out;
  if (x.size() < 2 * window) return out;
  const double w = static_cast<double>(window);
  std::size_t best = 0;
  double best_t = -1;  // < 0: not inside a run of candidates
  for (std::size_t i = window; i + window <= x.size(); ++i) {
    const std::span<const double> before = x.subspan(i - window, window);
    const std::span<const double> after = x.subspan(i, window);
    const double diff = std::fabs(Mean(after) - Mean(before));
    const double se = std::sqrt(Variance(before) / w + Variance(after) / w);
    const double t =
        se > 0 ? diff / se : (diff > 0 ? std::numeric_limits<double>::infinity() : 0.0);
    if (t > t_threshold) {
      if (t > best_t) {
        best_t = t;
        best = i;
      }
    } else if (best_t >= 0) {
      out.push_back(best);
      best_t = -1;
    }
  }
  if (best_t >= 0) out.push_back(best);
  return out;
}

}  // namespace perfwarden::stats
