// SPDX-License-Identifier: Apache-2.0
// Change-point detection on a benchmark history: e-divisive means (Matteson & James) in
// sliding windows, a Student t-test as the significance test, then Hunter's merge step
// (Fleming et al. 2023), reproducing Apache Otava's compute_change_points decision for decision.
// Full-series and deterministic: the same input always gives the same change points.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/result.h"

namespace perfwarden::stats {

struct ChangePointOptions {
  std::size_t window_len = 50;  // >= 2; windows advance by window_len / 2
  double max_pvalue = 0.001;    // in [0, 1]; the split step uses FirstPassPValue(max_pvalue)
  double min_magnitude = 0.0;   // >= 0; a significant change smaller than this is merged away
};

// A change point splits the series at `index`: the first element of the new regime (0-based,
// never 0). "Before" and "after" are the adjacent segments between neighbouring change points.
struct ChangePoint {
  std::size_t index = 0;
  double p_value = 1.0;  // two-sided pooled t-test (see DetectChangePoints); 1 when n1 + n2 <= 2
  double mean_before = 0;
  double mean_after = 0;
  double std_before = 0;  // population standard deviation (ddof 0); 0 for a single point
  double std_after = 0;
  double forward_change = 0;  // mean_after / mean_before - 1; 0 when mean_before == 0
  double magnitude = 0;       // max(|after/before - 1|, |before/after - 1|), a zero mean counts 0
};

struct ChangePointAnalysis {
  std::vector<ChangePoint> change_points;  // final, sorted by index
  // The split step's candidates at the relaxed first-pass threshold, with statistics for the
  // segments between them (before the merge step removed any).
  std::vector<ChangePoint> weak_change_points;
};

// The relaxed threshold of the split step: 10x below 0.05, 2x below 0.5, else unchanged.
double FirstPassPValue(double max_pvalue);

// Otava's compute_change_points (the Hunter algorithm). Split: windows [s, s + window_len)
// starting at 0 and advancing to max(last change point found in the window, s + window_len / 2);
// in each window e-divisive repeatedly takes the Q-hat maximising split of one segment and keeps
// it while its t-test p-value is <= FirstPassPValue(max_pvalue). Merge: repeatedly drops the
// change point with the largest p-value while it is >= max_pvalue, then the one with the smallest
// magnitude while that is <= min_magnitude, recomputing neighbours' statistics as Otava does.
// The t-test is Student's pooled test fed population (ddof 0) standard deviations, as Otava.
// Empty or single-point series: no change points. Errors (kInvalidArgument): window_len < 2,
// max_pvalue outside [0, 1] or NaN, min_magnitude negative or NaN, a non-finite value.
// Cost: O(window_len^2) per window candidate, O(n * window_len^2) overall.
Result<ChangePointAnalysis> DetectChangePoints(std::span<const double> series,
                                               const ChangePointOptions& options);

// What the split step needs to continue on a longer series with the same prefix: the windows
// that ended before the series did are replayed from `split_indices`, and splitting resumes at
// `resume_start`, the first window that reached the end of the series. The merge step always
// runs on the whole series (it is O(n), the split step is O(n * window_len^2)).
struct ChangePointState {
  std::size_t length = 0;        // points covered
  std::size_t window_len = 0;    // the options it was made with; others force a full analysis
  double first_pass_pvalue = 0;  // FirstPassPValue(max_pvalue)
  std::size_t resume_start = 0;
  std::vector<std::size_t> split_indices;  // weak change points of the finished windows
};

struct IncrementalAnalysis {
  ChangePointAnalysis analysis;
  ChangePointState state;  // for the next call, on this series extended
  bool resumed = false;    // false when `previous` could not be used and all was recomputed
};

// DetectChangePoints on `series` given the state left by a call on a prefix of it: the result
// is identical to DetectChangePoints(series, options) (tested), at the cost of the windows that
// reach past the previous end. The caller guarantees that series[0, previous->length) is the
// series the state was made on (the server keeps points append-only between re-baselines). A
// null `previous`, one made with other options, or one longer than `series` is ignored.
// Errors as DetectChangePoints.
Result<IncrementalAnalysis> DetectChangePointsIncremental(std::span<const double> series,
                                                          const ChangePointOptions& options,
                                                          const ChangePointState* previous);

// Plain divisive e-divisive with the t-test on the whole series (no windows, no merge), as
// Otava's ChangePointDetector(TTestSignificanceTester(max_pvalue)). Statistics are those seen
// when each point was accepted. O(n^2) time and memory. Empty or single point: none.
// Errors as DetectChangePoints for max_pvalue and non-finite values.
Result<std::vector<ChangePoint>> DivisiveChangePoints(std::span<const double> series,
                                                      double max_pvalue);

// Q-hat(x[0, tau), x[tau, kappa)) with alpha = 1 (absolute distances):
//   2/(m+n) sum|X_i - Y_j| - 2m/((m+n)(n-1)) sum_{i<k}|X_i - X_k| - 2n/((m+n)(m-1)) sum|Y_j - Y_k|
// with n = tau, m = kappa - tau (a within-sample term with a single point counts 0), computed in
// the same order of operations as Otava's matrix so that values agree to the last bits.
// NaN unless 0 < tau < kappa <= x.size().
double EDivisiveQHat(std::span<const double> x, std::size_t tau, std::size_t kappa);

}  // namespace perfwarden::stats
