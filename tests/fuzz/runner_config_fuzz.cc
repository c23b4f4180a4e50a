// SPDX-License-Identifier: Apache-2.0
// perfwarden.yaml (config/runner_config.cc): yaml-cpp's parse and perfwarden's validation of every
// key. ${VAR} references see an empty environment; relative paths resolve against a directory
// that does not exist, so nothing outside the input is read.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "config/runner_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  const config::EnvLookup no_environment = [](std::string_view) -> std::optional<std::string> {
    return std::nullopt;
  };
  fuzz::RequireNamedError(config::ParseRunnerConfig(fuzz::AsText(data, size), "perfwarden.yaml",
                                                    "/nonexistent/perfwarden-fuzz", no_environment),
                          "ParseRunnerConfig");
  return 0;
}
