// SPDX-License-Identifier: Apache-2.0
// perfwarden's default detector for a branch's history: e-divisive means (stats/change_points.h,
// Otava's algorithm) proposes candidate change points, and so does a binary segmentation of a
// penalised change in mean on the series with its outliers clipped (stats/mean_shift.h: the
// steps outliers hide from e-divisive's t-test); a cheap confirmation stage keeps those whose
// new level is real: measured with medians of the adjacent segments (so a few outliers or a
// bimodal point do not move them), significant by a rank test on the same points (corrected for
// autocorrelation, so that a trend, a season or a slow machine regime is not a string of steps),
// and held for at least `min_segment` points (a single outlier is not a step). The segmentation
// does not depend on the threshold: it filters the confirmed steps on the magnitude they print.
// docs/statistics.md, "History detection quality", describes the corpora the defaults were tuned
// and checked on, and the results.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "stats/change_points.h"
#include "stats/mean_shift.h"

namespace perfwarden::stats {

// Defaults tuned on the labelled corpus (docs/statistics.md, "History detection quality"):
// chosen on its even-numbered series, checked on the odd-numbered ones.
struct HistoryOptions {
  double threshold = 0.05;        // >= 0; smallest relative change of level reported (5%)
  std::size_t window = 100;       // >= 2; the e-divisive window (Otava's default is 50)
  double max_pvalue = 0.0001;     // in [0, 1]; e-divisive's significance level (Otava's: 0.001)
  double rank_pvalue = 0.0005;    // in [0, 1]; the rank test's (see rank_test)
  std::size_t level_points = 40;  // >= 1; a level is the median of at most this many points
  std::size_t min_segment = 3;    // >= 1; points a level must hold on each side of a step
  bool rank_test = true;          // a step also needs a two-sided Mann-Whitney U p-value
                                  // <= rank_pvalue between the points of its two levels
  bool serial_correction = true;  // the U test's z is scaled by sqrt((1 - r) / (1 + r)), r the
                                  // lag-1 autocorrelation (>= 0) of the points around their
                                  // segment's median (an AR(1) series' effective sample size),
                                  // unless the segments are separated by more than the narrower
                                  // one's range
  bool mean_shift = true;         // candidates also from binary segmentation of a Gaussian
                                  // change-in-mean cost (stats/mean_shift.h), beside e-divisive's
  double mean_shift_penalty = 3;  // > 0; its penalty per change, times log(n), in units of the
                                  // robust noise variance
  double clip_sigmas = 3;         // >= 0; it runs on the series clipped to the 11-point
                                  // rolling median +- clip_sigmas robust sigmas (0: unclipped)
};

// The options of the second candidate source for these history options.
MeanShiftOptions MeanShiftOptionsOf(const HistoryOptions& options);

// Options of the e-divisive stage (stats::DetectChangePoints) for these history options: the
// window and p-value; min_magnitude 0, since the confirmation stage judges the size on medians.
ChangePointOptions EDivisiveOptions(const HistoryOptions& options);

struct Step {
  std::size_t index = 0;  // first point of the new level (0-based, >= 1)
  double magnitude = 0;   // signed relative change of level: level_after / level_before - 1
  double p_value = 1;     // the e-divisive candidate's t-test p-value; for a candidate only the
                          // binary segmentation proposed, the confirming U test's (corrected)
  double level_before = 0, level_after = 0;  // medians of the adjacent segments (capped)
  std::vector<std::string> detectors;        // its proposers, "e-divisive" and/or "binseg", then
                                             // "mann-whitney" (not without the rank test)
  // The points the two levels were measured on: [first, index) and [index, last).
  std::size_t first = 0, last = 0;

  friend bool operator==(const Step&, const Step&) = default;
};

// Second stage, O(k^2 + k * level_points * log(level_points)) for k candidates plus, with
// `mean_shift`, O(n) per level of the binary segmentation; no e-divisive: confirms the change
// points of `analysis` (DetectChangePoints(levels, EDivisiveOptions(options))), united with
// MeanShiftChangePoints(levels, MeanShiftOptionsOf(options)), into steps. For each candidate, the
// level before is the median of the up to `level_points` points before it back to the previous
// candidate, the level after likewise forwards to the next one; magnitude = (after - before) /
// |before| (0 when before is 0). A candidate fails when either segment to its neighbouring
// candidates (or the series' ends) holds fewer than `min_segment` points, or, with `rank_test`,
// when the U test between those two sets of points (exact up to 40 points in all) gives p >
// rank_pvalue, its z first scaled by sqrt((1 - r) / (1 + r)) for the lag-1 autocorrelation r >= 0
// of the points around their medians (with `serial_correction`, unless both segments hold 5+ points
// and the gap between them is at least the narrower one's range). While any fails, the failing
// candidate of smallest |magnitude| (the first on ties) is dropped and its neighbours are measured
// again, so the two edges of an outlier both go and a step proposed twice keeps its best edge. The
// threshold plays no part in this: the steps returned are the confirmed candidates with |magnitude|
// >= threshold, so a step is reported at every threshold up to its |magnitude|, always with the
// same figures, and at none above. The server runs e-divisive incrementally and then calls this.
std::vector<Step> ConfirmSteps(std::span<const double> levels, const ChangePointAnalysis& analysis,
                               const HistoryOptions& options);

// Both stages on per-point levels (per-commit medians of repetitions). Errors (kInvalidArgument
// naming the field): threshold negative or not finite, window < 2, max_pvalue or rank_pvalue
// outside [0, 1], level_points or min_segment 0, mean_shift_penalty not > 0, clip_sigmas negative
// or not finite, a non-finite level ("series[i]", as DetectChangePoints).
Result<std::vector<Step>> DetectSteps(std::span<const double> levels,
                                      const HistoryOptions& options);

}  // namespace perfwarden::stats
