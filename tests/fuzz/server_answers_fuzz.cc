// SPDX-License-Identifier: Apache-2.0
// What the runner reads from a server (or from anything answering at its URL): verdicts,
// alerts and their pages, change points, error bodies, bisects, claimed steps and leases.
// A hostile or broken server must get an error, never a crash.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_input.h"
#include "wire/alert.h"
#include "wire/bisect.h"
#include "wire/error.h"
#include "wire/json_reader.h"
#include "wire/verdict.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  const std::string_view text = fuzz::AsText(data, size);
  fuzz::RequireNamedError(wire::DecodeVerdict(text), "DecodeVerdict");
  fuzz::RequireNamedError(wire::DecodeAlert(text), "DecodeAlert");
  fuzz::RequireNamedError(wire::DecodeAlertDetail(text), "DecodeAlertDetail");
  fuzz::RequireNamedError(wire::DecodeAlertPage(text), "DecodeAlertPage");
  fuzz::RequireNamedError(wire::DecodeAlertSummary(text), "DecodeAlertSummary");
  fuzz::RequireNamedError(wire::DecodeChangePoints(text), "DecodeChangePoints");
  fuzz::RequireNamedError(wire::DecodeErrorBody(text), "DecodeErrorBody");
  if (auto document = wire::ParseJsonDocument<nlohmann::json>(text, "answer"); document) {
    fuzz::RequireNamedError(wire::DecodeBisect(*document), "DecodeBisect");
    fuzz::RequireNamedError(wire::DecodeClaimedStep(*document), "DecodeClaimedStep");
    fuzz::RequireNamedError(wire::DecodeStepLease(*document), "DecodeStepLease");
  }
  return 0;
}
