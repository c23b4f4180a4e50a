// SPDX-License-Identifier: Apache-2.0
// `perfwarden ab`: two configurations (two commands) compared on this machine, run interleaved in
// randomised blocks so that drift (a warming GPU, a neighbour's load, this VM's speed regimes)
// falls on both alike. Without I/O here: the schedule and the analysis. Each run is one sample
// of every metric (a training run's steady-state median step time, its summary metrics, its GPU
// telemetry; a plain command's wall time): the runs, not the steps inside them, are the
// independent repetitions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/metric.h"

namespace perfwarden::compare {

enum class Arm { kA, kB };

// `runs` runs of each arm in blocks of two, one of each, each block's order drawn from `seed`.
std::vector<Arm> AbSchedule(int runs, std::uint64_t seed);

struct AbMetric {
  std::string name;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<double> a, b;  // one value per run
};

struct AbRow {
  std::string name, unit;
  Direction direction = Direction::kLowerIsBetter;
  int n_a = 0, n_b = 0;
  double median_a = 0, median_b = 0;
  double change = 0;               // median_b / median_a - 1
  double ci_low = 0, ci_high = 0;  // 95% bootstrap of the change
  double p_value = 1;              // two-sided Mann-Whitney U
  std::string verdict;             // judge::AbVerdictName: "better", "worse", "no difference",
                                   // "undecided", "too few runs"
};

struct AbReport {
  std::string name_a = "A", name_b = "B";
  std::string primary;   // the metric the speedup is of
  double threshold = 0;  // the change that matters (a fraction), as judged
  // How many times faster B is than A on the primary metric (A's median over B's for
  // lower-is-better metrics, B's over A's for higher-is-better ones), with its 95% CI.
  double speedup = 1, speedup_low = 1, speedup_high = 1;
  std::vector<AbRow> rows;  // the primary first, then by name
  std::vector<std::string> warnings;
};

// Each metric's verdict by judge::JudgeAbMetric at `alpha` and `threshold` (a fraction: changes
// within it are no difference); a primary metric whose runs cannot reach alpha (too few) adds a
// warning.
AbReport AnalyzeAb(const std::vector<AbMetric>& metrics, const std::string& primary, double alpha,
                   double threshold);

}  // namespace perfwarden::compare
