// SPDX-License-Identifier: Apache-2.0
// The environment as both configuration readers see it: perfwarden.yaml takes PERFWARDEN_TOKEN and
// PERFWARDEN_TESTBED from it, server.yaml's keys are overridden by PERFWARDEN_* variables. A lookup
// function rather than getenv, so that tests hand in their own variables, and so that the runner
// can keep its token in memory once it has taken it out of its environment (HideCredentials).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace perfwarden::config {

// Returns the value of an environment variable, nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
// std::getenv, and the credentials HideCredentials took out of the environment.
EnvLookup ProcessEnvironment();

// Moves every credential (config/secret_env.h: PERFWARDEN_TOKEN, GITHUB_TOKEN, CI_JOB_TOKEN, ...)
// out of the process environment into memory, its value overwritten where the kernel shows it
// (/proc/<pid>/environ): no child process, however started (a suite, libgit2, a shell), sees
// one, and ProcessEnvironment() still answers them. For main, before any thread starts.
// Returns how many it hid.
int HideCredentials();

}  // namespace perfwarden::config
