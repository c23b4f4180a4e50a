// `perfgate compare`: judge a contender Google Benchmark result against a base result,
// offline, with the verdict policy of the gate (stats/verdict.h). Builds a report value;
// report_format.h renders it as text, Markdown or JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "runner/adapters/gbench_reader.h"
#include "stats/verdict.h"

namespace perfgate::compare {

struct CompareOptions {
  std::string metric = "real_time";    // real_time, cpu_time or a user counter
  std::optional<Direction> direction;  // overrides adapters::DefaultDirection(metric)
  std::string filter;                  // ECMAScript regex searched in benchmark names
  stats::VerdictPolicy policy;
};

struct SideInfo {
  std::string source;
  adapters::GbenchContext context;
  size_t benchmarks = 0;  // with the metric
  size_t min_repetitions = 0;
  size_t max_repetitions = 0;
  int64_t skipped = 0;  // errored or skipped repetitions
};

struct CompareReport {
  std::string metric;
  std::string unit;  // "ns", "1/s" or "" (counter)
  Direction direction = Direction::kLowerIsBetter;
  stats::VerdictPolicy policy;
  SideInfo base;
  SideInfo contender;
  stats::ComparisonVerdicts verdicts;
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_contender;
  std::vector<std::string> warnings;
};

// Pairs the benchmarks of both files by name and judges them. Errors (kInvalidArgument):
// bad options, a bad regex, the metric missing from a file, no benchmark in common.
Result<CompareReport> Compare(const adapters::GbenchFile& base,
                              const adapters::GbenchFile& contender, const CompareOptions& options);

// 1 when any benchmark regressed, else 0.
int ExitCode(const CompareReport& report);

// Parses "5%" (percent) or "0.05" (fraction); numbers >= 1 need the % sign.
Result<double> ParseThreshold(std::string_view text);

}  // namespace perfgate::compare
