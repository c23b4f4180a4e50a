#include "stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/effect.h"
#include "stats/resampled_median.h"

namespace perfgate::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (auto& word : s_) word = SplitMix64(state);
}

uint64_t Rng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

uint32_t Rng::Below(uint32_t n) {
  uint64_t m = (Next() >> 32) * n;
  auto low = static_cast<uint32_t>(m);
  if (low < n) {
    const uint32_t threshold = static_cast<uint32_t>(-n) % n;
    while (low < threshold) {
      m = (Next() >> 32) * n;
      low = static_cast<uint32_t>(m);
    }
  }
  return static_cast<uint32_t>(m >> 32);
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

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
  ResampledMedian base_median(sorted_base);
  ResampledMedian contender_median(sorted_contender);
  Rng rng(seed);
  changes.reserve(static_cast<size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    const double b_median = base_median.Draw(rng);
    const double c_median = contender_median.Draw(rng);
    changes.push_back(RelativeChange(b_median, c_median));
  }
  return changes;
}

Interval PercentileInterval(std::span<const double> replicates, double confidence) {
  if (replicates.empty() || !(confidence > 0 && confidence < 1)) return {kNaN, kNaN};
  const double q_lo = (1 - confidence) / 2;
  const double q_hi = (1 + confidence) / 2;
  std::vector<double> v(replicates.begin(), replicates.end());
  const size_t n = v.size();
  // NumPy's linear quantile reads the order statistics at floor((n-1)q) and the one after.
  // Sorting only a small window around each (selection, O(n)) instead of everything keeps
  // 1,000 intervals of 2,000 replicates cheap; QuantileSorted reads only inside the windows.
  auto window = [n](double q) {
    const auto centre = static_cast<size_t>(std::floor(static_cast<double>(n - 1) * q));
    return std::pair<size_t, size_t>{centre > 0 ? centre - 1 : 0, std::min(n, centre + 3)};
  };
  const auto [lo_first, lo_last] = window(q_lo);
  const auto [hi_first, hi_last] = window(q_hi);
  if (n < 64 || lo_last > hi_first) {
    std::sort(v.begin(), v.end());
  } else {
    auto at = [&v](size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
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

}  // namespace perfgate::stats
