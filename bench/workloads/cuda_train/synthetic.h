// SPDX-License-Identifier: Apache-2.0
// The synthetic task and the initial weights, as pure functions of (seed, indices) so that the
// GPU kernels and the CPU reference (reference.cc, the unit test) compute the same numbers
// without sharing any state: a counter-based hash instead of a stateful generator.
//
// The task is learnable by construction: a fixed random Gaussian-mixture teacher. Class c has a
// fixed random centroid mu_c (a standard normal vector scaled by kClassSeparation / sqrt(input)),
// and a sample of class c is mu_c plus standard normal noise. The Bayes-optimal classifier is
// linear (nearest centroid), so the MLP's loss falls from about ln(classes) as it learns the
// centroids. Each step draws a fresh batch (labels uniform over the classes): the loss measures
// generalisation, not memorisation.
#pragma once

#include <math.h>  // sqrtf, logf, cosf in the global namespace, as in device code

#include <cstdint>

#if defined(__CUDACC__)
#define PERFWARDEN_HD __host__ __device__
#else
#define PERFWARDEN_HD
#endif

namespace perfwarden::cuda_train {

// Distance between two centroids is about kClassSeparation * sqrt(2) noise standard deviations,
// whatever the input width: far enough apart to learn, close enough that it takes many steps.
constexpr float kClassSeparation = 4.0f;

enum Stream : std::uint64_t { kLabelStream = 1, kCentroidStream = 2, kNoiseStream = 3, kInit = 4 };

// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective mix with full avalanche.
PERFWARDEN_HD inline std::uint64_t Mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

PERFWARDEN_HD inline std::uint64_t Hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t a,
                                        std::uint64_t b) {
  std::uint64_t h = Mix64(seed + 0x9e3779b97f4a7c15ULL * (stream + 1));
  h = Mix64(h ^ (a + 0x632be59bd9b4e019ULL));
  return Mix64(h ^ (b + 0x85157af5ULL));
}

// A standard normal from one 64-bit hash (Box-Muller on its two 32-bit halves), in float so that
// host and device round alike up to their libm's last-bit differences.
PERFWARDEN_HD inline float NormalFromHash(std::uint64_t h) {
  const float u1 = (static_cast<float>(h >> 32) + 1.0f) * 2.3283064365386963e-10f;   // (0, 1]
  const float u2 = static_cast<float>(h & 0xffffffffULL) * 2.3283064365386963e-10f;  // [0, 1)
  return sqrtf(-2.0f * logf(u1)) * cosf(6.283185307179586f * u2);
}

PERFWARDEN_HD inline int SampleLabel(std::uint64_t seed, std::int64_t step, std::int64_t sample,
                                     std::int64_t classes) {
  return static_cast<int>(Hash(seed, kLabelStream, static_cast<std::uint64_t>(step),
                               static_cast<std::uint64_t>(sample)) %
                          static_cast<std::uint64_t>(classes));
}

// Feature `feature` of sample `sample` (with label `label`) of step `step`.
PERFWARDEN_HD inline float SampleInput(std::uint64_t seed, std::int64_t step, std::int64_t sample,
                                       std::int64_t feature, int label, std::int64_t inputs) {
  const float centroid =
      NormalFromHash(Hash(seed, kCentroidStream, static_cast<std::uint64_t>(label),
                          static_cast<std::uint64_t>(feature)));
  const float noise = NormalFromHash(Hash(seed, kNoiseStream, static_cast<std::uint64_t>(step),
                                          static_cast<std::uint64_t>(sample * inputs + feature)));
  return kClassSeparation * (1.0f / sqrtf(static_cast<float>(inputs))) * centroid + noise;
}

// Weight `index` of layer `layer`: normal with standard deviation 1 / sqrt(fan_in) (LeCun), so
// activations keep their scale through the layers; biases start at zero.
PERFWARDEN_HD inline float InitialWeight(std::uint64_t seed, int layer, std::int64_t index,
                                         std::int64_t fan_in) {
  return NormalFromHash(Hash(seed, kInit, static_cast<std::uint64_t>(layer),
                             static_cast<std::uint64_t>(index))) *
         (1.0f / sqrtf(static_cast<float>(fan_in)));
}

}  // namespace perfwarden::cuda_train
