// SPDX-License-Identifier: Apache-2.0
// Seeded percentile bootstrap of the relative change of medians between two independent
// samples. Deterministic for a given seed on every platform (own generator, own integer
// sampling), so a verdict can be replayed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stats/descriptive.h"

namespace perfwarden::stats {

struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = 0x5eed;
};

// A small, fast, seedable generator (xoshiro256**, seeded through splitmix64).
// Defined here so that the bootstrap's inner loop inlines them (4 calls per replicate).
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t Next() {
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
  // Uniform integer in [0, n) by Lemire's multiply-shift with rejection (unbiased).
  uint32_t Below(uint32_t n) {
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
  // Uniform double in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

class ResampledMedian;

// Derives an independent stream seed from a base seed and a key (e.g. a benchmark name), so
// that one benchmark's interval does not depend on which other benchmarks are compared.
uint64_t DeriveSeed(uint64_t seed, std::span<const char> key);

// The bootstrap distribution of median(contender*) / median(base*) - 1, where * are
// resamples with replacement of each side: `resamples` replicates, in draw order.
// Empty when a side is empty.
std::vector<double> BootstrapMedianChanges(std::span<const double> base,
                                           std::span<const double> contender, int resamples,
                                           uint64_t seed);

// The same from the two sides' resampled-median tables (ResampledMedian), e.g. a baseline's
// table built once and shared by every pull request judged against it. Identical replicates.
std::vector<double> BootstrapMedianChanges(const ResampledMedian& base,
                                           const ResampledMedian& contender, int resamples,
                                           uint64_t seed);

// The bootstrap distribution of where median(x) lies between median(low) and median(high):
// (median(x*) - median(low*)) / (median(high*) - median(low*)), 0 at low's level and 1 at high's,
// the three sides resampled independently (`resamples` replicates, in draw order). A replicate
// whose low and high medians tie, or lie in the other order than the samples' medians, has no
// position: NaN (every replicate when the samples' medians tie). Empty when a side is empty.
// Deterministic for a given seed, like BootstrapMedianChanges.
std::vector<double> BootstrapMedianPositions(std::span<const double> low,
                                             std::span<const double> high,
                                             std::span<const double> x, int resamples,
                                             uint64_t seed);

// The base side's share of BootstrapMedianChanges(base, contender, resamples, seed), done once
// for every contender judged against the same base (pull requests against one baseline): the
// base's replicate medians and the generator's numbers that each contender draw will take,
// which do not depend on the contender as long as each of its draws takes two numbers (always,
// but for Lemire's rejection: about once in 10^8 draws of a tabulated contender, and then the
// whole bootstrap is redone as usual). Changes() is identical to BootstrapMedianChanges.
class PreparedBootstrap {
 public:
  PreparedBootstrap(const ResampledMedian& base, int resamples, uint64_t seed);

  int resamples() const { return static_cast<int>(base_medians_.size()); }
  uint64_t seed() const { return seed_; }
  // `base` must be the table this was prepared from.
  std::vector<double> Changes(const ResampledMedian& base, const ResampledMedian& contender) const;
  size_t MemoryBytes() const;

 private:
  uint64_t seed_;
  std::vector<double> base_medians_;
  std::vector<uint32_t> cell_draws_;  // the high 32 bits of the number Below(cells) takes
  std::vector<double> uniforms_;      // the Uniform() that follows it
};

// The bootstrap distribution of the mean of x: `resamples` replicates, each the mean of
// x.size() draws with replacement, in draw order (a paired design resamples whole blocks, so
// x holds one value per block). Empty when x is empty or resamples <= 0.
std::vector<double> BootstrapMeans(std::span<const double> x, int resamples, uint64_t seed);

// Percentile interval of the replicates (NumPy's linear quantiles at (1-c)/2 and (1+c)/2).
// NaN bounds when empty.
Interval PercentileInterval(std::span<const double> replicates, double confidence);

// Percentile bootstrap CI of median(contender) / median(base) - 1.
Interval BootstrapMedianChangeCi(std::span<const double> base, std::span<const double> contender,
                                 const BootstrapOptions& options);

}  // namespace perfwarden::stats
