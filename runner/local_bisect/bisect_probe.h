// SPDX-License-Identifier: Apache-2.0
// Builds and measures commits of a repository for `perfwarden bisect` (local mode) and
// `perfwarden agent` (remote mode): each commit is exported into a temporary tree (libgit2; the
// working tree is never touched), built once with the build command (a failing build skips the
// commit, as `git bisect skip`), and its suite run from that commit's perfwarden.yaml. One
// measurement runs its commits interleaved a few repetitions at a time, so that all of them see
// the same machine.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bisect/driver.h"
#include "config/runner_config.h"
#include "core/result.h"
#include "runner/git/git_repo.h"
#include "wire/run_upload.h"

namespace perfwarden::local_bisect {

struct ProbeSpec {
  std::vector<std::string> benchmarks;  // at least one; the first decides
  std::string suite;                    // "": the suite that has the benchmarks
  std::string metric;                   // "": real_time (gbench), wall_time (command)
  std::string build;                    // shell command in the probe's tree; "" for none
};

class Prober {
 public:
  // `config` is the perfwarden.yaml of `repo`'s working tree (it says where perfwarden.yaml sits in
  // every commit, and the metric's direction); trees go under `root`.
  Prober(const config::RunnerConfig& config, ProbeSpec spec, const git::Repository& repo,
         std::filesystem::path root);

  // Measures `commits` side by side, `repetitions` each, interleaved. A commit that does not
  // build or run is a skipped result (not an error); errors are for the machine (libgit2, a
  // process that cannot start).
  Result<bisect::Measurement> Measure(const std::vector<git::CommitInfo>& commits, int repetitions);

  int builds() const { return builds_; }
  int runs() const { return runs_; }

  // The commits measured since the last call, with the series of every benchmark (for
  // posting), by sha.
  struct Measured {
    git::CommitInfo commit;
    std::map<std::string, wire::ResultSeries> series;  // by benchmark
  };
  std::map<std::string, Measured> TakeMeasured() { return std::exchange(measured_, {}); }

 private:
  struct Tree {
    bool skipped = false;
    std::string note;
  };
  // Adds `repetitions` samples of `commit` to `out`; marks the tree skipped when it fails.
  Result<void> MeasureOnce(const git::CommitInfo& commit, int repetitions, Tree& tree,
                           std::vector<double>& out);
  const config::Suite* FindSuite(const config::RunnerConfig& config) const;

  const config::RunnerConfig& config_;
  ProbeSpec spec_;
  const git::Repository& repo_;
  std::filesystem::path root_;
  std::filesystem::path relative_;
  std::filesystem::path config_name_;
  std::map<std::string, Tree> trees_;  // by sha: exported (and built) this session
  std::map<std::string, Measured> measured_;
  std::string suite_name_;
  std::string metric_;
  int builds_ = 0;
  int runs_ = 0;
};

// Posts what a Prober measured (TakeMeasured) as runs of branch "perfwarden-bisect" (not a tracked
// branch, so the history of main is not reordered) to perfwarden.yaml's server, spooled first so
// that nothing is lost when the server is away (`perfwarden push` sends it later). Returns how many
// were posted; adds a warning when they stay in the spool. Nothing happens without a server or a
// token.
int PostMeasured(const config::RunnerConfig& config,
                 const std::map<std::string, Prober::Measured>& measured,
                 std::vector<std::string>* warnings);

}  // namespace perfwarden::local_bisect
