// SPDX-License-Identifier: Apache-2.0
// `perfwarden ab` measured: the two commands run interleaved in randomised blocks
// (runner/compare/ab.h), each run's metrics read from what it printed (perfwarden's JSON lines: the
// steady-state median step time and the summary metrics; any other command: its wall time) and,
// with NVML, from the GPUs' telemetry during the run; then the analysis of B against A.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "runner/compare/ab.h"

namespace perfwarden::run {

struct AbOptions {
  std::string a, b;  // the commands (sh -c); A is the reference
  std::string name_a = "A", name_b = "B";
  int runs = 10;
  int warmup = 1;
  std::string metric;  // "": step_time for training benchmarks, else wall_time
  double alpha = 0.05;
  double threshold = 0.01;  // a change within it is no difference (a fraction)
  std::uint64_t seed = 0;   // of the run order
  std::int64_t timeout_s = 3600;
  std::vector<std::string> pass_env;  // secret-looking variables the commands get (HF_TOKEN)
};

// Warm-up runs of each command (at least one, discarded), then `runs` of each in randomised
// blocks, with progress on stderr. Errors: a run that fails (its arm named), or commands of which
// only one prints perfwarden's JSON lines (kInvalidArgument).
Result<compare::AbReport> MeasureAb(const AbOptions& options);

}  // namespace perfwarden::run
