// SPDX-License-Identifier: Apache-2.0
// A second, cheap source of change-point candidates for the history detector
// (stats/history_detector.h): binary segmentation (Scott & Knott 1974; R changepoint's BinSeg
// without its cap on the number of changes) of a penalised Gaussian change-in-mean cost, with
// the noise scale estimated robustly from first differences (not inflated by the steps
// themselves), optionally on a series whose isolated outliers were clipped first.
// Non-incremental: O(n) per level of splitting, O(n log n) for well-spread changes. (PELT, the
// exact optimum of the same cost, gave the same corpus figures but is O(n^2) on a series
// without changes, since this cost's pruning cannot discard anything there.)
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace perfwarden::stats {

struct MeanShiftOptions {
  double penalty = 3.0;         // > 0; cost of a change, times log(n) (3: R changepoint's MBIC
                                // for a change in mean, to its leading term)
  std::size_t min_segment = 2;  // >= 1; points in each segment
  double clip_sigmas = 3.0;     // >= 0; 0: no clipping. Else each point is first clipped to the
                                // median of the 11 points centred on it +- clip_sigmas * sigma
};

// Robust noise scale of a series with steps: 1.4826 * MAD of the first differences / sqrt(2)
// (a step moves one difference, not the MAD); the differences' standard deviation / sqrt(2) when
// that MAD is 0; 0 for fewer than 3 points or a constant series.
double DifferenceSigma(std::span<const double> x);

// `x` with each point clipped to [m - k * sigma, m + k * sigma], m the median of the up to 11
// points centred on it (a step stays where it is; runs of up to 5 outliers are clipped).
std::vector<double> ClipOutliers(std::span<const double> x, double k, double sigma);

// The indices (first point of each new segment, ascending, never 0) of a segmentation of `x`
// under the cost sum over segments of sum (x_i - mean)^2 / sigma^2, sigma = DifferenceSigma(x)
// (of the series as given, also when clipping), by binary segmentation: a segment is split
// where the cost falls most, if it falls by more than penalty * log(n), and both parts are
// searched again; every part holds at least min_segment points. Finite input assumed (the
// caller checks). Empty when n < 2 * min_segment or sigma is 0.
std::vector<std::size_t> MeanShiftChangePoints(std::span<const double> x,
                                               const MeanShiftOptions& options);

}  // namespace perfwarden::stats
