// SPDX-License-Identifier: Apache-2.0
// API v1 routes (docs/api.md): decode the request, check the bearer token and its scope,
// call the store, encode JSON. Handlers are thin; the rules live in the small functions
// they call so that they can be tested without a socket.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/history/service.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/store/bisect_store.h"
#include "server/store/store.h"

namespace perfwarden::server::gate {
class VerdictService;
}

namespace perfwarden::server::api {

struct ApiDeps {
  store::ProjectStore* projects = nullptr;
  store::TokenStore* tokens = nullptr;
  store::RunStore* runs = nullptr;
  store::SeriesStore* series = nullptr;
  gate::VerdictService* verdicts = nullptr;  // null: the verdict routes are not registered
  store::HistoryStore* history = nullptr;    // null: the alert routes are not registered
  store::BisectStore* bisects = nullptr;     // null: remote bisects are refused (no queue)
  history::HistoryService* history_service = nullptr;  // told about stored runs; may be null
  history::HistoryServiceOptions history_params;       // for on-demand analysis
  http::Metrics* metrics = nullptr;                    // may be null
  // For /readyz: OK when the database answers; kUnavailable otherwise.
  std::function<Result<bool>()> database_ready;
  int json_max_depth = 64;
  // Remote bisects pending or running at most per project and testbed (limits.
  // open_bisects_per_testbed); one more is refused 409 and not stored.
  int open_bisects_per_testbed = 8;
  // The branches a project protects when it names none (history.branches): writable only with
  // the ingest scope, not ingest-pr.
  std::vector<std::string> protected_branches = {"main", "master"};
  // The token configured as admin_token (PERFWARDEN_ADMIN_TOKEN): DELETE /api/v1/tokens/{id}
  // refuses to revoke it, since the next start would find it revoked. nullopt: none configured.
  std::optional<int64_t> configured_admin_token_id;
};

// Registers every route of API v1 plus /healthz, /readyz, /metrics and
// /api/v1/openapi.yaml on `router`. `deps` must outlive the router.
void RegisterRoutes(http::Router& router, const ApiDeps& deps);

}  // namespace perfwarden::server::api
