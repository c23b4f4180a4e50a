// `perfgate bisect`, local mode: finds the commit of a range that made benchmarks slower, on
// this machine. Each probe's commit is exported into a temporary tree (libgit2; the user's
// working tree is never touched), built with --build (a failing build skips the commit, as
// `git bisect skip`), and its suite run from that commit's perfgate.yaml; runner/bisect judges it
// against the good and the bad end and chooses the next probe. Everything measured is kept in a
// state file, so an interrupted bisect continues where it stopped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/bisect/decide.h"

namespace perfgate::cli {

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
  // Post every commit measured to perfgate.yaml's server (when it names one and a token is set),
  // as runs of branch "perfgate-bisect".
  bool post = true;
  std::string state_file;  // "": <config dir>/.perfgate/bisect-<good>-<bad>.json
  int max_culprits = 3;    // steps looked for when one explains only part of the change
  // While the culprits found explain less than this share of the change between the ends, the
  // sides of the last one are checked for another step.
  double explained_share = 0.9;
};

struct ProbeRecord {
  std::size_t position = 0;  // 0 the good end, commits in order, the bad end last
  std::string sha;
  std::string subject;
  int n = 0;            // repetitions measured (of the first benchmark)
  double median = 0;    // of the first benchmark
  std::string verdict;  // good, bad, skip, unknown
  std::string reason;
};

struct Culprit {
  std::string sha;
  std::string author;
  std::string subject;
  bool exact = true;                    // false: one of `candidates` (the others were skipped)
  std::vector<std::string> candidates;  // shas in (last good, first bad] when not exact
  double magnitude = 0;                 // median(first bad) / median(last good) - 1
  double ci_low = 0, ci_high = 0;       // 95% bootstrap
  double share = 1;                     // magnitude / the ends' change
};

struct BisectReport {
  std::string good_sha, bad_sha;
  std::string suite, metric;
  std::vector<std::string> benchmarks;
  std::size_t commits = 0;  // in (good, bad]
  bisect::EndpointCheck endpoints;
  std::vector<Culprit> culprits;
  std::vector<ProbeRecord> probes;  // in the order they were decided
  int posted = 0;                   // commits posted to the server this session
  int builds = 0;  // builds and suite runs, this session and earlier ones (the state file)
  int runs = 0;
  std::size_t expected_probes = 0;  // ceil(log2(commits))
  bool resumed = false;
  std::vector<std::string> warnings;
};

// Progress goes to stderr. Errors: kInvalidArgument for bad revisions or options, kNotFound for
// a benchmark or suite that the good end does not have, kUnavailable for a failing run.
Result<BisectReport> RunBisect(const config::RunnerConfig& config, const BisectOptions& options);

}  // namespace perfgate::cli
