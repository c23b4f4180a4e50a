// SPDX-License-Identifier: Apache-2.0
// Creep: a series whose level drifts beyond its threshold over a window in which no single step is
// beyond it (a slow leak, a growing cache, a data set that grows with each commit). The trend is
// measured robustly: Theil-Sen's slope (the median of the pairwise slopes), its significance by
// the Mann-Kendall test (Kendall's S with the tie-corrected variance), Sen's confidence interval of
// the slope from the same distribution. docs/statistics.md, "Creep", gives the corpus figures.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/result.h"

namespace perfwarden::stats {

// Theil-Sen line through (i, y[i]), i = 0..n-1: slope = median of (y[j] - y[i]) / (j - i) over
// i < j, intercept = median of y[i] - slope * i. NaN for both when n < 2. O(n^2).
struct TrendLine {
  double slope = 0;
  double intercept = 0;
};
TrendLine TheilSen(std::span<const double> y);

// The Mann-Kendall trend test on y in order: S = sum over i < j of sign(y[j] - y[i]); its variance
// under no trend, corrected for ties, (n(n-1)(2n+5) - sum over groups of t(t-1)(2t+5)) / 18;
// z = (S - sign(S)) / sqrt(variance) (continuity correction); p two-sided by the normal
// distribution (as pymannkendall's original_test). n < 3 or variance 0: z 0, p 1. O(n^2).
struct MannKendallResult {
  double s = 0;
  double variance = 0;
  double z = 0;
  double p_value = 1;
};
MannKendallResult MannKendall(std::span<const double> y);

// Sen's (1968) confidence interval of the Theil-Sen slope at `confidence` in (0, 1): with N
// pairwise slopes sorted and C = z_{(1+confidence)/2} sqrt(Var S), the slopes at ranks (N - C) / 2
// and (N + C) / 2 + 1 (1-based, rounded, clamped to [1, N]). NaN for both when n < 3.
struct SlopeInterval {
  double low = 0;
  double high = 0;
};
SlopeInterval SenSlopeInterval(std::span<const double> y, double confidence);

// Defaults chosen on the corpus (docs/statistics.md, "Creep").
struct CreepOptions {
  double threshold = 0.05;      // > 0; smallest total relative change over a window
  std::size_t window = 60;      // >= min_points; points per window (a shorter series is one)
  std::size_t min_points = 20;  // >= 10; a shorter series is not searched
  double max_pvalue = 0.0001;   // in (0, 1); the Mann-Kendall p-value of a window's trend
  std::size_t min_segment = 3;  // >= 1; the smallest side of the step that competes with a trend
  double line_margin = 0.05;    // >= 0; the line's residuals must be below the best step's by this
  double confidence = 0.95;     // in (0, 1); of the reported slope interval

  friend bool operator==(const CreepOptions&, const CreepOptions&) = default;
};

// One drift. Positions are indices into the series; the range is [start, end], inclusive: the
// union of the windows that crept, so it may reach up to a window beyond the drift's own ends.
struct Creep {
  std::size_t start = 0;
  std::size_t end = 0;
  double slope = 0;      // Theil-Sen slope over the range, relative to level_start, per point
  double slope_low = 0;  // Sen's interval of `slope` at options.confidence
  double slope_high = 0;
  double level_start = 0;   // median of the range's first tenth (at least min_segment points)
  double level_end = 0;     // median of its last tenth
  double total_change = 0;  // level_end / level_start - 1
  double p_value = 1;       // Mann-Kendall's in the steepest window
  std::vector<std::size_t> steps;  // the confirmed steps inside (start, end]: a string of steps
                                   // the detector cut the drift into, which this creep replaces

  friend bool operator==(const Creep&, const Creep&) = default;
};

// The creeps of `levels` (per-point levels; `steps`: the detector's confirmed steps, first points
// of new levels, increasing, in (0, n)). Every window of min(window, n) consecutive points is
// tested (a series of fewer than min_points is not): a window creeps when its Mann-Kendall p <=
// max_pvalue, its Theil-Sen line changes by at least `threshold` relative to the line's level at
// the window's start (a level <= 0 never creeps), and no single step fits the window nearly as
// well: the line's sum of absolute residuals is below every split's (sides of at least
// min_segment points around their medians) by more than line_margin. A window holding a real
// step is the step's, not a creep; a drift that the step detector cut into a string of steps is
// one creep, which lists those steps (Creep::steps) so that a caller reports the creep instead.
// Windows that overlap and creep the same way merge into one Creep over their union; its slope,
// interval and p-value are those of its steepest window (one inside the drift, where the union
// also holds flat points), its levels the medians of the union's ends. Kendall's S
// moves with the window in O(window) per point; the O(window^2 log window) fit and step check run
// only for significant windows. Errors (kInvalidArgument naming the field): an option out of
// range, steps not increasing inside (0, n), a non-finite level ("levels[i]").
Result<std::vector<Creep>> DetectCreeps(std::span<const double> levels,
                                        std::span<const std::size_t> steps,
                                        const CreepOptions& options);

// A run of consecutive windows that creep the same way: [start, end] is the union of their
// points, `steepest` the start of the one of steepest slope (relative to its line's start).
struct CreepRun {
  std::size_t start = 0;
  std::size_t end = 0;
  int sign = 0;
  std::size_t steepest = 0;
  double steepest_slope = 0;

  friend bool operator==(const CreepRun&, const CreepRun&) = default;
};

// The windows of a series judged so far, as runs: what the server keeps with a series'
// detector state, so that an analysis judges only the windows its new points end.
struct CreepScan {
  std::size_t length = 0;  // points scanned
  CreepOptions options;    // the options the windows were judged with
  std::vector<CreepRun> runs;

  friend bool operator==(const CreepScan&, const CreepScan&) = default;
};

// DetectCreeps' scan of `levels` (its runs in order, before overlapping ones are merged). Given
// `previous`, made on a prefix of `levels` (the caller guarantees it: the server's points are
// append-only between re-baselines) with the same options but the confidence and at least
// options.window points, only the windows that end past its length are judged: the runs are
// those of a whole scan (tested). Another `previous` is ignored. Errors as DetectCreeps.
Result<CreepScan> ScanCreeps(std::span<const double> levels, const CreepOptions& options,
                             const CreepScan* previous = nullptr);

// The creeps of `runs` (ScanCreeps' of `levels`, or a later part of them): runs that overlap and
// creep the same way merge, each merged run is measured as DetectCreeps does. Errors as
// DetectCreeps, and for a run outside the series ("runs").
Result<std::vector<Creep>> CreepsOfRuns(std::span<const double> levels,
                                        std::span<const CreepRun> runs,
                                        std::span<const std::size_t> steps,
                                        const CreepOptions& options);

}  // namespace perfwarden::stats
