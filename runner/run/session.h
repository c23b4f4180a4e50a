// SPDX-License-Identifier: Apache-2.0
// What the verbs that measure or reach the server share: loading perfwarden.yaml (and opening the
// project client it names), measuring suites into a spooled upload (the spool is written before
// anything is posted, so no result is lost), the last-run record that lets `gate` find the run,
// and pushing the spool.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/client/project_client.h"
#include "runner/client/uploader.h"
#include "wire/run_upload.h"

namespace perfwarden::run {

// --config, else $PERFWARDEN_CONFIG, else ./perfwarden.yaml.
Result<config::RunnerConfig> LoadConfig(const std::string& path);

struct MeasureRequest {
  std::vector<std::string> suites;  // empty: all
  int repetitions = 0;              // > 0: overrides every suite's
  // Non-empty: only these benchmarks of these suites (a rerun of inconclusive ones).
  std::map<std::string, std::set<std::string>> only;
  std::string branch;
  std::string target_branch;
  bool skip_build = false;
  // Record the upload as the last run (`perfwarden gate` judges it); a rerun of some benchmarks
  // is pooled with the run it completes instead, so it does not replace it.
  bool record_last_run = true;
  // Non-null: the suites were measured already and these are the run's series (`perfwarden run
  // --paired`: this build's side of the paired measurement); no suite runs again.
  const std::vector<wire::ResultSeries>* measured = nullptr;
};

struct Measured {
  wire::RunUpload upload;
  std::vector<std::string> warnings;
};

// Runs the suites (progress on stderr), builds the upload, writes it to the spool and records it
// as the last run. Errors name the suite or the git problem.
Result<Measured> MeasureAndSpool(const config::RunnerConfig& config, const MeasureRequest& request);

// The last run `perfwarden run` spooled for this config ({"run_id", "project", ...}).
struct LastRun {
  std::string run_id;
  std::string project;
  std::string commit;
  std::string branch;
  // What a paired gate needs of the run (absent in records older than it: empty).
  std::string target_branch;
  std::string merge_base;  // "" for a run of the target branch, or when there was none
  wire::Testbed testbed;   // name and fingerprint, as uploaded
};
Result<LastRun> ReadLastRun(const config::RunnerConfig& config);

// Posts everything in the spool (progress on stderr). kUnavailable: the server could not be
// reached after retries and the results stay spooled.
Result<client::PushReport> PushSpool(const config::RunnerConfig& config);

// The server URL and token, or kInvalidArgument saying what to set.
Result<void> RequireServer(const config::RunnerConfig& config);

// Loads perfwarden.yaml (as LoadConfig), requires the server settings, and opens the client of the
// project it names.
Result<client::ProjectClient> OpenProjectClient(const std::string& config_path);

}  // namespace perfwarden::run
