// SPDX-License-Identifier: Apache-2.0
// Confirmation of regressions side by side, as Chromium's Pinpoint does: the baseline and the
// pull request were measured at different times, so a machine whose speed drifts (a shared CI
// VM, a noisy neighbour) can make an unchanged benchmark look slower. `perfwarden gate --confirm`
// re-measures the benchmarks the server called a REGRESSION against the verdict's baseline
// commit with the paired gate (paired_gate.h: the baseline built in a temporary tree, both
// sides interleaved in blocks on this host) and posts the measurement as an amendment of that
// verdict: the server replaces those rows with their paired judgement and stores the result as
// the run's verdict, so that what the gate prints is what GET .../verdict answers.
#pragma once

#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/client/project_client.h"
#include "runner/run/session.h"
#include "wire/verdict.h"
#include "wire/verdict_request.h"

namespace perfwarden::cli {

struct ConfirmReport {
  int checked = 0;                 // regressed benchmark metrics measured again
  int confirmed = 0;               // still a REGRESSION
  int withdrawn = 0;               // no longer a regression
  std::vector<std::string> lines;  // one per regressed metric, for the log
};

// What became of each REGRESSION row of `before` in the amended verdict `after`.
ConfirmReport DescribeConfirmation(const wire::Verdict& before, const wire::Verdict& after);

// Re-measures the regressed benchmarks of `verdict` side by side against its baseline commit,
// posts the measurement as an amendment of it, and replaces *verdict with the server's answer.
// Errors (no baseline commit; the baseline's export or build; a run that fails; the server)
// leave the verdict as it was; the caller reports them and keeps the regressions.
Result<ConfirmReport> ConfirmRegressions(const config::RunnerConfig& config,
                                         client::ProjectClient& server, const run::LastRun& last,
                                         const wire::VerdictRequest& parameters,
                                         wire::Verdict* verdict);

}  // namespace perfwarden::cli
