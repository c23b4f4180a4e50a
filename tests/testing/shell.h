// SPDX-License-Identifier: Apache-2.0
// Running a shell command from a test and keeping its exit code and output (stdout and stderr
// together), for tests that drive perfwarden, git or the CI scripts as a user would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace perfwarden::testing {

struct ShellOutcome {
  int exit_code = -1;  // -1: it could not be run, or a signal ended it
  std::string output;
};

inline ShellOutcome RunShell(const std::string& command) {
  ShellOutcome out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.output.append(buffer, n);
  const int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace perfwarden::testing
