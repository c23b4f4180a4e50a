// SPDX-License-Identifier: Apache-2.0
// `perfwarden agent --testbed NAME [--repo PATH]`: the worker of remote bisects on a benchmark host
// (a GPU host, say); runner/local_bisect/agent.h does the work, here only the flags.
#include <unistd.h>

#include <memory>
#include <string>

#include "runner/cli/commands.h"
#include "runner/git/git_repo.h"
#include "runner/local_bisect/agent.h"
#include "runner/run/session.h"

namespace perfwarden::cli {
namespace {

std::string DefaultName() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] != '\0' ? host : "agent") + ":" + std::to_string(getpid());
}

int Run(local_bisect::AgentOptions& args) {
  if (args.name.empty()) args.name = DefaultName();
  if (args.config.empty()) args.config = args.repo + "/perfwarden.yaml";
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  if (auto ok = run::RequireServer(*config); !ok) return ReportError(ok.error());
  config->testbed = args.testbed;  // the runs it posts are of the testbed it serves
  auto repo = git::Repository::Open(args.repo);
  if (!repo) return ReportError(repo.error());
  auto client = run::OpenProjectClient(args.config);
  if (!client) return ReportError(client.error());
  auto served = local_bisect::ServeBisectSteps(args, std::move(*config), std::move(*repo),
                                               std::move(*client));
  if (!served) return ReportError(served.error());
  return kExitPass;
}

}  // namespace

void AddAgentCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<local_bisect::AgentOptions>();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "Work on remote bisects (`perfwarden bisect --remote --testbed NAME`) on this host: claims "
      "the testbed's queued steps from perfwarden.yaml's server (PERFWARDEN_TOKEN with the ingest "
      "scope), builds and measures their commits in temporary trees exported from --repo, and "
      "reports them. Runs until stopped (or --once, --exit-when-idle); a step whose agent dies "
      "is given to another agent when its lease runs out");
  cmd->add_option("--testbed", args->testbed, "The testbed this host is (as named by bisects)")
      ->required();
  cmd->add_option("--repo", args->repo, "A clone of the project's repository with the commits")
      ->capture_default_str();
  cmd->add_option("--config", args->config, "perfwarden.yaml to use (default: the repo's)");
  cmd->add_option("--name", args->name, "This agent's name (default host:pid)");
  cmd->add_option("--lease", args->lease_seconds,
                  "Seconds a claimed step stays this agent's without a renewal (renewed every "
                  "third of it)")
      ->check(CLI::Range(5, 3600))
      ->capture_default_str();
  cmd->add_option("--poll", args->poll_seconds, "Seconds between looks at an empty queue")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--build", args->build,
                  "Shell command that builds each checked-out commit on this host (used instead "
                  "of the bisect's --build)");
  cmd->add_flag("--trust-queued-build", args->trust_queued_build,
                "Run the build command a bisect was queued with (any holder of an ingest token "
                "can queue one: only on hosts where that is acceptable)");
  cmd->add_flag("--once", args->once, "Work on at most one step, then exit");
  cmd->add_option("--exit-when-idle", args->exit_when_idle,
                  "Exit after this many seconds without a step (0: never)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = Run(*args); });
}

}  // namespace perfwarden::cli
