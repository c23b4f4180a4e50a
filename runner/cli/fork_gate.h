// SPDX-License-Identifier: Apache-2.0
// `perfwarden gate --paired --no-post`: the paired gate of a job without the server — a host that
// cannot reach it (--save-measurement FILE, posted later), or the untrusted job of a fork's pull
// request (--artifact DIR: the run, its paired measurement, the verdict judged here and a
// manifest, which the trusted job verifies and posts with `perfwarden publish`, publish_command.cc;
// docs/ci-forks.md).
#pragma once

#include <string>

#include "config/runner_config.h"
#include "runner/cli/paired_gate.h"
#include "runner/cli/verdict_output.h"
#include "wire/paired.h"
#include "wire/run_upload.h"
#include "wire/verdict.h"

namespace perfwarden::cli {

// Takes what `perfwarden run --paired` measured of the run (else measures side by side now),
// writes it to `save` when not empty and, with `artifact_dir`, writes the artifact of the
// spooled run and prints (and writes per `outputs`) the verdict judged here, whose outcome is
// the exit code as `perfwarden gate`'s: 0 pass, 1 regression, 3 a noisy environment. Without an
// artifact: 0 once the measurement is saved. 2: a usage error (the run is not spooled, the
// suites cannot be measured side by side, --comment-file); 3: a file that cannot be written.
int GateWithoutServer(const config::RunnerConfig& config, const PairedGateRequest& request,
                      const std::string& save, const std::string& artifact_dir,
                      const VerdictOutputs& outputs);

// The verdict of `measurement` judged here (judge/paired_verdict.h, as the server judges it),
// with the run's commit, branch, pull request, testbed and baseline filled in as the server
// fills them. kInvalidArgument when the judge refuses the measurement.
Result<wire::Verdict> JudgeHere(const wire::RunUpload& run,
                                const wire::PairedMeasurement& measurement);

}  // namespace perfwarden::cli
