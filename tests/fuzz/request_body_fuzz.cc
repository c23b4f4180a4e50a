// SPDX-License-Identifier: Apache-2.0
// Every other JSON request body: the server reads projects, tokens, PATCH alert, bisects and
// their steps through wire::ParseCheckedJson with the server's limits (server/api/json_util.cc:
// depth 64, 100,000 values), then through their decoders; the bisect bodies' decoders live in
// wire/ and are run here on every parsed object, and the paired measurement (POST
// .../verdict/paired) through its own bounded reader. What is accepted round-trips.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/roundtrip.h"
#include "wire/bisect.h"
#include "wire/json_check.h"
#include "wire/paired.h"

namespace {

using namespace perfwarden;
using nlohmann::json;

template <typename T, typename Decode, typename Encode>
void DecodeObject(const json& body, Decode decode, Encode encode, const char* what) {
  const Result<T> value = decode(body);
  fuzz::RequireNamedError(value, what);
  if (value) {
    fuzz::RequireRoundTrip(*value, encode, decode, what);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::AsText(data, size);
  wire::JsonLimits limits;
  limits.max_depth = 64;
  limits.max_elements = 100'000;
  const auto body = wire::ParseCheckedJson(text, limits);
  fuzz::RequireNamedError(body, "ParseCheckedJson");
  if (body && body->is_object()) {
    (void)wire::DecodeNewBisect(*body);
    DecodeObject<wire::RemoteBisectRequest>(*body, wire::DecodeRemoteBisectRequest,
                                            wire::EncodeRemoteBisectRequest, "remote bisect");
    DecodeObject<wire::BisectReportUpload>(*body, wire::DecodeBisectReportUpload,
                                           wire::EncodeBisectReportUpload, "bisect report");
    DecodeObject<wire::StepClaimRequest>(*body, wire::DecodeStepClaimRequest,
                                         wire::EncodeStepClaimRequest, "step claim");
    (void)wire::DecodeStepHeartbeat(*body);
    (void)wire::DecodeStepReport(*body);
  }
  const auto measurement = wire::DecodePairedMeasurement(text);
  fuzz::RequireNamedError(measurement, "DecodePairedMeasurement");
  if (measurement) {
    fuzz::RequireRoundTrip(
        *measurement,
        [](const wire::PairedMeasurement& m) { return wire::EncodePairedMeasurement(m); },
        [](const std::string& t) { return wire::DecodePairedMeasurement(t); },
        "paired measurement");
  }
  return 0;
}
