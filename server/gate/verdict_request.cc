// SPDX-License-Identifier: Apache-2.0
// The verdict request between its wire form (wire/verdict_request.h) and the policy the
// statistics judge with; the stored parameters are the same object, so that a replay judges
// exactly as the original did.
#include "server/gate/verdict.h"

namespace perfwarden::server::gate {

Result<VerdictRequest> DecodeParameters(const nlohmann::json& parameters) {
  auto decoded = wire::DecodeVerdictRequest(parameters);
  if (!decoded) return tl::unexpected(decoded.error());
  VerdictRequest request;
  if (decoded->threshold) request.policy.threshold = *decoded->threshold;
  if (decoded->alpha) request.policy.alpha = *decoded->alpha;
  if (decoded->test) {
    auto test = stats::ParseVerdictTest(*decoded->test);
    if (!test) return InvalidArgument("must be utest, welch or welch-log", "test");
    request.policy.test = *test;
  }
  request.rules = std::move(decoded->rules);
  request.contender_runs = std::move(decoded->contender_runs);
  return request;
}

wire::VerdictRequest WireParameters(const VerdictRequest& request) {
  const stats::VerdictPolicy& p = request.policy;
  wire::VerdictRequest parameters;
  parameters.threshold = p.threshold;
  parameters.alpha = p.alpha;
  parameters.test = std::string(stats::VerdictTestName(p.test));
  parameters.rules = request.rules;
  parameters.correction = "holm";
  parameters.confidence = p.confidence;
  parameters.bootstrap_resamples = p.bootstrap_resamples;
  parameters.seed = p.seed;
  parameters.power = p.power;
  return parameters;
}

nlohmann::json EncodeParameters(const VerdictRequest& request) {
  return wire::EncodeVerdictRequest(WireParameters(request));
}

}  // namespace perfwarden::server::gate
