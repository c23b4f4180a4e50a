// SPDX-License-Identifier: Apache-2.0
// The change detectors that perfwarden's peers document as their defaults, reimplemented on one
// footing (a series of per-commit values in, the 0-based indices where a new level starts out)
// so that detection quality can be compared on the same labelled corpus (docs/statistics.md,
// "History detection quality"):
//   - github-action-benchmark: the current value against the previous one, alerting when the
//     ratio in the worse direction exceeds a fixed threshold;
//   - Conbench: the lookback z-score of a point against the mean and standard deviation of the
//     points before it (default: 100 points, |z| > 5);
//   - Perfherder: Welch's t between the 12 points before and the 12 points from a candidate,
//     a change where t > 7 and t is the largest within its run of candidates.
// These are faithful to the documented rule, not to every detail of the peers' code; each
// function says what it simplifies. Otava's e-divisive is stats/change_points.h.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/result.h"

namespace perfwarden::stats {

// github-action-benchmark: index i is reported when x[i] / x[i-1] > ratio (a slowdown of a
// lower-is-better series; its `alert-threshold` default is 200%, ratio 2.0) or, with
// `both_directions`, also when x[i-1] / x[i] > ratio. Non-positive values are skipped.
// kInvalidArgument for ratio <= 1 or a non-finite value.
Result<std::vector<std::size_t>> PreviousPointDetector(std::span<const double> x, double ratio,
                                                       bool both_directions);

// Conbench's lookback z-score: index i (i >= min_history) is reported when
// |x[i] - mean| / sd > z_threshold, mean and sample sd over the up to `lookback` points before
// i (all of them when fewer; none reported before min_history points exist, or when sd is 0).
// Conbench compares against a history that restarts at accepted distribution changes; this
// one does not restart. kInvalidArgument for lookback < 2, z_threshold <= 0, min_history < 2
// or a non-finite value.
Result<std::vector<std::size_t>> LookbackZScoreDetector(std::span<const double> x,
                                                        std::size_t lookback, double z_threshold,
                                                        std::size_t min_history);

// Perfherder's moving-window t-test: for each i with `window` points before and from it,
// t(i) = |mean(x[i, i+w)) - mean(x[i-w, i))| / sqrt(var_before / w + var_after / w) (sample
// variances); candidates are the i with t(i) > t_threshold, and of each run of consecutive
// candidates the one with the largest t is reported (the first on ties). Perfherder weights
// the fore window linearly and widens the back window up to 24 points; this uses plain equal
// windows. Zero variance on both sides: t is infinite when the means differ, else 0.
// kInvalidArgument for window < 2, t_threshold <= 0 or a non-finite value.
Result<std::vector<std::size_t>> MovingWindowTTestDetector(std::span<const double> x,
                                                           std::size_t window, double t_threshold);

}  // namespace perfwarden::stats
