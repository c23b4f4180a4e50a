// SPDX-License-Identifier: Apache-2.0
// `perfwarden agent`: the worker of remote bisects on a benchmark host (a GPU host, say). It claims
// its testbed's queued steps under a lease it renews while it measures (a dead agent's step is
// claimed again when the lease runs out), measures their commits side by side (bisect_probe.h),
// reports the measurements and posts the measured commits as runs of branch perfwarden-bisect.
#pragma once

#include <string>

#include "config/runner_config.h"
#include "core/result.h"
#include "runner/client/project_client.h"
#include "runner/git/git_repo.h"

namespace perfwarden::local_bisect {

struct AgentOptions {
  std::string testbed;
  std::string repo = ".";
  std::string config;
  std::string name;  // as the server shows it
  int lease_seconds = 60;
  double poll_seconds = 5;
  bool once = false;
  double exit_when_idle = 0;  // seconds; 0: never
  // The build command is a shell command: one queued by whoever holds an ingest token runs only
  // when the host's owner says so. Otherwise the agent builds with its own --build, or not at all.
  std::string build;
  bool trust_queued_build = false;
};

// Claims and works on the steps queued for options.testbed until --once or --exit-when-idle says
// stop (progress on stderr). `config` is perfwarden.yaml with its testbed set to the one served.
// Errors are the agent's own (the server unreachable, a refused claim); a step that cannot be
// measured here is reported to the server as failed instead.
Result<void> ServeBisectSteps(const AgentOptions& options, config::RunnerConfig config,
                              git::Repository repo, client::ProjectClient client);

}  // namespace perfwarden::local_bisect
