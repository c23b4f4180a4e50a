// SPDX-License-Identifier: Apache-2.0
// `perfwarden publish DIR`: the trusted stage of a fork's pull request (docs/ci-forks.md). The
// untrusted job measured without a token and left an artifact (`perfwarden gate --no-post
// --artifact DIR`); this verifies it (client::ReadArtifact: hashes, sizes, the strict wire
// decoders, the event's head commit and pull request, perfwarden.yaml's project, gate settings and
// thresholds), posts the run and its paired measurement with PERFWARDEN_TOKEN (an ingest-pr token),
// and renders the server's verdict with the runner's own renderers. Nothing in the artifact is
// run, and none of its text is copied into the comment but through the renderer.
#include <iostream>
#include <memory>

#include "runner/cli/commands.h"
#include "runner/cli/paired_gate.h"
#include "runner/cli/verdict_output.h"
#include "runner/client/fork_artifact.h"
#include "runner/client/project_client.h"
#include "runner/run/session.h"
#include "wire/validate.h"

namespace perfwarden::cli {
namespace {

struct PublishArgs {
  std::string dir;
  std::string config;
  std::string expect_commit;
  int64_t expect_pr = 0;  // 0: not checked
  VerdictOutputs outputs;
};

// A refusal of the server, with what a 403 means here.
int ReportServerError(const Error& error, const client::Artifact& artifact) {
  if (error.code != ErrorCode::kPermissionDenied) return ReportError(error);
  Error explained = error;
  explained.message += "; run " + artifact.run.id + " is of branch '" + artifact.run.branch +
                       "': an ingest-pr token posts runs and verdicts of branches the project "
                       "does not protect only (its protected_branches, by default the server's "
                       "history branches), and a token of another project or scope posts none";
  return ReportError(explained);
}

int Publish(const PublishArgs& args) {
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  if (auto ok = run::RequireServer(*config); !ok) return ReportError(ok.error());
  if (!wire::IsSha(args.expect_commit)) {
    return ReportError(InvalidArgument("--expect-commit must be a commit's 40 hex digits (the "
                                       "CI event's head commit), got '" +
                                           args.expect_commit + "'",
                                       "expect-commit")
                           .value());
  }
  client::ArtifactExpectations expect;
  expect.project = config->server.project;
  expect.commit = args.expect_commit;
  if (args.expect_pr > 0) expect.pr = args.expect_pr;
  expect.refused_branches = {config->target_branch};
  auto artifact = client::ReadArtifact(args.dir, expect);
  if (!artifact) return ReportError(artifact.error());
  // Judged with this checkout's perfwarden.yaml (the target branch's), not the pull request's.
  if (const std::string why =
          WhyNotMeasuredWith(artifact->measurement, config->gate, GateParameters(*config));
      !why.empty()) {
    return ReportError(InvalidArgument("the artifact is refused: its paired measurement does not "
                                       "fit perfwarden.yaml's gate settings and thresholds: " +
                                           why,
                                       "artifact")
                           .value());
  }
  std::cerr << "perfwarden: artifact verified: run " << artifact->run.id << " of "
            << config->server.project << ", commit " << artifact->run.commit.sha.substr(0, 12)
            << ", branch '" << artifact->run.branch << "'"
            << (artifact->run.ci.pr ? ", pull request #" + std::to_string(*artifact->run.ci.pr)
                                    : std::string())
            << "\n";

  auto server =
      client::ProjectClient::Open(config->server.url, config->server.project, config->server.token);
  if (!server) return ReportError(server.error());
  // What was decoded, encoded again: only what the decoder accepted reaches the server.
  auto posted = server->Call("POST", "/runs", wire::EncodeRunUpload(artifact->run));
  if (!posted) return ReportServerError(posted.error(), *artifact);
  auto verdict = server->PostPairedVerdict(artifact->run.id, artifact->measurement);
  if (!verdict) return ReportServerError(verdict.error(), *artifact);
  if (verdict->outcome != artifact->verdict.outcome) {
    std::cerr << "perfwarden: warning: the server's verdict is "
              << wire::OutcomeName(verdict->outcome) << ", the artifact's (judged where it was "
              << "measured) " << wire::OutcomeName(artifact->verdict.outcome)
              << "; the server's stands\n";
  }
  WriteVerdictOutputs(*verdict, config->server.project, args.outputs);
  return PairedVerdictExitCode(*verdict);
}

}  // namespace

void AddPublishCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PublishArgs>();
  CLI::App* publish = app.add_subcommand(
      "publish",
      "Verify the artifact of a fork's pull request (`perfwarden gate --paired --no-post "
      "--artifact DIR`, made without a token) and post its run and paired measurement with "
      "PERFWARDEN_TOKEN (an ingest-pr token); print and write the server's verdict as `perfwarden "
      "gate` does. Runs nothing from the artifact. Exit codes: 0 pass, 1 regression, 2 usage "
      "error or an artifact refused, 3 server unreachable or a noisy environment");
  publish->add_option("DIR", args->dir, "The artifact's directory")->required();
  publish->add_option("--config", args->config,
                      "perfwarden.yaml to use: the target branch's, never the pull request's");
  publish
      ->add_option("--expect-commit", args->expect_commit,
                   "The head commit the CI event names (GitHub: "
                   "github.event.workflow_run.head_sha); the run must be of it")
      ->required();
  publish
      ->add_option("--expect-pr", args->expect_pr,
                   "The pull request the CI event names; the run must be of it")
      ->check(CLI::PositiveNumber);
  AddVerdictOutputOptions(publish, &args->outputs);
  publish->callback([args, exit_code]() { *exit_code = Publish(*args); });
}

}  // namespace perfwarden::cli
