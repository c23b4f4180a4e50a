// SPDX-License-Identifier: Apache-2.0
// Theil-Sen, Mann-Kendall, Sen's interval and the creep scan (see creep.h).
#include "stats/creep.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>

#include "stats/descriptive.h"
#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

// t(t-1)(2t+5): a tie group's share of Var S (times 18).
double TieTerm(double t) { return t * (t - 1) * (2 * t + 5); }

double KendallVariance(double n, double tie_terms) {
  return (n * (n - 1) * (2 * n + 5) - tie_terms) / 18;
}

double TwoSidedP(double s, double variance) {
  if (!(variance > 0)) return 1;
  return NormalTwoSidedP((s - Sign(s)) / std::sqrt(variance));
}

// The pairwise slopes (y[j] - y[i]) / (x[j] - x[i]), i < j; x strictly increasing.
std::vector<double> PairSlopes(std::span<const double> x, std::span<const double> y) {
  std::vector<double> slopes;
  slopes.reserve(y.size() * (y.size() - 1) / 2);
  for (std::size_t i = 0; i < y.size(); ++i) {
    for (std::size_t j = i + 1; j < y.size(); ++j) {
      slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    }
  }
  return slopes;
}

TrendLine FitLine(std::span<const double> x, std::span<const double> y) {
  if (y.size() < 2) return {kNaN, kNaN};
  const double slope = Median(PairSlopes(x, y));
  std::vector<double> offsets(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) offsets[i] = y[i] - slope * x[i];
  return {slope, Median(offsets)};
}

std::vector<double> Positions(std::size_t n) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i);
  return x;
}

MannKendallResult MannKendallOf(std::span<const double> y) {
  MannKendallResult out;
  const std::size_t n = y.size();
  if (n < 3) return out;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) out.s += Sign(y[j] - y[i]);
  }
  std::vector<double> sorted(y.begin(), y.end());
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && sorted[j] == sorted[i]) ++j;
    ties += TieTerm(static_cast<double>(j - i));
    i = j;
  }
  out.variance = KendallVariance(static_cast<double>(n), ties);
  if (out.variance > 0) {
    out.z = (out.s - Sign(out.s)) / std::sqrt(out.variance);
    out.p_value = NormalTwoSidedP(out.z);
  }
  return out;
}

SlopeInterval SenInterval(std::span<const double> x, std::span<const double> y, double confidence) {
  if (y.size() < 3) return {kNaN, kNaN};
  std::vector<double> slopes = PairSlopes(x, y);
  std::sort(slopes.begin(), slopes.end());
  const double n = static_cast<double>(slopes.size());
  const double c = NormalQuantile((1 + confidence) / 2) * std::sqrt(MannKendallOf(y).variance);
  auto at = [&](double rank) {  // 1-based, rounded, clamped
    const double r = std::clamp(std::round(rank), 1.0, n);
    return slopes[static_cast<std::size_t>(r) - 1];
  };
  return {at((n - c) / 2), at((n + c) / 2 + 1)};
}

// The median of `v` (as stats::Median: the mean of the two middle values of an even count),
// reordering `v`.
double MedianInPlace(std::vector<double>& v) {
  const std::size_t half = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half), v.end());
  const double upper = v[half];
  if (v.size() % 2 == 1) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half)) + upper) / 2;
}

// Buffers a scan reuses from window to window (the judging of a window allocates nothing).
struct Scratch {
  std::vector<double> values, sorted, prefix_l1, suffix_l1;
};

// TheilSen(y), its buffers from `scratch`.
TrendLine TheilSenWith(std::span<const double> y, Scratch& scratch) {
  std::vector<double>& v = scratch.values;
  v.clear();
  for (std::size_t i = 0; i < y.size(); ++i) {
    for (std::size_t j = i + 1; j < y.size(); ++j) {
      v.push_back((y[j] - y[i]) / static_cast<double>(j - i));
    }
  }
  const double slope = MedianInPlace(v);
  v.clear();
  for (std::size_t i = 0; i < y.size(); ++i) v.push_back(y[i] - slope * static_cast<double>(i));
  return {slope, MedianInPlace(v)};
}

// The sums of |y[i] - median| over the first k points, k = 0..n (`from_end`: over the last k),
// each median kept by inserting into a sorted copy: O(n^2) for all k, no allocation.
void SideL1(std::span<const double> y, bool from_end, Scratch& scratch, std::vector<double>& out) {
  const std::size_t n = y.size();
  std::vector<double>& sorted = scratch.sorted;
  sorted.clear();
  out.assign(n + 1, 0);
  for (std::size_t k = 1; k <= n; ++k) {
    const double x = from_end ? y[n - k] : y[k - 1];
    sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), x), x);
    const double m =
        k % 2 == 1 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;  // as Median
    const std::span<const double> side = from_end ? y.last(k) : y.first(k);
    double sum = 0;
    for (double v : side) sum += std::fabs(v - m);
    out[k] = sum;
  }
}

// Sum of |y - line| against the smallest sum of |y - median of its side| over the single steps
// with at least `min_side` points each side: true when some step comes within `margin` of the
// line (its sum <= the line's * (1 + margin)).
bool StepFitsBetter(std::span<const double> y, const TrendLine& line, std::size_t min_side,
                    double margin, Scratch& scratch) {
  double line_l1 = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    line_l1 += std::fabs(y[i] - (line.intercept + line.slope * static_cast<double>(i)));
  }
  SideL1(y, false, scratch, scratch.prefix_l1);
  SideL1(y, true, scratch, scratch.suffix_l1);
  const std::size_t n = y.size();
  for (std::size_t k = min_side; k + min_side <= n; ++k) {
    if (scratch.prefix_l1[k] + scratch.suffix_l1[n - k] <= line_l1 * (1 + margin)) return true;
  }
  return false;
}

// A window's verdict: +1 or -1 when it creeps up or down, 0 when not; and its line's slope
// relative to the line's level at the window's start.
struct Verdict {
  int sign = 0;
  double relative_slope = 0;
};

Verdict Judge(std::span<const double> y, double p_value, const CreepOptions& options,
              Scratch& scratch) {
  if (p_value > options.max_pvalue) return {};
  const TrendLine line = TheilSenWith(y, scratch);
  const double start = line.intercept;
  const double end = line.intercept + line.slope * static_cast<double>(y.size() - 1);
  if (!(start > 0) || std::fabs(end / start - 1) < options.threshold) return {};
  if (StepFitsBetter(y, line, options.min_segment, options.line_margin, scratch)) return {};
  return {line.slope > 0 ? 1 : -1, line.slope / start};
}

// The figures of a creep: its range and levels from the data, its slope from its steepest window
// (a window inside the drift, where the union of windows also holds flat points).
Creep Measure(std::span<const double> levels, const CreepRun& run, std::size_t w,
              const CreepOptions& options) {
  const std::size_t len = run.end - run.start + 1;
  const std::span<const double> window = levels.subspan(run.steepest, w);
  const TrendLine line = TheilSen(window);
  const SlopeInterval interval = SenSlopeInterval(window, options.confidence);
  // The levels at the ends are medians of the data, not a line's: the range reaches past the
  // drift into flat parts, where a line through the drift would go on changing.
  const std::size_t k = std::min(len, std::max(options.min_segment, len / 10));
  Creep c;
  c.start = run.start;
  c.end = run.end;
  c.level_start = Median(levels.subspan(run.start, k));
  c.level_end = Median(levels.subspan(run.end + 1 - k, k));
  c.slope = line.slope / c.level_start;
  c.slope_low = interval.low / c.level_start;
  c.slope_high = interval.high / c.level_start;
  c.total_change = c.level_end / c.level_start - 1;
  c.p_value = MannKendallOf(window).p_value;
  return c;
}

// The runs of creeping windows in levels[a, b), windows of w points.
void ScanSegment(std::span<const double> levels, std::size_t a, std::size_t b, std::size_t w,
                 const CreepOptions& options, std::vector<CreepRun>& runs) {
  Scratch scratch;
  double s = 0;
  double ties = 0;
  std::unordered_map<double, double> counts;
  auto insert = [&](double v) {
    double& t = counts[v];
    ties += TieTerm(t + 1) - TieTerm(t);
    t += 1;
  };
  auto erase = [&](double v) {
    double& t = counts[v];
    ties += TieTerm(t - 1) - TieTerm(t);
    t -= 1;
  };
  for (std::size_t i = a; i < a + w; ++i) {
    insert(levels[i]);
    for (std::size_t j = i + 1; j < a + w; ++j) s += Sign(levels[j] - levels[i]);
  }
  const double variance = KendallVariance(static_cast<double>(w), 0);
  std::optional<CreepRun> open;
  for (std::size_t t = a + w;; ++t) {  // the window is levels[t - w, t)
    const double p = TwoSidedP(s, variance - ties / 18);
    const Verdict v = Judge(levels.subspan(t - w, w), p, options, scratch);
    if (v.sign != 0 && open && open->sign == v.sign) {
      open->end = t - 1;
    } else {
      if (open) runs.push_back(*open);
      open.reset();
      if (v.sign != 0) open = CreepRun{t - w, t - 1, v.sign, t - w, 0};
    }
    if (v.sign != 0 && std::fabs(v.relative_slope) > std::fabs(open->steepest_slope)) {
      open->steepest = t - w;
      open->steepest_slope = v.relative_slope;
    }
    if (t == b) break;
    const double out = levels[t - w], in = levels[t];
    for (std::size_t j = t - w + 1; j < t; ++j) {
      s -= Sign(levels[j] - out);
      s += Sign(in - levels[j]);
    }
    erase(out);
    insert(in);
  }
  if (open) runs.push_back(*open);
}

// Whether two option sets judge a window alike (the confidence only shapes the reported interval).
bool SameJudging(const CreepOptions& a, const CreepOptions& b) {
  return a.threshold == b.threshold && a.window == b.window && a.min_points == b.min_points &&
         a.max_pvalue == b.max_pvalue && a.min_segment == b.min_segment &&
         a.line_margin == b.line_margin;
}

Result<void> Check(std::span<const double> levels, std::span<const std::size_t> steps,
                   const CreepOptions& o) {
  if (!std::isfinite(o.threshold) || o.threshold <= 0) {
    return InvalidArgument("threshold must be a finite number > 0", "threshold");
  }
  if (o.min_points < 10) return InvalidArgument("min_points must be >= 10", "min_points");
  if (o.window < o.min_points) return InvalidArgument("window must be >= min_points", "window");
  if (!(o.max_pvalue > 0 && o.max_pvalue < 1)) {
    return InvalidArgument("max_pvalue must be in (0, 1)", "max_pvalue");
  }
  if (o.min_segment < 1) return InvalidArgument("min_segment must be >= 1", "min_segment");
  if (!std::isfinite(o.line_margin) || o.line_margin < 0) {
    return InvalidArgument("line_margin must be a finite number >= 0", "line_margin");
  }
  if (!(o.confidence > 0 && o.confidence < 1)) {
    return InvalidArgument("confidence must be in (0, 1)", "confidence");
  }
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (!std::isfinite(levels[i])) {
      const std::string field = "levels[" + std::to_string(i) + "]";
      return InvalidArgument(field + " is not finite", field);
    }
  }
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (steps[k] == 0 || steps[k] >= levels.size() || (k > 0 && steps[k] <= steps[k - 1])) {
      const std::string field = "steps[" + std::to_string(k) + "]";
      return InvalidArgument(
          field + " must be increasing and inside (0, " + std::to_string(levels.size()) + ")",
          field);
    }
  }
  return {};
}

}  // namespace

TrendLine TheilSen(std::span<const double> y) {
  const std::vector<double> x = Positions(y.size());
  return FitLine(x, y);
}

MannKendallResult MannKendall(std::span<const double> y) { return MannKendallOf(y); }

SlopeInterval SenSlopeInterval(std::span<const double> y, double confidence) {
  const std::vector<double> x = Positions(y.size());
  return SenInterval(x, y, confidence);
}

Result<CreepScan> ScanCreeps(std::span<const double> levels, const CreepOptions& options,
                             const CreepScan* previous) {
  if (auto ok = Check(levels, {}, options); !ok) return tl::unexpected(ok.error());
  const std::size_t n = levels.size();
  CreepScan scan;
  scan.length = n;
  scan.options = options;
  if (n < options.min_points) return scan;
  const std::size_t w = std::min(options.window, n);
  // The windows judged before are judged alike (same points, same options) while the window
  // kept its size: only the windows that end past the previous length are new.
  std::size_t first = 0;             // the first window to judge starts here
  std::optional<std::size_t> joins;  // the last judged window's end, when windows were judged
  if (previous != nullptr && previous->length >= options.window && previous->length <= n &&
      SameJudging(previous->options, options)) {
    scan.runs = previous->runs;
    if (previous->length == n) return scan;
    first = previous->length + 1 - w;
    joins = previous->length - 1;
  }
  std::vector<CreepRun> fresh;
  ScanSegment(levels, first, n, w, options, fresh);
  for (CreepRun& r : fresh) {
    // The window after the previous scan's last continues its run when it creeps the same way.
    CreepRun* last = scan.runs.empty() ? nullptr : &scan.runs.back();
    if (last != nullptr && joins && last->end == *joins && r.start == first &&
        last->sign == r.sign) {
      last->end = r.end;
      if (std::fabs(r.steepest_slope) > std::fabs(last->steepest_slope)) {
        last->steepest = r.steepest;
        last->steepest_slope = r.steepest_slope;
      }
    } else {
      scan.runs.push_back(r);
    }
  }
  return scan;
}

Result<std::vector<Creep>> CreepsOfRuns(std::span<const double> levels,
                                        std::span<const CreepRun> runs,
                                        std::span<const std::size_t> steps,
                                        const CreepOptions& options) {
  if (auto ok = Check(levels, steps, options); !ok) return tl::unexpected(ok.error());
  std::vector<Creep> out;
  const std::size_t n = levels.size();
  // Runs parted by a window that did not creep still overlap: one drift, one creep.
  std::vector<CreepRun> merged;
  for (const CreepRun& r : runs) {
    if (r.end >= n || r.start > r.end) {
      return InvalidArgument("a run must lie inside the series", "runs");
    }
    if (!merged.empty() && merged.back().sign == r.sign && r.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
      if (std::fabs(r.steepest_slope) > std::fabs(merged.back().steepest_slope)) {
        merged.back().steepest = r.steepest;
        merged.back().steepest_slope = r.steepest_slope;
      }
    } else {
      merged.push_back(r);
    }
  }
  for (const CreepRun& r : merged) {
    Creep creep = Measure(levels, r, std::min(options.window, n), options);
    for (std::size_t step : steps) {
      if (step > r.start && step <= r.end) creep.steps.push_back(step);
    }
    out.push_back(std::move(creep));
  }
  return out;
}

Result<std::vector<Creep>> DetectCreeps(std::span<const double> levels,
                                        std::span<const std::size_t> steps,
                                        const CreepOptions& options) {
  // ScanCreeps checks the options and levels, CreepsOfRuns the steps.
  auto scan = ScanCreeps(levels, options, nullptr);
  if (!scan) return tl::unexpected(scan.error());
  return CreepsOfRuns(levels, scan->runs, steps, options);
}

}  // namespace perfwarden::stats
