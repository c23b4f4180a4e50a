// SPDX-License-Identifier: Apache-2.0
#include "runner/cli/fork_gate.h"

#include <iostream>

#include "core/version.h"
#include "judge/paired_verdict.h"
#include "runner/cli/commands.h"
#include "runner/client/fork_artifact.h"
#include "runner/client/spool.h"

namespace perfwarden::cli {
namespace {

// The measurement `perfwarden run --paired` kept for the run, else one measured now.
Result<wire::PairedMeasurement> Measurement(const config::RunnerConfig& config,
                                            const PairedGateRequest& request) {
  std::string why;
  auto kept = KeptPairedRun(config, request.run_id, request.settings, request.parameters, &why);
  if (kept) {
    std::cerr
        << "perfwarden: taking the side-by-side measurement `perfwarden run --paired` made of "
        << "run " << request.run_id << ": nothing is measured again\n";
    return std::move(*kept);
  }
  if (!why.empty()) {
    std::cerr << "perfwarden: not taking the measurement `perfwarden run --paired` kept: " << why
              << "; measuring side by side again\n";
  }
  return MeasureForGate(config, request);
}

// The run as `perfwarden run --no-push` spooled it.
Result<wire::RunUpload> SpooledRun(const config::RunnerConfig& config, const std::string& run_id) {
  auto spool = client::Spool::Open(config.spool_dir);
  if (!spool) return tl::unexpected(spool.error());
  auto text = spool->Read(run_id);
  if (!text) {
    return InvalidArgument("run " + run_id + " is not in the spool " + config.spool_dir.string() +
                               " (posted already?): `perfwarden run --paired --no-push` keeps it "
                               "there for the artifact",
                           "artifact");
  }
  auto run = wire::DecodeRunUpload(*text);
  if (!run) {
    return InvalidArgument(
        "the spooled run " + run_id + " is unreadable: " + run.error().ToString(), "artifact");
  }
  return run;
}

}  // namespace

Result<wire::Verdict> JudgeHere(const wire::RunUpload& run,
                                const wire::PairedMeasurement& measurement) {
  auto verdict = judge::JudgeMeasurement(measurement);
  if (!verdict) return tl::unexpected(verdict.error());
  verdict->run_id = run.id;
  verdict->project = run.project;
  verdict->contender_run_ids = {run.id};
  verdict->commit = run.commit.sha;
  verdict->branch = run.branch;
  verdict->testbed = measurement.testbed.name;
  verdict->pr = run.ci.pr;
  verdict->baseline = wire::Baseline{
      measurement.baseline_commit, run.target_branch, measurement.testbed.name, {}, "paired", 0};
  if (measurement.parameters.threshold) {
    verdict->parameters.threshold = *measurement.parameters.threshold;
  }
  if (measurement.parameters.alpha) verdict->parameters.alpha = *measurement.parameters.alpha;
  verdict->parameters.rules = measurement.parameters.rules;
  if (!run.runner_version.empty()) verdict->runner_version = run.runner_version;
  return verdict;
}

int GateWithoutServer(const config::RunnerConfig& config, const PairedGateRequest& request,
                      const std::string& save, const std::string& artifact_dir,
                      const VerdictOutputs& outputs) {
  if (const std::string why = WhyNotPaired(config, {}); !why.empty()) {
    return ReportError(InvalidArgument("cannot measure side by side: " + why, "no-post").value());
  }
  if (!outputs.comment_file.empty()) {
    return ReportError(InvalidArgument("--comment-file does not apply to --no-post: the comment "
                                       "is rendered from the server's verdict (`perfwarden "
                                       "publish --comment-file`)",
                                       "comment-file")
                           .value());
  }
  // Before measuring: an artifact needs the spooled run.
  wire::RunUpload run;
  if (!artifact_dir.empty()) {
    auto spooled = SpooledRun(config, request.run_id);
    if (!spooled) return ReportError(spooled.error());
    run = std::move(*spooled);
  }
  auto measured = Measurement(config, request);
  if (!measured) return ReportError(measured.error());
  if (!save.empty()) {
    if (auto saved = SaveMeasurement(*measured, save); !saved) return ReportError(saved.error());
  }
  if (artifact_dir.empty()) {
    std::cerr << "perfwarden: the measurement is in " << save << "; the server judges and stores "
              << "it as run " << request.run_id << "'s verdict when it is posted to "
              << "/api/v1/projects/<project>/runs/" << request.run_id
              << "/verdict/paired (once the run itself is pushed)\n";
    return kExitPass;
  }
  auto verdict = JudgeHere(run, *measured);
  if (!verdict) return ReportError(verdict.error());
  client::Artifact artifact;
  artifact.run = std::move(run);
  artifact.measurement = std::move(*measured);
  artifact.verdict = *verdict;
  auto written = client::WriteArtifact(artifact_dir, artifact, std::string(Version()));
  if (!written) return ReportError(written.error());
  WriteVerdictOutputs(*verdict, config.server.project, outputs);
  std::cerr << "perfwarden: the artifact of run " << artifact.run.id << " is in " << artifact_dir
            << ": a trusted job posts it with `perfwarden publish " << artifact_dir
            << " --expect-commit " << artifact.run.commit.sha
            << "`; the verdict above was judged here, the server judges it again\n";
  return PairedVerdictExitCode(*verdict);
}

}  // namespace perfwarden::cli
