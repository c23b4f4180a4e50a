// SPDX-License-Identifier: Apache-2.0
#include "stats/history_detector.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/descriptive.h"
#include "stats/distributions.h"
#include "stats/mann_whitney.h"

namespace perfwarden::stats {
namespace {

constexpr std::size_t kExactRankPoints = 40;
constexpr std::size_t kSeparatedPoints = 5;

struct Candidate {
  std::size_t index = 0;
  double p_value = 1;       // e-divisive's
  bool e_divisive = false;  // proposed by e-divisive / by the mean-shift segmentation
  bool mean_shift = false;
  double rank_p = 1;  // the confirming U test's p-value (after the serial correction)
  double before = 0, after = 0, magnitude = 0;
  std::size_t first = 0, last = 0;  // the levels were measured on [first, index), [index, last)
  bool ok = false;
};

// Lag-1 autocorrelation of the points of [first, index) and [index, last) around their
// segment's median (pairs within one segment only), clamped to [0, 0.999]. A trend, a season or
// a regime the candidates do not separate leaves long runs of residuals of one sign: r near 1.
double SerialCorrelation(std::span<const double> levels, std::size_t first, std::size_t index,
                         std::size_t last, double before, double after) {
  double cross = 0, square = 0;
  for (std::size_t i = first; i < last; ++i) {
    const double r = levels[i] - (i < index ? before : after);
    square += r * r;
    if (i + 1 < last && i + 1 != index) {
      cross += r * (levels[i + 1] - (i + 1 < index ? before : after));
    }
  }
  if (!(square > 0) || !(cross > 0)) return 0;
  return std::min(cross / square, 0.999);
}

// Whether the two segments [first, index) and [index, last), each of at least kSeparatedPoints
// points, are further apart (the gap between their nearer extremes) than the narrower of them is
// wide. Such a step needs no noise model: the serial correction, which a saturated U test
// (complete separation at best) cannot survive when the segments hold other, smaller moves, does
// not apply to it. (The range of fewer points says too little about a segment's spread: a run of
// 4 points in autocorrelated noise is often narrower than its distance to the rest.)
bool Separated(std::span<const double> levels, std::size_t first, std::size_t index,
               std::size_t last) {
  const auto [b_lo, b_hi] = std::minmax_element(levels.begin() + first, levels.begin() + index);
  const auto [a_lo, a_hi] = std::minmax_element(levels.begin() + index, levels.begin() + last);
  const double gap = std::max(*a_lo - *b_hi, *b_lo - *a_hi);
  if (std::min(index - first, last - index) < kSeparatedPoints) return false;
  const double range = std::min(*b_hi - *b_lo, *a_hi - *a_lo);
  return gap > 0 && gap >= range;
}

double RelativeChange(double before, double after) {
  return before != 0 ? (after - before) / std::fabs(before) : 0.0;
}

// Measures candidate c against its current neighbours (lo and hi are the neighbouring
// candidates' indices, or the series' ends).
void Measure(std::span<const double> levels, std::size_t lo, std::size_t hi,
             const HistoryOptions& options, Candidate& c) {
  const std::size_t cap = options.level_points;
  const std::size_t first = std::max(lo, c.index > cap ? c.index - cap : 0);
  const std::size_t last = std::min(hi, c.index + cap);
  c.first = first;
  c.last = last;
  c.before = Median(levels.subspan(first, c.index - first));
  c.after = Median(levels.subspan(c.index, last - c.index));
  c.magnitude = RelativeChange(c.before, c.after);
  // The threshold is not part of the segmentation: it filters the confirmed steps afterwards,
  // so a step's printed magnitude does not depend on it.
  c.ok = c.index - lo >= options.min_segment && hi - c.index >= options.min_segment;
  if (c.ok && options.rank_test) {
    // Distribution-free, as the PR verdict: a bimodal or heavy-tailed stretch that moved a median
    // by chance is not significant on ranks. Only run when everything else passed (the cost).
    // Exact up to 40 points in all (cheap there, and the normal approximation cannot go below
    // ~1e-4 for 12 points against 9, all above); SciPy's automatic choice beyond.
    const MannWhitneyResult u = MannWhitneyU(
        levels.subspan(first, c.index - first), levels.subspan(c.index, last - c.index),
        last - first <= kExactRankPoints ? MwuMethod::kExact : MwuMethod::kAuto);
    double p = u.p_two_sided;
    // The correction only raises p: a candidate that fails without it needs neither pass.
    if (options.serial_correction && p > 0 && p <= options.rank_pvalue &&
        !Separated(levels, first, c.index, last)) {
      const double r = SerialCorrelation(levels, first, c.index, last, c.before, c.after);
      p = NormalTwoSidedP(NormalQuantile(p / 2) * std::sqrt((1 - r) / (1 + r)));
    }
    c.rank_p = p;
    c.ok = p <= options.rank_pvalue;
  }
}

}  // namespace

ChangePointOptions EDivisiveOptions(const HistoryOptions& options) {
  return ChangePointOptions{options.window, options.max_pvalue, 0.0};
}

MeanShiftOptions MeanShiftOptionsOf(const HistoryOptions& options) {
  return MeanShiftOptions{options.mean_shift_penalty, options.min_segment, options.clip_sigmas};
}

std::vector<Step> ConfirmSteps(std::span<const double> levels, const ChangePointAnalysis& analysis,
                               const HistoryOptions& options) {
  std::vector<Candidate> kept;
  for (const ChangePoint& cp : analysis.change_points) {
    if (cp.index == 0 || cp.index >= levels.size()) continue;
    kept.push_back(Candidate{cp.index, cp.p_value, true});
  }
  if (options.mean_shift) {
    for (std::size_t index : MeanShiftChangePoints(levels, MeanShiftOptionsOf(options))) {
      const auto at =
          std::lower_bound(kept.begin(), kept.end(), index,
                           [](const Candidate& c, std::size_t i) { return c.index < i; });
      if (at != kept.end() && at->index == index) {
        at->mean_shift = true;
      } else {
        Candidate c{index};
        c.mean_shift = true;
        kept.insert(at, c);
      }
    }
  }
  auto lo_of = [&](std::size_t k) { return k == 0 ? std::size_t{0} : kept[k - 1].index; };
  auto hi_of = [&](std::size_t k) {
    return k + 1 == kept.size() ? levels.size() : kept[k + 1].index;
  };
  for (std::size_t k = 0; k < kept.size(); ++k)
    Measure(levels, lo_of(k), hi_of(k), options, kept[k]);
  while (true) {
    std::size_t worst = kept.size();
    double worst_size = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < kept.size(); ++k) {
      if (!kept[k].ok && std::fabs(kept[k].magnitude) < worst_size) {
        worst = k;
        worst_size = std::fabs(kept[k].magnitude);
      }
    }
    if (worst == kept.size()) break;
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(worst));
    // The neighbours now reach across the dropped candidate.
    if (worst > 0) Measure(levels, lo_of(worst - 1), hi_of(worst - 1), options, kept[worst - 1]);
    if (worst < kept.size()) Measure(levels, lo_of(worst), hi_of(worst), options, kept[worst]);
  }
  std::vector<Step> steps;
  steps.reserve(kept.size());
  for (const Candidate& c : kept) {
    if (std::fabs(c.magnitude) < options.threshold) continue;
    std::vector<std::string> detectors;
    if (c.e_divisive) detectors.push_back("e-divisive");
    if (c.mean_shift) detectors.push_back("binseg");
    if (options.rank_test) detectors.push_back("mann-whitney");
    // A candidate e-divisive did not propose has no t-test p-value: the U test's stands in.
    const double p = c.e_divisive ? c.p_value : (options.rank_test ? c.rank_p : 1.0);
    steps.push_back(Step{c.index, c.magnitude, p, c.before, c.after, detectors, c.first, c.last});
  }
  return steps;
}

Result<std::vector<Step>> DetectSteps(std::span<const double> levels,
                                      const HistoryOptions& options) {
  if (!(options.threshold >= 0) || !std::isfinite(options.threshold)) {
    return InvalidArgument("must be a number >= 0", "threshold");
  }
  if (options.window < 2) return InvalidArgument("must be at least 2", "window");
  if (!(options.max_pvalue >= 0 && options.max_pvalue <= 1)) {
    return InvalidArgument("must be in [0, 1]", "max_pvalue");
  }
  if (!(options.rank_pvalue >= 0 && options.rank_pvalue <= 1)) {
    return InvalidArgument("must be in [0, 1]", "rank_pvalue");
  }
  if (options.level_points < 1) return InvalidArgument("must be at least 1", "level_points");
  if (options.min_segment < 1) return InvalidArgument("must be at least 1", "min_segment");
  if (!(options.mean_shift_penalty > 0) || !std::isfinite(options.mean_shift_penalty)) {
    return InvalidArgument("must be a number > 0", "mean_shift_penalty");
  }
  if (!(options.clip_sigmas >= 0) || !std::isfinite(options.clip_sigmas)) {
    return InvalidArgument("must be a number >= 0", "clip_sigmas");
  }
  auto analysis = DetectChangePoints(levels, EDivisiveOptions(options));
  if (!analysis) return tl::unexpected(analysis.error());
  return ConfirmSteps(levels, *analysis, options);
}

}  // namespace perfwarden::stats
