// SPDX-License-Identifier: Apache-2.0
// The report of a comparison of one metric between two sides (`perfwarden compare` over two
// Google Benchmark files, GET .../compare over two stored runs): the pairs judged in base order,
// the series only on one side, and warnings. The callers add what they know of their sources
// (a Google Benchmark context, a testbed); compare_json.h writes the report as JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "judge/judge.h"
#include "stats/verdict.h"

namespace perfwarden::judge {

// Below this many repetitions per side, Google Benchmark's compare.py also calls its results
// unreliable.
inline constexpr size_t kRecommendedMinRepetitions = 9;

struct SideInfo {
  std::string source;     // "base.json", "run <id>"
  size_t benchmarks = 0;  // series with the metric
  size_t min_repetitions = 0;
  size_t max_repetitions = 0;
  int64_t skipped = 0;  // repetitions left out (errored or skipped)
};

struct CompareReport {
  std::string metric;
  std::string unit;  // of the first pair with one: "ns", "1/s" or "" (counter)
  Direction direction = Direction::kLowerIsBetter;
  stats::VerdictPolicy policy;
  SideInfo base;
  SideInfo contender;
  stats::ComparisonVerdicts verdicts;  // in base order
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_contender;
  std::vector<std::string> warnings;
};

struct CompareOptions {
  std::string metric;
  Direction direction = Direction::kLowerIsBetter;  // the report's (each pair has its own)
  stats::VerdictPolicy policy;
  StatsName name = StatsName::kBenchmark;
  // Warn when a pair has fewer than kRecommendedMinRepetitions on a side, with the repetitions
  // power analysis asks for at the comparison's median noise.
  bool advise_repetitions = false;
};

// Pairs one metric's series of two sides by key (first of a key wins on each side) and judges
// them; warnings: the repetitions advice (when asked) and the count of series not compared.
// Callers put their own warnings first and check that something was compared.
Result<CompareReport> Compare(const std::string& base_source, std::span<const Series> base,
                              const std::string& contender_source,
                              std::span<const Series> contender, const CompareOptions& options);

// 1 when any benchmark regressed, else 0.
int ExitCode(const CompareReport& report);

}  // namespace perfwarden::judge
