// SPDX-License-Identifier: Apache-2.0
// Verdicts: POST /api/v1/projects/{project}/runs/{id}/verdict computes (and stores) a run's
// verdict with the body's thresholds; GET returns the newest one (404 when there is none), and
// GET ...?replay=1 recomputes the stored one from its parameters and sample sets (a paired
// verdict: from its measurement); POST .../verdict/paired stores a paired measurement's verdict.
// The use case is server/gate/verdict.h.
#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/gate/verdict.h"
#include "wire/paired.h"

namespace perfwarden::server::api {

void RegisterVerdictRoutes(http::Router& router, const ApiDeps& deps) {
  if (deps.verdicts == nullptr) return;
  router.Add(
      "POST", "/api/v1/projects/{project}/runs/{id}/verdict", "verdicts.create",
      HandleBranchWrite(deps,
                        [deps](const http::Request& request, const http::PathParams& params,
                               const store::Project& project,
                               const BranchGuard& guard) -> Result<http::Response> {
                          if (!request.body.empty()) {
                            if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                          }
                          Result<gate::VerdictRequest> verdict_request = gate::VerdictRequest{};
                          if (request.body.find_first_not_of(" \t\r\n") != std::string::npos) {
                            auto body = ParseJsonObject(request.body, deps.json_max_depth);
                            if (!body) return tl::unexpected(body.error());
                            verdict_request = gate::DecodeParameters(*body);
                          }
                          if (!verdict_request) return tl::unexpected(verdict_request.error());
                          bool reused = false;
                          auto verdict = deps.verdicts->Compute(
                              project, params.at("id"), *verdict_request, &reused,
                              [&guard](std::string_view b) { return guard.Check(b); });
                          if (!verdict) return tl::unexpected(verdict.error());
                          return http::Response::Json(reused ? 200 : 201, std::move(*verdict));
                        }),
      http::Router::Cost::kHeavy);  // judging 500 metrics takes ~25 ms of CPU
  // The body is the paired measurement (wire/paired.h): the baseline commit and the pull
  // request measured interleaved in blocks on one host; judged and stored as the run's verdict.
  router.Add(
      "POST", "/api/v1/projects/{project}/runs/{id}/verdict/paired", "verdicts.paired",
      HandleBranchWrite(deps,
                        [deps](const http::Request& request, const http::PathParams& params,
                               const store::Project& project,
                               const BranchGuard& guard) -> Result<http::Response> {
                          if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                          wire::DecodeLimits limits;
                          limits.max_depth = deps.json_max_depth;
                          auto measurement = wire::DecodePairedMeasurement(request.body, limits);
                          if (!measurement) return tl::unexpected(measurement.error());
                          bool reused = false;
                          auto verdict = deps.verdicts->ComputePaired(
                              project, params.at("id"), *measurement, &reused,
                              [&guard](std::string_view b) { return guard.Check(b); });
                          if (!verdict) return tl::unexpected(verdict.error());
                          return http::Response::Json(reused ? 200 : 201, std::move(*verdict));
                        }),
      http::Router::Cost::kHeavy);  // a bootstrap per series and look
  router.Add("GET", "/api/v1/projects/{project}/runs/{id}/verdict", "verdicts.get",
             HandleProject(deps, {"replay"}, auth::Scope::kRead,
                           [deps](const http::Request& request, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             const std::string replay = request.Query("replay").value_or("0");
                             if (replay != "0" && replay != "1") {
                               return InvalidArgument("must be 0 or 1", "replay");
                             }
                             if (replay == "1") {
                               auto replayed = deps.verdicts->Replay(project, params.at("id"));
                               if (!replayed) return tl::unexpected(replayed.error());
                               return http::Response::Json(200, std::move(*replayed));
                             }
                             auto verdict = deps.verdicts->Latest(project, params.at("id"));
                             if (!verdict) return tl::unexpected(verdict.error());
                             return http::Response::Json(200, std::move(*verdict));
                           }));
}

}  // namespace perfwarden::server::api
