// SPDX-License-Identifier: Apache-2.0
// The baseline commit of a side-by-side measurement (`perfwarden gate --paired`, `--confirm`),
// exported into a temporary tree with libgit2 (the user's HEAD, index and working tree are not
// touched), with that commit's own perfwarden.yaml, and its suites built with that commit's own
// build commands. Removed with everything in it when the object goes.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/run/baseline_cache.h"
#include "runner/run/suites.h"
#include "runner/run/temp_dir.h"

namespace perfwarden::run {

class BaselineTree {
 public:
  // Exports `commit` of the repository holding head.base_dir under head.spool_dir's parent,
  // loads the perfwarden.yaml at the same place in that tree, and runs the build command of each
  // suite in `suites` there. A command or training suite runs in the baseline tree (its scripts
  // are the baseline's), so it needs no build command; a Google Benchmark binary inside the
  // repository must be in the baseline tree once built, while one outside it runs for both sides
  // with each commit's settings (env, args). Errors say which step failed: the export, the
  // baseline's perfwarden.yaml, a suite missing from it (kNotFound), a build that fails
  // (kUnavailable, naming the suite and the command), a binary missing from the baseline tree
  // (kInvalidArgument). With `cache` enabled (baseline_cache.h), a tree built before with the same
  // key is restored instead of running the build commands, and a tree built here is stored; the
  // cache failing to store is a warning line, never an error.
  static Result<BaselineTree> Prepare(const config::RunnerConfig& head, const std::string& commit,
                                      const std::set<std::string>& suites,
                                      const ProgressLine& progress,
                                      const BaselineCacheSettings& cache = {});

  const std::string& commit() const { return commit_; }
  const config::RunnerConfig& config() const { return *config_; }
  // A scratch directory inside the tree for one side's outputs ("work-base", "work-head"),
  // created on first use.
  std::filesystem::path WorkDir(const std::string& name) const;

 private:
  BaselineTree() = default;
  std::string commit_;
  std::unique_ptr<TempDir> tree_;
  std::unique_ptr<config::RunnerConfig> config_;
};

}  // namespace perfwarden::run
