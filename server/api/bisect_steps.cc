// The queue of remote bisects, as `perfgate agent` uses it (ingest scope): POST
// .../bisect-steps/claim takes the testbed's next step (204 when none), .../{id}/heartbeat keeps
// the claim alive, .../{id}/result reports the measurement (or why it failed) and gets the bisect
// as the replay left it. A claim is proven by the random token the claim returned; the store
// keeps only its hash. The bisect logic is server/bisect; the queue is store::BisectStore.
#include <climits>
#include <optional>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/auth/tokens.h"
#include "server/bisect/remote_bisect.h"

namespace perfgate::server::api {
namespace {

using nlohmann::json;

constexpr int64_t kMinLease = 5, kMaxLease = 3600, kDefaultLease = 60;
constexpr std::size_t kMaxErrorBytes = 4096;

Result<void> OnlyFields(const json& body, std::initializer_list<std::string_view> fields) {
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (std::string_view field : fields) known = known || key == field;
    if (!known) {
      std::string expected;
      for (std::string_view field : fields) {
        expected += (expected.empty() ? "" : ", ") + std::string(field);
      }
      return InvalidArgument("unknown field (expected " + expected + ")", key);
    }
  }
  return {};
}

// An integer member in [min, max]; `fallback` when absent.
Result<int64_t> IntField(const json& body, const char* key, int64_t min, int64_t max,
                         int64_t fallback) {
  auto it = body.find(key);
  if (it == body.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max) {
    return InvalidArgument(
        "must be an integer from " + std::to_string(min) + " to " + std::to_string(max), key);
  }
  return it->get<int64_t>();
}

// The hash of the body's step token (the store compares hashes).
Result<std::string> TokenHash(const json& body) {
  auto it = body.find("token");
  if (it == body.end() || !it->is_string() || !remote_bisect::IsStepToken(it->get<std::string>())) {
    return InvalidArgument("must be the step token the claim returned (32 hex digits)", "token");
  }
  return auth::HashToken(it->get<std::string>());
}

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

// What a heartbeat and a result share: the step id of the path, the JSON body with only
// `fields`, and the hash of the body's step token; checked in that order. `refused` is the
// response to send when the body is not JSON (its own status, 415).
struct StepCall {
  int64_t id = 0;
  json body;
  std::string token_hash;
  std::optional<http::Response> refused;
};
Result<StepCall> ReadStepCall(const ApiDeps& deps, const http::Request& request,
                              const http::PathParams& params,
                              std::initializer_list<std::string_view> fields) {
  if (auto none = NoQueue(deps)) return tl::unexpected(*none);
  StepCall call;
  auto id = PositiveIdParam(params, "a bisect step id");
  if (!id) return tl::unexpected(id.error());
  call.id = *id;
  if (auto bad_type = CheckJsonContentType(request)) {
    call.refused = std::move(*bad_type);
    return call;
  }
  auto body = ParseJsonObject(request.body, deps.json_max_depth);
  if (!body) return tl::unexpected(body.error());
  if (auto only = OnlyFields(*body, fields); !only) return tl::unexpected(only.error());
  auto hash = TokenHash(*body);
  if (!hash) return tl::unexpected(hash.error());
  call.body = std::move(*body);
  call.token_hash = std::move(*hash);
  return call;
}

Result<http::Response> Claim(const ApiDeps& deps, const http::Request& request,
                             const store::Project& project) {
  if (auto none = NoQueue(deps)) return tl::unexpected(*none);
  if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
  auto body = ParseJsonObject(request.body, deps.json_max_depth);
  if (!body) return tl::unexpected(body.error());
  if (auto only = OnlyFields(*body, {"testbed", "agent", "lease_seconds"}); !only) {
    return tl::unexpected(only.error());
  }
  store::StepClaimRequest claim;
  for (auto [key, into] :
       {std::pair{"testbed", &claim.testbed}, std::pair{"agent", &claim.agent}}) {
    auto it = body->find(key);
    if (it == body->end() || !it->is_string() || it->get<std::string>().empty() ||
        it->get<std::string>().size() > 200) {
      return InvalidArgument("must be a string of 1..200 characters", key);
    }
    *into = it->get<std::string>();
  }
  auto lease = IntField(*body, "lease_seconds", kMinLease, kMaxLease, kDefaultLease);
  if (!lease) return tl::unexpected(lease.error());
  claim.lease_seconds = *lease;
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
  auto step = remote_bisect::ClaimJson(**claimed, *token);
  if (!step) return tl::unexpected(step.error());
  return JsonResponse(200, {{"step", std::move(*step)}});
}

Result<http::Response> Heartbeat(const ApiDeps& deps, const http::Request& request,
                                 const http::PathParams& params, const store::Project& project) {
  auto call = ReadStepCall(deps, request, params, {"token", "lease_seconds"});
  if (!call) return tl::unexpected(call.error());
  if (call->refused) return *call->refused;
  auto lease = IntField(call->body, "lease_seconds", kMinLease, kMaxLease, 0);  // 0: the claim's
  if (!lease) return tl::unexpected(lease.error());
  auto renewed = deps.bisects->HeartbeatStep(project, call->id, call->token_hash, *lease);
  if (!renewed) return tl::unexpected(renewed.error());
  return JsonResponse(200, {{"step",
                             {{"id", renewed->id},
                              {"lease_seconds", renewed->lease_seconds},
                              {"lease_expires_at", renewed->lease_expires_at}}}});
}

Result<http::Response> Report(const ApiDeps& deps, const http::Request& request,
                              const http::PathParams& params, const store::Project& project) {
  auto call =
      ReadStepCall(deps, request, params, {"token", "measurement", "builds", "runs", "error"});
  if (!call) return tl::unexpected(call.error());
  if (call->refused) return *call->refused;
  const json& body = call->body;
  store::StepReport report;
  const bool has_measurement = body.contains("measurement");
  const bool has_error = body.contains("error");
  if (has_measurement == has_error) {
    return InvalidArgument("give either a measurement or an error", "measurement");
  }
  if (has_error) {
    const json& error = body["error"];
    if (!error.is_string() || error.get<std::string>().empty()) {
      return InvalidArgument("must be a non-empty string (why the step failed)", "error");
    }
    report.error = Truncate(error.get<std::string>());
  } else {
    auto measurement = bisect::MeasurementFromJson(body["measurement"]);
    if (!measurement) return tl::unexpected(measurement.error());
    // Stored as the driver writes it, whatever spelling the agent sent.
    report.measurement_json = bisect::MeasurementJson(*measurement).dump();
    auto builds = IntField(body, "builds", 0, INT_MAX, 0);
    if (!builds) return tl::unexpected(builds.error());
    auto runs = IntField(body, "runs", 0, INT_MAX, 0);
    if (!runs) return tl::unexpected(runs.error());
    report.builds = *builds;
    report.runs = *runs;
  }
  auto bisect = deps.bisects->CompleteStep(project, call->id, call->token_hash, report,
                                           remote_bisect::Decide);
  if (!bisect) return tl::unexpected(bisect.error());
  return JsonResponse(200, {{"bisect", BisectJson(*bisect, nullptr)}});
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

}  // namespace perfgate::server::api
