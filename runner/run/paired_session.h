// SPDX-License-Identifier: Apache-2.0
// The paired gate's measuring loop: the baseline commit exported and built (baseline_tree.h),
// then both sides measured in blocks (paired_measure.h) up to each look of the design's schedule,
// the blocks judged after each look (judge/paired.h, the one home of paired judging), until no
// metric is left undecided, the last look is reached, or the time budget runs out. What it
// returns is the measurement as the server takes it (wire/paired.h), `design.stopped` saying why
// it ended.
#pragma once

#include <chrono>
#include <string>

#include "config/runner_config.h"
#include "core/result.h"
#include "judge/paired.h"
#include "runner/run/baseline_cache.h"
#include "runner/run/paired_measure.h"
#include "wire/paired.h"

namespace perfwarden::run {

struct PairedRequest {
  std::string baseline_commit;
  BenchmarkSelection gated;         // suite -> benchmarks (an empty set: all of the suite's)
  wire::Testbed testbed;            // this host
  wire::VerdictRequest parameters;  // threshold, alpha, rules
  wire::PairedDesign design;        // repetitions, looks, test, seed ("stopped" is set here)
  PairedOptions::Interleave interleave = PairedOptions::Interleave::kSuite;  // gate.interleave
  // Measuring stops at the first look reached after this much time; zero: no budget.
  std::chrono::seconds budget{0};
  // Where the built baseline is cached (baseline_cache.h); the default: no cache.
  BaselineCacheSettings baseline_cache;
};

// What the next look measures: the benchmarks with a gated metric still open after `judged`
// (Google Benchmark suites by name; a command or training suite whole, as an empty set).
BenchmarkSelection StillUndecided(const config::RunnerConfig& head,
                                  const judge::PairedJudgement& judged);

// Errors: the baseline's (its export, perfwarden.yaml or build; the caller falls back to the
// server's verdict), a run of either side that fails, or parameters out of range
// (kInvalidArgument naming the field).
Result<wire::PairedMeasurement> MeasurePaired(const config::RunnerConfig& head,
                                              const PairedRequest& request,
                                              const ProgressLine& progress);

}  // namespace perfwarden::run
