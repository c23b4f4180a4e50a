// SPDX-License-Identifier: Apache-2.0
// Side-by-side measurement of the baseline and the pull request on this host, as duet
// benchmarking, Chromium's Pinpoint and `asv continuous` do: the two builds run interleaved in
// blocks, each block running both sides (a few repetitions each) in an order drawn per block,
// so that the machine's drift (a shared CI runner's speed moves by 10% in seconds) hits both
// sides of a block alike and cancels in the block's ratio. The statistics of the blocks are
// stats/paired_verdict.h's; this file only measures.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "runner/run/baseline_tree.h"
#include "runner/run/suites.h"
#include "wire/paired.h"

namespace perfwarden::run {

// What a block of a series holds is the wire's paired measurement (wire/paired.h), which the
// gate posts as it was measured.
using PairedBlock = wire::PairedBlock;
using PairedSeries = wire::PairedSeries;

struct PairedOptions {
  int repetitions = 5;     // of each side per block
  std::uint64_t seed = 0;  // of the order drawn per block
  // Google Benchmark suites, once the suite's benchmarks are known (after the first block):
  // kSuite runs one process per side for the whole suite; kBenchmark each benchmark's two sides
  // back to back (its own pair of processes, its own order), so that the two sides of a block are
  // seconds closer; kRepetition alternates the sides repetition by repetition (one process per
  // repetition, the order drawn per round), so that a slow spell of the machine hits one
  // repetition of one side, which the block's median drops.
  enum class Interleave { kSuite, kBenchmark, kRepetition };
  Interleave interleave = Interleave::kSuite;
};

// Suite name -> the benchmarks to run (an empty set: all of the suite's).
using BenchmarkSelection = std::map<std::string, std::set<std::string>>;

class PairedMeasurer {
 public:
  // `head` is the pull request's config, already built (`perfwarden run` built it); `base` the
  // prepared baseline. Both must outlive the measurer.
  PairedMeasurer(const config::RunnerConfig& head, const BaselineTree& base,
                 const PairedOptions& options);

  // Measures one more block of every suite in `only`: both sides, `repetitions` each, in an
  // order drawn for this block and suite. Errors name the side and the suite; the blocks
  // measured before stay.
  Result<void> MeasureBlock(const BenchmarkSelection& only, const ProgressLine& progress);

  int blocks() const { return blocks_; }
  // Every series either side reported, by key; each has blocks() blocks.
  std::vector<PairedSeries> Series() const;

 private:
  // Appends a side's values to the current block (of the benchmarks in `only` when not empty).
  void Record(const SuiteOutcome& outcome, bool base_side, bool base_first,
              const std::set<std::string>& only);
  // Both sides of `benchmarks` (all of the suite's when empty) in an order drawn now.
  Result<void> MeasurePair(const std::string& suite_name, const config::Suite& head_suite,
                           const config::Suite& base_suite, const std::set<std::string>& benchmarks,
                           int repetitions, const ProgressLine& progress);

  const config::RunnerConfig& head_;
  const BaselineTree& base_;
  PairedOptions options_;
  std::mt19937_64 order_;
  int blocks_ = 0;
  std::map<SeriesKey, PairedSeries> series_;
};

}  // namespace perfwarden::run
