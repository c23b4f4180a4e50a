// SPDX-License-Identifier: Apache-2.0
// A run upload body (POST /api/v1/projects/{p}/runs): wire::DecodeRunUpload, the server's
// bounded reader for the largest body it takes. Accepted runs round-trip through their
// canonical JSON (what the server stores and returns).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/roundtrip.h"
#include "wire/run_upload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  const auto run = wire::DecodeRunUpload(fuzz::AsText(data, size));
  fuzz::RequireNamedError(run, "DecodeRunUpload");
  if (run) {
    fuzz::RequireRoundTrip(
        *run, [](const wire::RunUpload& r) { return wire::EncodeRunUpload(r); },
        [](const std::string& text) { return wire::DecodeRunUpload(text); }, "run upload");
  }
  return 0;
}
