// SPDX-License-Identifier: Apache-2.0
#include "stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "stats/effect.h"
#include "stats/resampled_median.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (auto& word : s_) word = SplitMix64(state);
}

uint64_t DeriveSeed(uint64_t seed, std::span<const char> key) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : key) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  uint64_t state = seed ^ hash;
  return SplitMix64(state);
}

std::vector<double> BootstrapMedianChanges(std::span<const double> base,
                                           std::span<const double> contender, int resamples,
                                           uint64_t seed) {
  std::vector<double> changes;
  if (base.empty() || contender.empty() || resamples <= 0) return changes;
  std::vector<double> sorted_base(base.begin(), base.end());
  std::vector<double> sorted_contender(contender.begin(), contender.end());
  std::sort(sorted_base.begin(), sorted_base.end());
  std::sort(sorted_contender.begin(), sorted_contender.end());
  return BootstrapMedianChanges(ResampledMedian(sorted_base), ResampledMedian(sorted_contender),
                                resamples, seed);
}

std::vector<double> BootstrapMedianChanges(const ResampledMedian& base_median,
                                           const ResampledMedian& contender_median, int resamples,
                                           uint64_t seed) {
  std::vector<double> changes;
  if (resamples <= 0) return changes;
  Rng rng(seed);
  const auto count = static_cast<size_t>(resamples);
  changes.reserve(count);
  if (!base_median.tabulated() || !contender_median.tabulated()) {
    for (size_t b = 0; b < count; ++b) {
      const double b_median = base_median.Draw(rng);
      const double c_median = contender_median.Draw(rng);
      changes.push_back(RelativeChange(b_median, c_median));
    }
    return changes;
  }
  // Two passes with the same numbers in the same order as Draw takes them: the generator
  // first, then the table reads, which then no longer wait on it and overlap in memory (a
  // baseline's table is ~45 KB, rarely in cache: 2x faster for 500 metrics).
  std::vector<ResampledMedian::Pick> picks(2 * count);
  for (size_t b = 0; b < count; ++b) {
    picks[2 * b] = base_median.RandomPick(rng);
    picks[2 * b + 1] = contender_median.RandomPick(rng);
  }
  for (size_t b = 0; b < count; ++b) {
    changes.push_back(
        RelativeChange(base_median.Read(picks[2 * b]), contender_median.Read(picks[2 * b + 1])));
  }
  return changes;
}

std::vector<double> BootstrapMeans(std::span<const double> x, int resamples, uint64_t seed) {
  std::vector<double> means;
  if (x.empty() || resamples <= 0) return means;
  Rng rng(seed);
  const auto n = static_cast<uint32_t>(x.size());
  means.reserve(static_cast<size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    double sum = 0;
    for (uint32_t i = 0; i < n; ++i) sum += x[rng.Below(n)];
    means.push_back(sum / n);
  }
  return means;
}

std::vector<double> BootstrapMedianPositions(std::span<const double> low,
                                             std::span<const double> high,
                                             std::span<const double> x, int resamples,
                                             uint64_t seed) {
  std::vector<double> positions;
  if (low.empty() || high.empty() || x.empty() || resamples <= 0) return positions;
  auto sorted = [](std::span<const double> values) {
    std::vector<double> out(values.begin(), values.end());
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<double> sorted_low = sorted(low), sorted_high = sorted(high),
                            sorted_x = sorted(x);
  const ResampledMedian low_median(sorted_low), high_median(sorted_high), x_median(sorted_x);
  const double order = Median(high) - Median(low);
  Rng rng(seed);
  positions.reserve(static_cast<size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    const double l = low_median.Draw(rng);
    const double h = high_median.Draw(rng);
    const double v = x_median.Draw(rng);
    const double step = h - l;
    positions.push_back(step * order > 0 ? (v - l) / step : kNaN);
  }
  return positions;
}

PreparedBootstrap::PreparedBootstrap(const ResampledMedian& base, int resamples, uint64_t seed)
    : seed_(seed) {
  const auto count = static_cast<size_t>(std::max(resamples, 0));
  base_medians_.reserve(count);
  cell_draws_.reserve(count);
  uniforms_.reserve(count);
  Rng rng(seed);
  for (size_t b = 0; b < count; ++b) {
    base_medians_.push_back(base.Draw(rng));
    cell_draws_.push_back(static_cast<uint32_t>(rng.Next() >> 32));
    uniforms_.push_back(rng.Uniform());
  }
}

std::vector<double> PreparedBootstrap::Changes(const ResampledMedian& base,
                                               const ResampledMedian& contender) const {
  const auto count = base_medians_.size();
  if (!contender.tabulated()) return BootstrapMedianChanges(base, contender, resamples(), seed_);
  // Rng::Below(n) on the stored number: rejected (another number taken) when the low word of
  // the product falls under 2^32 mod n.
  const auto cells = static_cast<uint32_t>(contender.cells());
  const uint32_t threshold = static_cast<uint32_t>(-cells) % cells;
  std::vector<double> changes(count);
  for (size_t b = 0; b < count; ++b) {
    const uint64_t m = uint64_t{cell_draws_[b]} * cells;
    if (static_cast<uint32_t>(m) < threshold) {
      return BootstrapMedianChanges(base, contender, resamples(), seed_);
    }
    const double c_median = contender.Read({static_cast<uint32_t>(m >> 32), uniforms_[b]});
    changes[b] = RelativeChange(base_medians_[b], c_median);
  }
  return changes;
}

size_t PreparedBootstrap::MemoryBytes() const {
  return sizeof(*this) + base_medians_.capacity() * sizeof(double) +
         cell_draws_.capacity() * sizeof(uint32_t) + uniforms_.capacity() * sizeof(double);
}

namespace {

// Places into sorted[first, last) the order statistics of x of those ranks (ascending, 0-based),
// for a window near each end: [low_first, low_last) near the smallest, [high_first, high_last)
// near the largest (high_last == x.size() allowed). A strided subsample (the replicates are in
// random draw order) gives each end a bound ranked a few standard deviations beyond the window;
// one branch-free pass keeps what lies beyond either bound; selection among those few places
// the window. Exact: when at least `low_last` values lie at or below the low bound, every value
// of rank below low_last does, and their ranks among the kept values are their ranks in x (the
// same at the high end). False (nothing placed) when a bound holds too few, when a value is NaN,
// or when the windows are not near the ends.
bool PlaceEndWindows(std::span<const double> x, size_t low_first, size_t low_last,
                     size_t high_first, size_t high_last, double* sorted) {
  constexpr size_t kSubsample = 256;
  const size_t n = x.size();
  const size_t k_low = low_last;         // values needed below the low bound
  const size_t k_high = n - high_first;  // values needed above the high bound
  if (n < 4 * kSubsample || 8 * std::max(k_low, k_high) > n || high_last > n) return false;
  const size_t stride = n / kSubsample;
  std::vector<double> sample;
  sample.reserve(kSubsample + 1);
  for (size_t i = 0; i < n; i += stride) sample.push_back(x[i]);
  const size_t m = sample.size();
  // The subsample's count below the k-th value is about k m / n with a spread of about its
  // square root: 4 standard deviations and a margin of 4 make a miss (a fallback, not an error)
  // rare, and keep only about twice k values.
  auto rank_for = [m, n](size_t k) {
    const double expected = static_cast<double>(k * m) / static_cast<double>(n);
    return std::min(m - 1, static_cast<size_t>(expected + 4 * std::sqrt(expected) + 4));
  };
  auto at = [&sample](size_t i) { return sample.begin() + static_cast<std::ptrdiff_t>(i); };
  const size_t low_rank = rank_for(k_low);
  const size_t high_rank = m - 1 - rank_for(k_high);
  std::nth_element(sample.begin(), at(low_rank), sample.end());
  const double low_bound = sample[low_rank];
  std::nth_element(sample.begin(), at(high_rank), sample.end());
  const double high_bound = sample[high_rank];

  // Every value is written and the kept ones advance (no branch to mispredict); uninitialised
  // buffers: the pass writes before anything reads.
  auto low = std::make_unique_for_overwrite<double[]>(n);
  auto high = std::make_unique_for_overwrite<double[]>(n);
  size_t n_low = 0, n_high = 0;
  bool nan = false;
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i];
    low[n_low] = v;
    n_low += v <= low_bound ? 1 : 0;
    high[n_high] = v;
    n_high += v >= high_bound ? 1 : 0;
    nan |= std::isnan(v);
  }
  if (nan || n_low < k_low || n_high < k_high) return false;
  // Ranks among the kept values: the same at the low end; shifted by n - n_high at the high end.
  auto place = [sorted](double* kept, size_t count, size_t first, size_t last, size_t shift) {
    double* begin = kept;
    double* end = kept + count;
    std::nth_element(begin, begin + (first - shift), end);
    std::partial_sort(begin + (first - shift), begin + (last - shift), end);
    std::copy(begin + (first - shift), begin + (last - shift), sorted + first);
  };
  place(low.get(), n_low, low_first, low_last, 0);
  place(high.get(), n_high, high_first, high_last, n - n_high);
  if (high_last < n) {  // QuantileSorted checks the last element for NaN: the maximum
    sorted[n - 1] = *std::max_element(high.get(), high.get() + n_high);
  }
  return true;
}

}  // namespace

Interval PercentileInterval(std::span<const double> replicates, double confidence) {
  if (replicates.empty() || !(confidence > 0 && confidence < 1)) return {kNaN, kNaN};
  const double q_lo = (1 - confidence) / 2;
  const double q_hi = (1 + confidence) / 2;
  const size_t n = replicates.size();
  // NumPy's linear quantile reads the order statistics at floor((n-1)q) and the one after.
  // Only a small window around each needs to be in place (QuantileSorted reads only inside the
  // windows, and the last element for NaN).
  auto window = [n](double q) {
    const auto centre = static_cast<size_t>(std::floor(static_cast<double>(n - 1) * q));
    return std::pair<size_t, size_t>{centre > 0 ? centre - 1 : 0, std::min(n, centre + 3)};
  };
  const auto [lo_first, lo_last] = window(q_lo);
  const auto [hi_first, hi_last] = window(q_hi);
  if (n >= 64 && lo_last <= hi_first) {
    // Both windows near the ends (a 95% interval of 2,000 replicates reads ranks 48-51 and
    // 1,947-1,950): only they (and the last element, the maximum) are placed, in a buffer of
    // which nothing else is ever read.
    auto sorted = std::make_unique_for_overwrite<double[]>(n);
    if (PlaceEndWindows(replicates, lo_first, lo_last, hi_first, hi_last, sorted.get())) {
      const std::span<const double> view(sorted.get(), n);
      return {QuantileSorted(view, q_lo), QuantileSorted(view, q_hi)};
    }
  }
  std::vector<double> v(replicates.begin(), replicates.end());
  auto at = [&v](size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  if (n < 64 || lo_last > hi_first) {
    std::sort(v.begin(), v.end());
  } else {
    // Selection (O(n)) and a sort of each window only.
    std::nth_element(at(0), at(hi_first), at(n));
    std::partial_sort(at(hi_first), at(hi_last), at(n));
    std::nth_element(at(0), at(lo_first), at(hi_first));
    std::partial_sort(at(lo_first), at(lo_last), at(hi_first));
  }
  return {QuantileSorted(v, q_lo), QuantileSorted(v, q_hi)};
}

Interval BootstrapMedianChangeCi(std::span<const double> base, std::span<const double> contender,
                                 const BootstrapOptions& options) {
  auto changes = BootstrapMedianChanges(base, contender, options.resamples, options.seed);
  return PercentileInterval(changes, options.confidence);
}

}  // namespace perfwarden::stats
