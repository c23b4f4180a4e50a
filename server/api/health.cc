// SPDX-License-Identifier: Apache-2.0
// /healthz (the process answers), /readyz (the database answers too), /metrics and the
// OpenAPI document: the routes that need no token.
#include "core/version.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/http/errors.h"

namespace perfwarden::server::api {

void RegisterHealthRoutes(http::Router& router, const ApiDeps& deps) {
  router.Add(
      "GET", "/healthz", "healthz",
      Handle({}, [](const http::Request&, const http::PathParams&) -> Result<http::Response> {
        return JsonResponse(200, {{"status", "ok"}, {"version", std::string(Version())}});
      }));
  router.Add(
      "GET", "/readyz", "readyz",
      Handle({}, [deps](const http::Request&, const http::PathParams&) -> Result<http::Response> {
        if (!deps.database_ready) {
          return MakeError(ErrorCode::kUnavailable, "no database check configured");
        }
        auto ready = deps.database_ready();
        if (!ready) {
          return MakeError(ErrorCode::kUnavailable,
                           "the database is not ready: " + ready.error().message);
        }
        if (!*ready) return MakeError(ErrorCode::kUnavailable, "the database is not ready");
        return JsonResponse(200, {{"status", "ready"}});
      }));
  router.Add(
      "GET", "/metrics", "metrics",
      Handle({}, [deps](const http::Request&, const http::PathParams&) -> Result<http::Response> {
        std::string text = deps.metrics != nullptr ? deps.metrics->Render() : "";
        return http::Response::Text(200, std::move(text),
                                    "text/plain; version=0.0.4; charset=utf-8");
      }));
  router.Add(
      "GET", "/api/v1/openapi.yaml", "openapi",
      Handle({}, [](const http::Request&, const http::PathParams&) -> Result<http::Response> {
        return http::Response::Text(200, std::string(OpenApiYaml()),
                                    "application/yaml; charset=utf-8");
      }));
}

}  // namespace perfwarden::server::api
