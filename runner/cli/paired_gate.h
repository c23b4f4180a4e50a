// SPDX-License-Identifier: Apache-2.0
// The paired gate: `perfwarden gate --paired` (or `gate: {mode: paired}`), a run whose metrics
// moved together (environment_shift) and `--confirm` all measure the baseline commit and this
// build interleaved on this host (runner/run/paired_session.h), post the measurement, and take
// the server's verdict of it (POST .../verdict/paired): the server judges it with the one paired
// judge and stores it as the run's verdict, so the gate's output, GET .../verdict, the dashboard
// and the PR comment agree. docs/statistics.md ("Paired verdict") and docs/ci.md explain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/client/project_client.h"
#include "runner/run/paired_measure.h"
#include "runner/run/session.h"
#include "wire/verdict.h"
#include "wire/verdict_request.h"

namespace perfwarden::cli {

// Why the suites of `gated` (every suite when empty) cannot be measured side by side; "" when
// they can. A Google Benchmark suite needs a build command and a binary inside the repository
// (else the baseline would run this build's binary); command and training suites run in the
// baseline's tree, with its scripts.
std::string WhyNotPaired(const config::RunnerConfig& config, const run::BenchmarkSelection& gated);

// The commit the pull request is measured against: the run's merge-base with its target branch
// (as `perfwarden run` recorded it, else git's); for a run of the target branch itself, its
// commit's first parent. Errors name what git could not resolve.
Result<std::string> PairedBaselineCommit(const config::RunnerConfig& config,
                                         const run::LastRun& last);

struct PairedGateRequest {
  std::string run_id;
  run::LastRun last;              // the run's record (merge-base, testbed); may be partial
  run::BenchmarkSelection gated;  // suite -> benchmarks; empty: every suite, every benchmark
  // --confirm: the id of the run's newest verdict whose (regressed) rows are re-measured.
  std::optional<int64_t> amends;
  std::string baseline_commit;  // "" : PairedBaselineCommit
  config::GateSettings settings;
  wire::VerdictRequest parameters;  // thresholds, alpha, rules
};

// What went wrong, and where: measuring (the baseline's export or build, a run of either side:
// the caller falls back to the server's unpaired verdict) or posting (the server: exit 3).
struct PairedGateError {
  bool measuring = false;
  Error error;
};

// Measures side by side (progress on stderr: block k of n, the metrics still undecided) and
// returns the measurement as the server takes it, `amends` set from the request.
Result<wire::PairedMeasurement> MeasureForGate(const config::RunnerConfig& config,
                                               const PairedGateRequest& request);

// Measures, posts the measurement and returns the server's verdict of it. `save`, when not
// empty, is where the measurement is written (JSON, as posted) before it is posted.
tl::expected<wire::Verdict, PairedGateError> GatePaired(const config::RunnerConfig& config,
                                                        client::ProjectClient& server,
                                                        const PairedGateRequest& request,
                                                        const std::string& save = "");

// Writes the measurement (as posted) to `path`; kUnavailable naming the path when it cannot.
Result<void> SaveMeasurement(const wire::PairedMeasurement& measurement, const std::string& path);

// The thresholds and alpha of perfwarden.yaml as the verdict request both gates send.
wire::VerdictRequest GateParameters(const config::RunnerConfig& config);

// --- The head measured once (`perfwarden run --paired`) ------------------------------------------
// A pull-request job that measures its build side by side with the merge-base need not measure
// it again for the run: the run's series are this build's side of the paired measurement (every
// repetition of every block, in measuring order), and the measurement is kept for the run, so
// that `perfwarden gate` posts it instead of measuring both sides again.

// This build's side of the measurement as a run's series.
std::vector<wire::ResultSeries> HeadSeries(const wire::PairedMeasurement& measurement);

// Keeps the measurement for run `run_id` (.perfwarden/paired-run.json next to the spool).
Result<void> KeepPairedRun(const config::RunnerConfig& config, const std::string& run_id,
                           const wire::PairedMeasurement& measurement);

// Why `measurement` is not what a gate with these settings and parameters would measure (its
// blocks, looks, test or alpha spending; its thresholds and alpha); "" when it is.
std::string WhyNotMeasuredWith(const wire::PairedMeasurement& measurement,
                               const config::GateSettings& settings,
                               const wire::VerdictRequest& parameters);

// The measurement kept for run `run_id`, when one is and it was measured with these settings
// and parameters (what `perfwarden gate` would measure with); else nullopt, with why in *why
// ("" when none was kept for the run).
std::optional<wire::PairedMeasurement> KeptPairedRun(const config::RunnerConfig& config,
                                                     const std::string& run_id,
                                                     const config::GateSettings& settings,
                                                     const wire::VerdictRequest& parameters,
                                                     std::string* why);

}  // namespace perfwarden::cli
