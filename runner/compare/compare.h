// SPDX-License-Identifier: Apache-2.0
// `perfwarden compare`: judge a contender Google Benchmark result against a base result,
// offline, with the verdict policy of the gate (judge/compare_report.h pairs and judges), and
// warn about what the files say of the hosts they were measured on. report_format.h renders
// the report as text or Markdown, judge/compare_json.h as JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "judge/compare_report.h"
#include "runner/adapters/gbench_reader.h"
#include "stats/verdict.h"

namespace perfwarden::compare {

struct CompareOptions {
  std::string metric = "real_time";    // real_time, cpu_time or a user counter
  std::optional<Direction> direction;  // overrides adapters::DefaultDirection(metric)
  std::string filter;                  // ECMAScript regex searched in benchmark names
  stats::VerdictPolicy policy;
};

// Pairs the benchmarks of both files by name and judges them. Errors (kInvalidArgument):
// bad options, a bad regex, the metric missing from a file, no benchmark in common.
Result<judge::CompareReport> Compare(const adapters::GbenchFile& base,
                                     const adapters::GbenchFile& contender,
                                     const CompareOptions& options);

}  // namespace perfwarden::compare
