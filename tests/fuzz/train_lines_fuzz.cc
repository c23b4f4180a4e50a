// SPDX-License-Identifier: Apache-2.0
// A training command's output in perfwarden's JSON-lines protocol (runner/adapters/train_lines.cc;
// docs/gpu.md): any bytes a command prints.
#include <cstddef>
#include <cstdint>

#include "runner/adapters/train_lines.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  const auto output = adapters::ReadTrainLines(fuzz::AsText(data, size), "fuzz.log");
  fuzz::RequireNamedError(output, "ReadTrainLines");
  if (output) (void)output->WarmupSteps();
  return 0;
}
