// SPDX-License-Identifier: Apache-2.0
// server.yaml (config/server_config.cc): yaml-cpp's parse and the validation of every key and
// limit, over the defaults.
#include <cstddef>
#include <cstdint>

#include "config/server_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  fuzz::RequireNamedError(config::ParseServerConfig(fuzz::AsText(data, size), "server.yaml"),
                          "ParseServerConfig");
  return 0;
}
