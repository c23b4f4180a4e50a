// SPDX-License-Identifier: Apache-2.0
// Running PostgreSQL's programs (initdb, pg_ctl) for the embedded cluster: argv without a shell,
// as the cluster's system user when this process is root, output collected for the error that
// names a failure.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::store {

struct CommandOutput {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// The last 2000 bytes of `text` ("..." before them when cut), trailing blanks dropped.
std::string Tail(const std::string& text);
// argv joined by spaces, for messages.
std::string Join(const std::vector<std::string>& argv);

// Runs argv (no shell), stdin from /dev/null, in "/", and collects its output. The pipe is
// close-on-exec in this process so that concurrent spawns do not leak it into each other's
// children (a postmaster holding it would keep the read from ever ending).
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv);

// kUnavailable: the command, its exit status and the tail of its output.
tl::unexpected<Error> CommandFailed(const std::vector<std::string>& argv, const CommandOutput& out);

// Runs `program` of `bin_dir` with `args`, as `system_user` (runuser) when this process is root;
// `argv_out` receives the whole command line.
Result<CommandOutput> RunPg(const std::filesystem::path& bin_dir, const std::string& program,
                            std::vector<std::string> args, const std::string& system_user,
                            std::vector<std::string>* argv_out = nullptr);

}  // namespace perfwarden::store
