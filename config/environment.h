// The environment as both configuration readers see it: perfgate.yaml takes PERFGATE_TOKEN and
// PERFGATE_TESTBED from it, server.yaml's keys are overridden by PERFGATE_* variables. A lookup
// function rather than getenv, so that tests hand in their own variables.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace perfgate::config {

// Returns the value of an environment variable, nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
// std::getenv.
EnvLookup ProcessEnvironment();

}  // namespace perfgate::config
