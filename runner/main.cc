// SPDX-License-Identifier: Apache-2.0
// perfwarden: the command-line runner. Verbs: compare, run, push, gate, analyze, alerts, bisect,
// agent, ab, publish (runner/cli/). Exit codes: 0 pass, 1 regression, 2 usage or input error, 3
// infrastructure failure.
#include <CLI/CLI.hpp>
#include <iostream>
#include <set>
#include <string>

#include "config/environment.h"
#include "core/version.h"
#include "runner/cli/commands.h"

int main(int argc, char** argv) {
  namespace cli = perfwarden::cli;
  // First, before any thread or child: the token (and any CI credential) leaves the environment
  // and stays in memory for the verbs that read it (config::ProcessEnvironment).
  perfwarden::config::HideCredentials();
  CLI::App app{
      "perfwarden: a CI performance-regression gate.\n"
      "Exit codes: 0 pass, 1 regression, 2 usage or input error, 3 infrastructure "
      "failure."};
  app.set_version_flag("--version", "perfwarden " + std::string(perfwarden::Version()));
  app.require_subcommand(1);
  int exit_code = cli::kExitUsage;
  cli::AddCompareCommand(app, &exit_code);
  cli::AddRunCommands(app, &exit_code);
  cli::AddGateCommand(app, &exit_code);
  cli::AddAnalyzeCommand(app, &exit_code);
  cli::AddAlertsCommand(app, &exit_code);
  cli::AddBisectCommand(app, &exit_code);
  cli::AddAgentCommand(app, &exit_code);
  cli::AddAbCommand(app, &exit_code);
  cli::AddPublishCommand(app, &exit_code);

  // The verbs are the subcommands registered above, so this list cannot drift from them.
  std::set<std::string> verbs;
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    verbs.insert(sub->get_name());
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  const std::string verb = argc > 1 ? argv[1] : "";
  if (!verb.empty() && verb[0] != '-' && verbs.count(verb) == 0) {
    std::cerr << "perfwarden: error: unknown verb '" << verb << "' (available: " << names
              << "; run perfwarden --help)\n";
    return cli::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return cli::kExitUsage;
  }
  return exit_code;
}
