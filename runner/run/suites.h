// SPDX-License-Identifier: Apache-2.0
// Running the suites of perfwarden.yaml: a Google Benchmark binary with JSON output and
// repetitions (read back with the lossless reader: every repetition of real_time, cpu_time and
// each counter becomes a series), a command timed over N repetitions (metric wall_time, in
// seconds), or a training benchmark printing perfwarden's JSON lines (train_suite.h). Threshold
// rules may override a metric's direction.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/run/process.h"
#include "wire/run_upload.h"

namespace perfwarden::run {

struct SuiteOptions {
  int repetitions = 0;               // > 0: overrides the suite's
  std::set<std::string> benchmarks;  // non-empty: only these (gbench: an exact-name filter)
  std::filesystem::path work_dir;    // where JSON outputs and logs go (must exist)
  bool skip_build = false;
  // A gbench binary's console output to <work_dir>/<suite>.log instead of the terminal (the
  // paired gate runs it dozens of times); its tail is in the error when the binary fails.
  bool quiet = false;
};

struct SuiteOutcome {
  std::vector<wire::ResultSeries> series;
  std::string library_build_type;  // from Google Benchmark's context, "" for commands
  std::string compiler;            // what built the benchmark binary (run/binary_compiler.h), or ""
  std::vector<std::string> warnings;
};

using ProgressLine = std::function<void(const std::string&)>;

// Runs the suite's build command (sh -c, in the config's folder, with the suite's environment);
// nothing when it has none. kUnavailable naming the suite and the command when it fails.
Result<void> BuildSuite(const config::RunnerConfig& config, const config::Suite& suite,
                        const ProgressLine& progress);

// Builds (when the suite has a build command) and runs one suite. Errors name the suite, the
// command and end with the tail of its output; kUnavailable for a failed build or run.
Result<SuiteOutcome> RunSuite(const config::RunnerConfig& config, const config::Suite& suite,
                              const SuiteOptions& options, const ProgressLine& progress);

// How a command or training suite's command runs: in the config's folder, with the suite's
// environment and timeout, its output (stdout and stderr) to `log`.
ProcessOptions SuiteCommandProcess(const config::RunnerConfig& config, const config::Suite& suite,
                                   const std::filesystem::path& log);

// What went wrong with one run of a suite's command, as the error to return: it did not start,
// timed out or exited non-zero (the suite, the command, `which` run, e.g. "repetition 3", and
// the tail of its output in `log`); nullopt when it succeeded.
std::optional<Error> SuiteRunError(const config::Suite& suite, const Result<ProcessResult>& result,
                                   const std::filesystem::path& log, const std::string& which);

// --benchmark_filter that selects exactly these benchmark names (regex-escaped).
std::string ExactNameFilter(const std::set<std::string>& names);

}  // namespace perfwarden::run
