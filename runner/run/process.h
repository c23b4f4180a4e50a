// SPDX-License-Identifier: Apache-2.0
// Running a child process for the runner: argv without a shell, the runner's environment less
// its secrets (config/secret_env.h: the children are the pull request's builds and benchmarks)
// plus extra variables, working directory, a wall-clock timeout (the whole process group is
// killed), and its output either passed through to the runner's stderr (so a suite's own
// progress shows in the CI log) or kept in a file whose tail explains a failure.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::run {

struct ProcessOptions {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH when it has no '/'
  std::filesystem::path cwd;               // empty: the runner's
  std::map<std::string, std::string> env;  // added to (or replacing in) the runner's environment
  // Secret-looking variables of the runner's environment (HF_TOKEN) that the child inherits all
  // the same (a suite's pass_env); a credential (PERFWARDEN_TOKEN, GITHUB_TOKEN) never.
  std::vector<std::string> pass_env;
  std::chrono::milliseconds timeout{0};  // 0: none
  // Where stdout and stderr go: empty passes them through to the runner's stderr.
  std::filesystem::path output_file;
};

struct ProcessResult {
  int exit_code = 0;  // the exit status; 128 + N when killed by signal N
  bool timed_out = false;
  std::chrono::nanoseconds wall{0};  // from just before the spawn to the exit
};

// kNotFound when the program cannot be started (names it), kUnavailable on a system error.
// A child that runs and fails is not an error: see exit_code.
Result<ProcessResult> RunProcess(const ProcessOptions& options);

// The last `max_bytes` of a file (a failed child's output, for messages); "" when unreadable.
std::string FileTail(const std::filesystem::path& path, size_t max_bytes = 2000);
// A child's whole output (a training benchmark's JSON lines); "" when unreadable.
std::string FileText(const std::filesystem::path& path);

// "a b 'c d'": argv for messages, quoted as a POSIX shell would need.
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace perfwarden::run
