// SPDX-License-Identifier: Apache-2.0
// Why a regression happened, as far as the run's other metrics can tell, and whether the host
// was fit to measure at all. Pure functions over the rows of a judged verdict: for each
// REGRESSION row, the metrics of its benchmark (and the suite's GPU telemetry) that moved with
// it, the roofline class of a training step when the run reports its FLOPs and bytes, and a
// one-line hint; for every regression of a suite whose GPUs were throttled, a note that the run
// measured the host. docs/api.md ("Verdicts") documents the keys; docs/statistics.md the rules.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"

namespace perfwarden::judge {

// One result row as the verdict wrote it, with both sides' values: throttling and the roofline
// read the contender's values, not changes, and an IGNORED series (telemetry that informs but
// does not gate) has no change of its own.
struct AttributionInput {
  std::string_view suite;
  std::string_view benchmark;
  std::string_view metric;
  std::string_view unit;
  Direction direction = Direction::kLowerIsBetter;
  std::string_view verdict;  // "REGRESSION", "IMPROVEMENT", "EQUIVALENT", "INCONCLUSIVE", ...
  double change = 0;         // NaN when not judged (NEW, IGNORED)
  double p_adjusted = 0;     // NaN when not judged
  double threshold = 0;
  std::span<const double> current;              // the contender's pooled values
  std::optional<std::span<const double>> base;  // the baseline's; nullopt when none
  bool gated = true;  // false: REPORTED (judge::Gating); its verdict explains, never gets notes
};

struct MovedMetric {
  std::string metric;
  std::string verdict;
  double change = 0;
};

struct Roofline {
  std::string_view bound;  // kComputeBound or kMemoryBound
  double intensity = 0;    // FLOP per byte of the contender's step
  double ridge = 0;        // FLOP per byte where the peaks meet
};

inline constexpr std::string_view kComputeBound = "compute-bound";
inline constexpr std::string_view kMemoryBound = "memory-bound";

struct Attribution {
  std::vector<MovedMetric> moved;  // most significant first
  std::optional<Roofline> roofline;
  std::string hint;  // "" when no rule applies
};

// The hints, first that applies wins (docs/statistics.md, "Attribution").
inline constexpr std::string_view kHintClock =
    "the GPU clock fell (power or thermal cap, or application clocks changed): the environment, "
    "not the code";
inline constexpr std::string_view kHintStarved =
    "utilisation fell while step time rose: look at the input pipeline or synchronisation (the "
    "GPU waited)";
inline constexpr std::string_view kHintSlowerKernels =
    "the GPU was as busy but did less work: slower kernels (algorithm, precision, layout, launch "
    "configuration)";
inline constexpr std::string_view kHintMemory =
    "memory rose too: larger activations or workspace (batch, shapes, algorithm choice)";
inline constexpr std::string_view kHintMoreWork = "CPU time rose with it: the code does more work";
inline constexpr std::string_view kHintWaited =
    "real time rose but CPU time did not: the benchmark waited (I/O, locks, sleeping threads)";

// The share of throttled samples above which a run measures the host (the runner's
// GpuSummary::Throttled() uses the same bound; judge/ cannot include the runner).
inline constexpr double kThrottledFraction = 0.01;

struct RowNotes {
  std::optional<Attribution> attribution;  // REGRESSION rows with something to say
  std::string environment;                 // REGRESSION rows of a throttled suite; else ""
};

struct Attributions {
  std::vector<RowNotes> rows;  // one per input row, in its order
  // There are regressions, and every one of them has an environment note: the verdict's
  // outcome is "noisy_environment" instead of "regression".
  bool noisy_environment = false;
};

Attributions Attribute(const std::vector<AttributionInput>& rows);

// "the GPUs were throttled in 20% of the samples (power or thermal caps): this run measures the
// host, not the code".
std::string EnvironmentNote(double throttled_fraction);

}  // namespace perfwarden::judge
