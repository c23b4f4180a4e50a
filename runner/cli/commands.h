// SPDX-License-Identifier: Apache-2.0
// The `perfwarden` verbs. Each Add*Command registers a CLI11 subcommand whose callback stores the
// process exit code in *exit_code: 0 pass, 1 regression, 2 usage or configuration error,
// 3 infrastructure failure (server unreachable after retries; results stay spooled).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "core/result.h"

namespace perfwarden::cli {

inline constexpr int kExitPass = 0;
inline constexpr int kExitRegression = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInfrastructure = 3;

void AddCompareCommand(CLI::App& app, int* exit_code);  // compare_command.cc
void AddRunCommands(CLI::App& app, int* exit_code);     // run_command.cc: run, push
void AddGateCommand(CLI::App& app, int* exit_code);     // gate_command.cc
void AddAnalyzeCommand(CLI::App& app, int* exit_code);  // analyze_command.cc
void AddAlertsCommand(CLI::App& app, int* exit_code);   // alerts_command.cc
void AddBisectCommand(CLI::App& app, int* exit_code);   // bisect_command.cc
void AddAgentCommand(CLI::App& app, int* exit_code);    // agent_command.cc
void AddAbCommand(CLI::App& app, int* exit_code);       // ab_command.cc
void AddPublishCommand(CLI::App& app, int* exit_code);  // publish_command.cc

// "perfwarden: error: <message>" on stderr; the exit code an Error maps to (kUnavailable: 3,
// else 2).
int ReportError(const Error& error);

}  // namespace perfwarden::cli
