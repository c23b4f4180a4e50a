// Seeded percentile bootstrap of the relative change of medians between two independent
// samples. Deterministic for a given seed on every platform (own generator, own integer
// sampling), so a verdict can be replayed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stats/descriptive.h"

namespace perfgate::stats {

struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = 0x5eed;
};

// A small, fast, seedable generator (xoshiro256**, seeded through splitmix64).
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t Next();
  // Uniform integer in [0, n) by Lemire's multiply-shift with rejection (unbiased).
  uint32_t Below(uint32_t n);
  // Uniform double in [0, 1).
  double Uniform();

 private:
  uint64_t s_[4];
};

// Derives an independent stream seed from a base seed and a key (e.g. a benchmark name), so
// that one benchmark's interval does not depend on which other benchmarks are compared.
uint64_t DeriveSeed(uint64_t seed, std::span<const char> key);

// The bootstrap distribution of median(contender*) / median(base*) - 1, where * are
// resamples with replacement of each side: `resamples` replicates, in draw order.
// Empty when a side is empty.
std::vector<double> BootstrapMedianChanges(std::span<const double> base,
                                           std::span<const double> contender, int resamples,
                                           uint64_t seed);

// Percentile interval of the replicates (NumPy's linear quantiles at (1-c)/2 and (1+c)/2).
// NaN bounds when empty.
Interval PercentileInterval(std::span<const double> replicates, double confidence);

// Percentile bootstrap CI of median(contender) / median(base) - 1.
Interval BootstrapMedianChangeCi(std::span<const double> base, std::span<const double> contender,
                                 const BootstrapOptions& options);

}  // namespace perfgate::stats
