// SPDX-License-Identifier: Apache-2.0
// The queue of remote bisects, as `perfwarden agent` uses it (ingest scope): POST
// .../bisect-steps/claim takes the testbed's next step (204 when none), .../{id}/heartbeat keeps
// the claim alive, .../{id}/result reports the measurement (or why it failed) and gets the bisect
// as the replay left it. A claim is proven by the random token the claim returned; the store
// keeps only its hash. The bisect logic is server/bisect; the queue is store::BisectStore.
#include <optional>
#include <utility>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/auth/tokens.h"
#include "server/bisect/remote_bisect.h"
#include "wire/bisect.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxErrorBytes = 4096;

std::optional<Error> NoQueue(const ApiDeps& deps) {
  if (deps.bisects != nullptr) return std::nullopt;
  return Error{ErrorCode::kUnavailable, "this server has no bisect queue", ""};
}

// An agent's error (a compiler's output, say) cut to a size worth storing, at a UTF-8 boundary.
std::string Truncate(std::string text) {
  if (text.size() <= kMaxErrorBytes) return text;
  std::size_t end = kMaxErrorBytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

// What a heartbeat and a result share: the step id of the path and the JSON body, decoded by
// `decode`; checked in that order. `refused` is the response to send when the body is not JSON
// (its own status, 415).
template <class Body>
struct StepCall {
  int64_t id = 0;
  Body body;
  std::optional<http::Response> refused;
};
template <class Body>
Result<StepCall<Body>> ReadStepCall(const ApiDeps& deps, const http::Request& request,
                                    const http::PathParams& params,
                                    Result<Body> (*decode)(const json&)) {
  if (auto none = NoQueue(deps)) return tl::unexpected(*none);
  StepCall<Body> call;
  auto id = PositiveIdParam(params, "a bisect step id");
  if (!id) return tl::unexpected(id.error());
  call.id = *id;
  if (auto bad_type = CheckJsonContentType(request)) {
    call.refused = std::move(*bad_type);
    return call;
  }
  auto body = ParseJsonObject(request.body, deps.json_max_depth);
  if (!body) return tl::unexpected(body.error());
  auto decoded = decode(*body);
  if (!decoded) return tl::unexpected(decoded.error());
  call.body = std::move(*decoded);
  return call;
}

Result<http::Response> Claim(const ApiDeps& deps, const http::Request& request,
                             const store::Project& project) {
  if (auto none = NoQueue(deps)) return tl::unexpected(*none);
  if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
  auto body = ParseJsonObject(request.body, deps.json_max_depth);
  if (!body) return tl::unexpected(body.error());
  auto asked = wire::DecodeStepClaimRequest(*body);
  if (!asked) return tl::unexpected(asked.error());
  store::StepClaimRequest claim;
  claim.testbed = asked->testbed;
  claim.agent = asked->agent;
  claim.lease_seconds = asked->lease_seconds.value_or(wire::kDefaultStepLease);
  auto token = remote_bisect::NewStepToken();
  if (!token) return tl::unexpected(token.error());
  auto hash = auth::HashToken(*token);
  if (!hash) return tl::unexpected(hash.error());
  claim.token_hash = *hash;
  auto claimed = deps.bisects->ClaimStep(project, claim);
  if (!claimed) return tl::unexpected(claimed.error());
  if (!*claimed) {
    http::Response none;
    none.status = 204;
    return none;
  }
  auto step = remote_bisect::ClaimedStepOf(**claimed, *token);
  if (!step) return tl::unexpected(step.error());
  return JsonResponse(200, {{wire::kStepEnvelope, wire::EncodeClaimedStep(*step)}});
}

Result<http::Response> Heartbeat(const ApiDeps& deps, const http::Request& request,
                                 const http::PathParams& params, const store::Project& project) {
  auto call = ReadStepCall(deps, request, params, &wire::DecodeStepHeartbeat);
  if (!call) return tl::unexpected(call.error());
  if (call->refused) return *call->refused;
  auto hash = auth::HashToken(call->body.token);
  if (!hash) return tl::unexpected(hash.error());
  // 0: the claim's lease.
  auto renewed =
      deps.bisects->HeartbeatStep(project, call->id, *hash, call->body.lease_seconds.value_or(0));
  if (!renewed) return tl::unexpected(renewed.error());
  const wire::StepLease lease{.id = renewed->id,
                              .lease_seconds = renewed->lease_seconds,
                              .lease_expires_at = renewed->lease_expires_at};
  return JsonResponse(200, {{wire::kStepEnvelope, wire::EncodeStepLease(lease)}});
}

Result<http::Response> Report(const ApiDeps& deps, const http::Request& request,
                              const http::PathParams& params, const store::Project& project) {
  auto call = ReadStepCall(deps, request, params, &wire::DecodeStepReport);
  if (!call) return tl::unexpected(call.error());
  if (call->refused) return *call->refused;
  const wire::StepReport& body = call->body;
  store::StepReport report;
  if (body.error) {
    report.error = Truncate(*body.error);
  } else {
    auto measurement = bisect::MeasurementFromJson(body.measurement.value_or(json()));
    if (!measurement) return tl::unexpected(measurement.error());
    // Stored as the driver writes it, whatever spelling the agent sent.
    report.measurement_json = bisect::MeasurementJson(*measurement).dump();
    report.builds = body.builds.value_or(0);
    report.runs = body.runs.value_or(0);
  }
  auto hash = auth::HashToken(body.token);
  if (!hash) return tl::unexpected(hash.error());
  auto bisect = deps.bisects->CompleteStep(project, call->id, *hash, report, remote_bisect::Decide);
  if (!bisect) return tl::unexpected(bisect.error());
  return BisectResponse(200, *bisect);
}

}  // namespace

// Registered with the other bisect routes (docs/openapi.yaml lists them); a server without a
// queue answers 503.
void RegisterBisectStepRoutes(http::Router& router, const ApiDeps& deps) {
  if (deps.history == nullptr) return;
  router.Add("POST", "/api/v1/projects/{project}/bisect-steps/claim", "bisect_steps.claim",
             HandleProject(
                 deps, {}, auth::Scope::kIngest,
                 [deps](const http::Request& request, const http::PathParams& /*params*/,
                        const store::Project& project) { return Claim(deps, request, project); }));
  router.Add("POST", "/api/v1/projects/{project}/bisect-steps/{id}/heartbeat",
             "bisect_steps.heartbeat",
             HandleProject(deps, {}, auth::Scope::kIngest,
                           [deps](const http::Request& request, const http::PathParams& params,
                                  const store::Project& project) {
                             return Heartbeat(deps, request, params, project);
                           }));
  router.Add("POST", "/api/v1/projects/{project}/bisect-steps/{id}/result", "bisect_steps.result",
             HandleProject(deps, {}, auth::Scope::kIngest,
                           [deps](const http::Request& request, const http::PathParams& params,
                                  const store::Project& project) {
                             return Report(deps, request, params, project);
                           }),
             http::Router::Cost::kHeavy);  // the replay runs the bisect's U tests over its log
}

}  // namespace perfwarden::server::api
