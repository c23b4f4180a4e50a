// SPDX-License-Identifier: Apache-2.0
// Google Benchmark's JSON output as the runner reads it (runner/adapters/gbench_reader.cc): a
// benchmark binary's file is the runner's untrusted input.
#include <cstddef>
#include <cstdint>

#include "runner/adapters/gbench_reader.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  fuzz::RequireNamedError(adapters::ParseGbenchJson(fuzz::AsText(data, size), "fuzz.json"),
                          "ParseGbenchJson");
  return 0;
}
