// SPDX-License-Identifier: Apache-2.0
// A verdict request body (POST .../runs/{id}/verdict): wire::ParseVerdictRequest, its rules'
// globs and thresholds validated. Accepted requests round-trip through EncodeVerdictRequest.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/roundtrip.h"
#include "wire/verdict_request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  const auto request = wire::ParseVerdictRequest(fuzz::AsText(data, size));
  fuzz::RequireNamedError(request, "ParseVerdictRequest");
  if (request) {
    fuzz::RequireRoundTrip(
        *request,
        [](const wire::VerdictRequest& r) { return wire::EncodeVerdictRequest(r).dump(); },
        [](const std::string& text) { return wire::ParseVerdictRequest(text); }, "verdict request");
  }
  return 0;
}
