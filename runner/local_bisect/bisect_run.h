// SPDX-License-Identifier: Apache-2.0
// `perfwarden bisect`, local mode: finds the commit of a range that made benchmarks slower, on
// this machine. bisect/driver.h decides what to measure; runner/local_bisect/bisect_probe.h
// builds and measures it. Every measurement is kept in a state file, so an interrupted bisect
// continues where it stopped (the driver replays the file's measurements, then goes on).
#pragma once

#include <string>
#include <vector>

#include "bisect/driver.h"
#include "bisect/report.h"
#include "config/runner_config.h"
#include "core/result.h"
#include "runner/git/git_repo.h"

namespace perfwarden::local_bisect {

struct BisectOptions {
  std::string good;  // revisions
  std::string bad;
  std::string suite;                    // "": the suite that has the benchmarks
  std::vector<std::string> benchmarks;  // at least one
  std::string metric;                   // "": real_time (gbench), wall_time (command)
  std::string build;                    // shell command in the probe's tree; "" for none
  double threshold = 0.05;
  int repetitions = 10;
  int max_repetitions = 80;  // doubling stops here
  bool first_parent = true;
  double alpha = 0.01;  // per comparison of a probe with an end
  // Post every commit measured to perfwarden.yaml's server (when it names one and a token is set),
  // as runs of branch "perfwarden-bisect".
  bool post = true;
  std::string state_file;  // "": <config dir>/.perfwarden/bisect-<good>-<bad>.json
};

bisect::SearchOptions SearchOptionsOf(const BisectOptions& options);

// The range of a bisect: the good end's commit, then the commits of good..bad in order (first
// parents only unless options.first_parent is false), the bad end last.
struct BisectRange {
  std::vector<git::CommitInfo> commits;
};
Result<BisectRange> ListBisectRange(const git::Repository& repo, const BisectOptions& options);

// Progress goes to stderr. Errors: kInvalidArgument for bad revisions or options, kNotFound for
// a benchmark or suite that the good end does not have, kUnavailable for a failing run.
Result<bisect::Report> RunBisect(const config::RunnerConfig& config, const BisectOptions& options);

}  // namespace perfwarden::local_bisect
