// SPDX-License-Identifier: Apache-2.0
#include "stats/resampled_median.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>

namespace perfwarden::stats {
namespace {

// P(Bin(n, p) >= m), summing the pmf from the end where it does not underflow
// (p^n and (1-p)^n are both >= 2^-n... for n <= 200 at least 1e-61 on the larger side).
double BinomialUpperTail(int n, double p, int m) {
  if (m <= 0) return 1;
  if (m > n || p <= 0) return 0;
  if (p >= 1) return 1;
  const double odds = p / (1 - p);
  double tail = 0;
  if (p <= 0.5) {
    double pmf = std::pow(1 - p, n);  // k = 0
    double below = 0;
    for (int k = 0; k < m; ++k) {
      below += pmf;
      pmf *= odds * (n - k) / (k + 1);
    }
    tail = 1 - below;
  } else {
    double pmf = std::pow(p, n);  // k = n
    for (int k = n; k >= m; --k) {
      tail += pmf;
      pmf *= (k / odds) / (n - k + 1);
    }
  }
  return std::clamp(tail, 0.0, 1.0);
}

// log C(n, k)
double LogChoose(int n, int k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

// Median of n counted draws of indices (the fallback for large n).
double CountedMedian(std::span<const double> sorted, Rng& rng) {
  const auto n = static_cast<uint32_t>(sorted.size());
  thread_local std::vector<uint32_t> counts;  // per thread: Draw is const and shared
  counts.assign(n, 0u);
  for (uint32_t i = 0; i < n; ++i) ++counts[rng.Below(n)];
  const uint32_t lo_rank = (n - 1) / 2;  // 0-based ranks of the middle element(s)
  const uint32_t hi_rank = n / 2;
  uint32_t seen = 0;
  double lo = sorted[0];
  bool have_lo = false;
  for (uint32_t j = 0; j < n; ++j) {
    if (counts[j] == 0) continue;
    seen += counts[j];
    if (!have_lo && seen > lo_rank) {
      lo = sorted[j];
      have_lo = true;
    }
    if (seen > hi_rank) return lo_rank == hi_rank ? lo : (lo + sorted[j]) / 2;
  }
  return lo;
}

}  // namespace

// Draws are iid uniform positions 1..n of the sorted sample; N_j = #draws <= j ~ Bin(n, j/n).
// Odd n: the median is the m-th order statistic (m = (n+1)/2), at position j with probability
//   P(N_j >= m) - P(N_{j-1} >= m).
// Even n: the median averages the m-th and (m+1)-th (m = n/2) at positions a <= b. For a < b
// exactly m draws are <= a (at least one at a), none lie strictly between, one or more at b:
//   P(a, b) = C(n, m) [(a/n)^m - ((a-1)/n)^m] [((n-b+1)/n)^m - ((n-b)/n)^m],
// and P(a, a) is the m-th order statistic's P(a) minus the sum over b > a, which telescopes to
//   C(n, m) [(a/n)^m - ((a-1)/n)^m] ((n-a)/n)^m.
// None of this depends on the values, only on n: which positions each cell averages, its
// probability and the alias table built from those are computed once per n (a Layout) and a
// table for a sample only reads its values at those positions.
struct ResampledMedian::Layout {
  std::vector<uint32_t> lo, hi;     // 0-based positions the cell's median averages (lo == hi:
                                    // the value itself)
  std::vector<double> probability;  // of each cell, normalised
  std::vector<double> keep;         // Walker's alias table: keep the cell with this probability,
  std::vector<uint32_t> alias;      // else take this cell
};

namespace {

std::unique_ptr<ResampledMedian::Layout> BuildLayout(int n) {
  auto layout = std::make_unique<ResampledMedian::Layout>();
  const double nd = n;
  const int m = n % 2 == 1 ? (n + 1) / 2 : n / 2;
  std::vector<double> order_stat(static_cast<size_t>(n) + 1, 0.0);  // P(pos_(m) = j), 1-based
  double previous = 0;
  for (int j = 1; j <= n; ++j) {
    const double cdf = BinomialUpperTail(n, j / nd, m);
    order_stat[j] = std::max(0.0, cdf - previous);
    previous = cdf;
  }
  double total = 0;
  std::vector<double>& probability = layout->probability;
  auto add = [&](int a, int b, double p) {  // 1-based positions
    if (!(p > 0)) return;
    total += p;
    layout->lo.push_back(static_cast<uint32_t>(a - 1));
    layout->hi.push_back(static_cast<uint32_t>(b - 1));
    probability.push_back(p);
  };
  if (n % 2 == 1) {
    for (int j = 1; j <= n; ++j) add(j, j, order_stat[j]);
  } else {
    const double choose = std::exp(LogChoose(n, m));
    std::vector<double> power(static_cast<size_t>(n) + 1);  // power[i] = (i/n)^m
    for (int i = 0; i <= n; ++i) power[i] = std::pow(i / nd, m);
    // Pairs far from the middle have probabilities far below a double's resolution of the
    // total; leaving out those under kNegligible (at most n^2/2 of them, so under 1e-11 of
    // mass for n <= 200) keeps the table, and the time to build it, to the pairs that matter.
    constexpr double kNegligible = 1e-16;
    for (int a = 1; a <= n; ++a) {
      const double g = choose * (power[a] - power[a - 1]);
      add(a, a, order_stat[a] - g * power[n - a]);
      if (!(g > kNegligible)) continue;
      for (int b = a + 1; b <= n; ++b) {
        const double p = g * (power[n - b + 1] - power[n - b]);
        if (p < kNegligible) break;  // h falls as b grows: so do the pairs that follow
        add(a, b, p);
      }
    }
  }
  for (double& p : probability) p /= total;  // normalise away rounding

  // Vose's construction of Walker's alias table: every cell holds its own probability mass
  // (scaled by the cell count) topped up from one larger cell.
  const size_t k = probability.size();
  layout->keep.assign(k, 1.0);
  layout->alias.resize(k);
  std::vector<double> scaled(k);
  std::vector<uint32_t> small, large;
  small.reserve(k);
  large.reserve(k);
  for (size_t i = 0; i < k; ++i) {
    layout->alias[i] = static_cast<uint32_t>(i);
    scaled[i] = probability[i] * static_cast<double>(k);
    (scaled[i] < 1 ? small : large).push_back(static_cast<uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const uint32_t s = small.back();
    small.pop_back();
    const uint32_t l = large.back();
    layout->keep[s] = scaled[s];
    layout->alias[s] = l;
    scaled[l] = (scaled[l] + scaled[s]) - 1;
    if (scaled[l] < 1) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Whatever is left holds (up to rounding) exactly its share: its keep stays 1.
  return layout;
}

// One layout per size, built on first use by whichever thread needs it.
const ResampledMedian::Layout& LayoutFor(size_t n) {
  static std::array<std::once_flag, ResampledMedian::kExactMaxSize + 1> once;
  static std::array<std::unique_ptr<ResampledMedian::Layout>, ResampledMedian::kExactMaxSize + 1>
      layouts;
  std::call_once(once[n], [n] { layouts[n] = BuildLayout(static_cast<int>(n)); });
  return *layouts[n];
}

}  // namespace

ResampledMedian::ResampledMedian(std::span<const double> sorted) : sorted_(sorted) {
  if (sorted.empty() || sorted.size() > kExactMaxSize) return;
  layout_ = &LayoutFor(sorted.size());
  const size_t k = layout_->probability.size();
  auto value = [&](size_t i) {
    const uint32_t lo = layout_->lo[i];
    const uint32_t hi = layout_->hi[i];
    return lo == hi ? sorted[lo] : (sorted[lo] + sorted[hi]) / 2;
  };
  cells_.resize(k);
  for (size_t i = 0; i < k; ++i) {
    cells_[i] = {layout_->keep[i], {value(i), value(layout_->alias[i])}};
  }
}

double ResampledMedian::CountedDraw(Rng& rng) const { return CountedMedian(sorted_, rng); }

size_t ResampledMedian::MemoryBytes() const {
  return sizeof(*this) + cells_.capacity() * sizeof(Cell);  // the Layout is shared
}

std::vector<std::pair<double, double>> ResampledMedian::Distribution() const {
  std::vector<std::pair<double, double>> cells;
  for (size_t i = 0; i < cells_.size(); ++i) {
    cells.emplace_back(cells_[i].values[0], layout_->probability[i]);
  }
  return cells;
}

}  // namespace perfwarden::stats
