// SPDX-License-Identifier: Apache-2.0
#include "stats/change_points.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// numpy's pairwise summation (np.sum / np.mean / np.std on a contiguous float64 array), so that
// segment means and stds carry the same rounding as Otava's: a constant segment must give an
// std of exactly 0 there and here, or a t statistic of inf becomes merely huge.
double NumpySum(const double* a, std::size_t n) {
  if (n < 8) {
    double res = -0.0;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (std::size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return NumpySum(a, n2) + NumpySum(a + n2, n - n2);
}

struct Moments {
  double mean = 0;
  double std = 0;  // ddof 0
};

Moments SideMoments(std::span<const double> x) {
  const double n = static_cast<double>(x.size());
  Moments m;
  m.mean = NumpySum(x.data(), x.size()) / n;
  if (x.size() >= 2) {
    std::vector<double> sq(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double d = x[i] - m.mean;
      sq[i] = d * d;
    }
    m.std = std::sqrt(NumpySum(sq.data(), sq.size()) / n);
  }
  return m;
}

// Otava's TTestSignificanceTester.compare: scipy's ttest_ind_from_stats (pooled variance)
// fed the ddof-0 standard deviations; p = 1 when there are no degrees of freedom.
ChangePoint Compare(std::span<const double> left, std::span<const double> right,
                    std::size_t index) {
  const Moments l = SideMoments(left);
  const Moments r = SideMoments(right);
  ChangePoint cp;
  cp.index = index;
  cp.mean_before = l.mean;
  cp.mean_after = r.mean;
  cp.std_before = l.std;
  cp.std_after = r.std;
  const double n1 = static_cast<double>(left.size());
  const double n2 = static_cast<double>(right.size());
  if (left.size() + right.size() > 2) {
    const double df = n1 + n2 - 2.0;
    const double svar = ((n1 - 1) * (l.std * l.std) + (n2 - 1) * (r.std * r.std)) / df;
    const double denom = std::sqrt(svar * (1.0 / n1 + 1.0 / n2));
    const double t = (l.mean - r.mean) / denom;  // inf or NaN when both sides are constant
    cp.p_value = StudentTTwoSidedP(t, df);
  }
  cp.forward_change = l.mean == 0 ? 0.0 : r.mean / l.mean - 1.0;
  const double backward = r.mean == 0 ? 0.0 : l.mean / r.mean - 1.0;
  // Python's max(a, b) keeps a unless b is greater.
  cp.magnitude = std::fabs(cp.forward_change);
  if (std::fabs(backward) > cp.magnitude) cp.magnitude = std::fabs(backward);
  return cp;
}

// A segment [start, stop) between neighbouring change points.
struct Interval {
  std::size_t start;
  std::size_t stop;
};

// Otava's get_intervals: the segments that the sorted change points cut [0, n) into.
std::vector<Interval> Intervals(const std::vector<ChangePoint>& cps, std::size_t n) {
  std::vector<Interval> out;
  for (std::size_t i = 0; i <= cps.size(); ++i) {
    const std::size_t start = i == 0 ? 0 : cps[i - 1].index;
    const std::size_t stop = i == cps.size() ? n : cps[i].index;
    if (start != stop) out.push_back({start, stop});
  }
  return out;
}

// Otava's get_sides + compare: an existing change point (the stop of one interval) compares the
// two intervals around it; a new candidate splits the interval that contains it.
ChangePoint StatsAt(std::span<const double> s, const std::vector<Interval>& intervals,
                    std::size_t index) {
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    const Interval& iv = intervals[i];
    if (iv.stop == index && i + 1 < intervals.size()) {
      const Interval& next = intervals[i + 1];
      return Compare(s.subspan(iv.start, iv.stop - iv.start),
                     s.subspan(next.start, next.stop - next.start), index);
    }
    if (iv.start < index && index < iv.stop) {
      return Compare(s.subspan(iv.start, index - iv.start), s.subspan(index, iv.stop - index),
                     index);
    }
  }
  ChangePoint none;  // unreachable for indices produced here; a p of NaN is never significant
  none.index = index;
  none.p_value = kNaN;
  return none;
}

// The calculator's matrices (~80 KB each for a window of 100), kept per thread: allocating and
// freeing them for every window made glibc hand the pages back to the kernel and fault them in
// again, about half the time of a full analysis (bench/history_bench.cc). Calculators are never
// nested on one thread.
struct Scratch {
  std::vector<double> v, h, cv, rev, q, ch;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Otava's PairDistanceCalculator (power 1): cumulative distance sums over the whole (window)
// series, from which the Q-hat matrix of any segment is assembled by cumulative sums.
class PairDistanceCalculator {
 public:
  explicit PairDistanceCalculator(std::span<const double> s)
      : s_(s), n_(s.size()), scratch_(ThreadScratch()), v_(scratch_.v), h_(scratch_.h) {
    const std::size_t m = n_ - 1;  // callers guarantee n_ >= 2
    v_.assign(m, 0.0);
    h_.assign(m * m, 0.0);
    for (std::size_t c = 0; c < m; ++c) {
      double sum = 0.0;
      for (std::size_t r = 0; r <= c; ++r) sum += Dist(r, c + 1);
      v_[c] = sum;
    }
    for (std::size_t r = 0; r < m; ++r) {
      double run = 0.0;
      for (std::size_t c = r; c < m; ++c) {
        run += Dist(r, c + 1);
        h_[r * m + c] = run;
      }
    }
  }

  // The n x n matrix (n = end - start) with Q[i][j] = Q-hat(s[start, start+i+1),
  // s[start+i+1, start+j+2)) for j >= i and 0 below the diagonal, as Otava's _get_Q_vals.
  // The result lives in the thread's scratch until the next call.
  const std::vector<double>& QMatrix(std::size_t start, std::size_t end) const {
    const std::size_t n = end - start;
    const std::size_t m = n_ - 1;
    std::vector<double>& cv = scratch_.cv;  // cumsum of V(start, .)
    cv.assign(n, 0.0);
    double run = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
      double col = 0.0;
      for (std::size_t r = 0; r < start; ++r) col += Dist(r, start + k + 1);
      run += v_[start + k] - col;
      cv[k] = run;
    }
    auto hs = [&](std::size_t a, std::size_t b) { return h_[(start + a) * m + start + b]; };
    // rev[a][b] = sum over a' >= a of Hs[a'+1][b+1], accumulated from the bottom row.
    std::vector<double>& rev = scratch_.rev;
    rev.assign(n > 1 ? (n - 1) * (n - 1) : 0, 0.0);
    for (std::size_t a = n - 1; a-- > 0;) {
      for (std::size_t b = 0; b + 1 < n; ++b) {
        const double own = hs(a + 1, b + 1);
        rev[a * (n - 1) + b] = a + 2 < n ? rev[(a + 1) * (n - 1) + b] + own : own;
      }
    }
    std::vector<double>& q = scratch_.q;
    q.assign(n * n, 0.0);
    std::vector<double>& ch = scratch_.ch;  // cumsum of Hs down the rows
    ch.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) ch[j] = i == 0 ? hs(0, j) : ch[j] + hs(i, j);
      for (std::size_t j = i; j < n; ++j) {
        const double kap = static_cast<double>(j + 2);
        const double a = (2.0 / kap) * (ch[j] - (i >= 1 ? cv[i - 1] : 0.0));
        double b = 0.0;
        if (i >= 1) {
          const double coef = static_cast<double>(2 * (j - i + 1)) / (kap * static_cast<double>(i));
          b = coef * cv[i - 1];
        }
        double c = 0.0;
        if (j > i && i + 2 <= n) {
          const double coef = static_cast<double>(2 * (i + 1)) / (kap * static_cast<double>(j - i));
          c = coef * rev[i * (n - 1) + (j - 1)];
        }
        q[i * n + j] = a - b - c;
      }
    }
    return q;
  }

  struct Candidate {
    std::size_t index;
    double qhat;
  };

  // The first maximum of the Q matrix in row-major order (numpy's argmax), zeros included.
  Candidate Best(const Interval& iv) const {
    const std::size_t start = iv.start;
    const std::size_t end = iv.stop - 1;
    const std::size_t n = end - start;
    const std::vector<double>& q = QMatrix(start, end);
    std::size_t best = 0;
    for (std::size_t k = 1; k < q.size(); ++k) {
      if (q[k] > q[best]) best = k;
    }
    return {best / n + 1 + start, q[best]};
  }

 private:
  double Dist(std::size_t i, std::size_t j) const { return std::fabs(s_[i] - s_[j]); }

  std::span<const double> s_;
  std::size_t n_;
  Scratch& scratch_;
  std::vector<double>& v_;
  std::vector<double>& h_;  // (n-1) x (n-1), row r: cumulative distances from s[r] rightwards
};

// Otava's ChangePointDetector.get_change_points with the t-test and stop_at = 0.
std::vector<ChangePoint> Divisive(std::span<const double> s, double threshold) {
  std::vector<ChangePoint> cps;
  if (s.size() < 2) return cps;
  const PairDistanceCalculator calc(s);
  while (true) {
    const std::vector<Interval> intervals = Intervals(cps, s.size());
    bool found = false;
    PairDistanceCalculator::Candidate best{0, 0.0};
    for (const Interval& iv : intervals) {
      if (iv.stop - iv.start <= 1) continue;
      const auto candidate = calc.Best(iv);
      if (!found || candidate.qhat > best.qhat) best = candidate;
      found = true;
    }
    if (!found) break;
    ChangePoint cp = StatsAt(s, intervals, best.index);
    if (!(cp.p_value <= threshold)) break;
    const auto at =
        std::lower_bound(cps.begin(), cps.end(), cp.index,
                         [](const ChangePoint& c, std::size_t index) { return c.index < index; });
    cps.insert(at, cp);
  }
  return cps;
}

Result<void> Validate(std::span<const double> series, double max_pvalue) {
  if (!(max_pvalue >= 0 && max_pvalue <= 1)) {
    return InvalidArgument("must be in [0, 1]", "max_pvalue");
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!std::isfinite(series[i])) {
      return InvalidArgument("not a finite number", "series[" + std::to_string(i) + "]");
    }
  }
  return {};
}

// Otava's split(): the weak change points with statistics over the global segments. Windows
// start at `state->resume_start` with `state->split_indices` already found; on return the state
// describes this series.
std::vector<ChangePoint> Split(std::span<const double> series, std::size_t window_len,
                               double threshold, ChangePointState* state) {
  const std::size_t n = series.size();
  const std::size_t step = window_len / 2;
  std::vector<std::size_t> found_indices = state->split_indices;
  std::size_t start = state->resume_start;
  bool resume_set = false;
  while (start < n) {
    const std::size_t end = std::min(start + window_len, n);
    if (!resume_set && start + window_len > n) {
      // This window and every later one see the series' end: a longer series changes them.
      state->resume_start = start;
      state->split_indices = found_indices;
      resume_set = true;
    }
    std::vector<ChangePoint> found = Divisive(series.subspan(start, end - start), threshold);
    const std::size_t last = found.empty() ? 0 : found.back().index + start;
    for (const ChangePoint& cp : found) {
      const std::size_t index = cp.index + start;
      if (std::find(found_indices.begin(), found_indices.end(), index) == found_indices.end()) {
        found_indices.push_back(index);
      }
    }
    start = std::max(last, start + step);
  }
  if (!resume_set) {
    state->resume_start = start;
    state->split_indices = found_indices;
  }
  state->length = n;
  std::sort(found_indices.begin(), found_indices.end());
  std::vector<ChangePoint> cps;
  cps.reserve(found_indices.size());
  for (std::size_t index : found_indices) cps.push_back(ChangePoint{.index = index});
  const std::vector<Interval> intervals = Intervals(cps, n);
  std::vector<ChangePoint> out;
  out.reserve(cps.size());
  for (const ChangePoint& cp : cps) out.push_back(StatsAt(series, intervals, cp.index));
  return out;
}

// Otava's merge(), including its choice of which statistics to refresh after a deletion: the
// change points now at the deleted position and the one after it (not the one before).
std::vector<ChangePoint> Merge(std::vector<ChangePoint> cps, std::span<const double> series,
                               double max_pvalue, double min_magnitude) {
  while (!cps.empty()) {
    // Python's max()/min() with a key: the first element wins ties and NaN comparisons fail.
    std::size_t weakest = 0;
    for (std::size_t i = 1; i < cps.size(); ++i) {
      if (cps[i].p_value > cps[weakest].p_value) weakest = i;
    }
    if (cps[weakest].p_value < max_pvalue) {
      weakest = 0;
      for (std::size_t i = 1; i < cps.size(); ++i) {
        if (cps[i].magnitude < cps[weakest].magnitude) weakest = i;
      }
      if (cps[weakest].magnitude > min_magnitude) return cps;
    }
    cps.erase(cps.begin() + static_cast<std::ptrdiff_t>(weakest));
    const std::vector<Interval> intervals = Intervals(cps, series.size());
    for (std::size_t k = weakest; k < weakest + 2 && k < cps.size(); ++k) {
      cps[k] = StatsAt(series, intervals, cps[k].index);
    }
  }
  return cps;
}

}  // namespace

double FirstPassPValue(double max_pvalue) {
  if (max_pvalue < 0.05) return max_pvalue * 10;
  if (max_pvalue < 0.5) return max_pvalue * 2;
  return max_pvalue;
}

Result<IncrementalAnalysis> DetectChangePointsIncremental(std::span<const double> series,
                                                          const ChangePointOptions& options,
                                                          const ChangePointState* previous) {
  if (options.window_len < 2) return InvalidArgument("must be at least 2", "window_len");
  if (!(options.min_magnitude >= 0)) {
    return InvalidArgument("must be a number >= 0", "min_magnitude");
  }
  auto valid = Validate(series, options.max_pvalue);
  if (!valid) return tl::unexpected(valid.error());
  const double threshold = FirstPassPValue(options.max_pvalue);
  IncrementalAnalysis out;
  out.resumed = previous != nullptr && previous->window_len == options.window_len &&
                previous->first_pass_pvalue == threshold && previous->length <= series.size() &&
                previous->resume_start <= previous->length;
  if (out.resumed) out.state = *previous;
  out.state.window_len = options.window_len;
  out.state.first_pass_pvalue = threshold;
  out.analysis.weak_change_points = Split(series, options.window_len, threshold, &out.state);
  out.analysis.change_points =
      Merge(out.analysis.weak_change_points, series, options.max_pvalue, options.min_magnitude);
  return out;
}

Result<ChangePointAnalysis> DetectChangePoints(std::span<const double> series,
                                               const ChangePointOptions& options) {
  auto incremental = DetectChangePointsIncremental(series, options, nullptr);
  if (!incremental) return tl::unexpected(incremental.error());
  return std::move(incremental->analysis);
}

Result<std::vector<ChangePoint>> DivisiveChangePoints(std::span<const double> series,
                                                      double max_pvalue) {
  auto valid = Validate(series, max_pvalue);
  if (!valid) return tl::unexpected(valid.error());
  return Divisive(series, max_pvalue);
}

double EDivisiveQHat(std::span<const double> x, std::size_t tau, std::size_t kappa) {
  if (!(0 < tau && tau < kappa && kappa <= x.size())) return kNaN;
  const PairDistanceCalculator calc(x);
  const std::size_t n = x.size() - 1;
  const std::vector<double>& q = calc.QMatrix(0, n);
  return q[(tau - 1) * n + (kappa - 2)];
}

}  // namespace perfwarden::stats
