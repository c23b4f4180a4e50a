// SPDX-License-Identifier: Apache-2.0
#include "server/app.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "core/version.h"
#include "server/api/api.h"
#include "server/auth/tokens.h"
#include "server/gate/verdict.h"
#include "server/history/service.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/http/server.h"
#include "server/store/embedded_pg.h"
#include "server/store/embedded_supervisor.h"
#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "server/store/pool.h"
#include "server/web/dashboard.h"

namespace perfwarden::server {
namespace {

// Prefixes an error with the startup step that failed.
Error InStep(std::string_view step, Error error) {
  error.message = std::string(step) + ": " + error.message;
  return error;
}

store::MigratorOptions MigrationOptions(const config::ServerConfig& config) {
  store::MigratorOptions options;
  if (!config.migrations_dir.empty()) options.dir = config.migrations_dir;
  return options;
}

std::unique_ptr<store::EmbeddedPostgres> MakeEmbedded(const config::ServerConfig& config) {
  store::EmbeddedPostgresOptions options;
  options.data_dir = std::filesystem::path(config.data_dir) / "pg";
  return std::make_unique<store::EmbeddedPostgres>(options);
}

history::HistoryServiceOptions HistoryOptions(const config::HistoryConfig& config) {
  history::HistoryServiceOptions options;
  options.tracked_branches = config.branches;
  options.params.detector.threshold = config.threshold;
  options.params.detector.window = config.window;
  options.params.detector.max_pvalue = config.max_pvalue;
  options.webhook_url = config.webhook_url;
  options.public_url = config.public_url;
  return options;
}

}  // namespace

struct App::Impl {
  config::ServerConfig config;
  std::unique_ptr<store::EmbeddedPostgres> embedded;
  std::string dsn;
  std::unique_ptr<store::ConnectionPool> pool;
  std::unique_ptr<store::PgStore> stores;
  std::unique_ptr<gate::VerdictService> verdicts;
  std::unique_ptr<history::HistoryService> history;
  http::Metrics metrics;
  // After embedded and metrics: stopped and destroyed before them.
  std::unique_ptr<store::EmbeddedSupervisor> supervisor;
  api::ApiDeps deps;
  std::unique_ptr<http::Server> http;
  std::string new_admin_token;
  bool stopped = false;

  Result<void> EnsureAdminToken();
  void StartSupervisor();
  void Stop();
};

// The embedded cluster's supervisor (server/store/embedded_supervisor.h), its restarts counted
// in /metrics.
void App::Impl::StartSupervisor() {
  http::Counter* restarts =
      metrics.AddCounter("perfwarden_embedded_pg_restarts_total",
                         "Restarts of the embedded PostgreSQL after its postmaster was found gone");
  http::Counter* failures = metrics.AddCounter(
      "perfwarden_embedded_pg_restart_failures_total",
      "Failed attempts to restart the embedded PostgreSQL (each logged at error)");
  store::SupervisorOptions options;
  options.on_restart = [restarts, failures](bool ok) { (ok ? restarts : failures)->Increment(); };
  supervisor = std::make_unique<store::EmbeddedSupervisor>(*embedded, options);
  store::EmbeddedSupervisor* watched = supervisor.get();
  metrics.AddGauge("perfwarden_embedded_pg_up",
                   "1 while the embedded PostgreSQL's postmaster runs and its disk has room",
                   [watched]() -> double {
                     const store::SupervisorStats stats = watched->Stats();
                     return stats.up && !stats.disk_full ? 1.0 : 0.0;
                   });
  supervisor->Start();
}

// An admin token must exist: the configured one (PERFWARDEN_ADMIN_TOKEN / admin_token), or at
// the very first start a generated one that main() prints once.
Result<void> App::Impl::EnsureAdminToken() {
  auto create = [&](const std::string& token) -> Result<store::TokenRecord> {
    auto hash = auth::HashToken(token);
    if (!hash) return tl::unexpected(hash.error());
    store::NewToken record;
    record.name = "admin";
    record.prefix = token.substr(0, 8);
    record.token_hash = *hash;
    record.scopes = {"admin"};
    return stores->CreateToken(record);
  };
  if (!config.admin_token.empty()) {
    auto hash = auth::HashToken(config.admin_token);
    if (!hash) return tl::unexpected(hash.error());
    auto found = stores->FindTokenByHash(*hash);
    if (!found && found.error().code != ErrorCode::kNotFound) {
      return tl::unexpected(found.error());
    }
    if (!found) {
      found = create(config.admin_token);
      // Another server on the same database (docs/operations.md, "Run several servers") may have
      // stored the same configured token between the look-up and the insert: the hash is
      // UNIQUE, so the insert fails and the row it raced is the one to use.
      if (!found) {
        auto raced = stores->FindTokenByHash(*hash);
        if (raced) found = std::move(raced);
      }
    }
    if (!found) return tl::unexpected(found.error());
    if (found->revoked) {
      spdlog::error(
          "the configured admin token (admin_token / PERFWARDEN_ADMIN_TOKEN, id {}, {}...) was "
          "revoked: requests with it are refused (401); configure another admin token",
          found->id, found->prefix);
    }
    deps.configured_admin_token_id = found->id;
    return {};
  }
  auto has_admin = stores->HasAdminToken();
  if (!has_admin) return tl::unexpected(has_admin.error());
  if (*has_admin) return {};
  auto token = auth::GenerateToken();
  if (!token) return tl::unexpected(token.error());
  if (auto created = create(*token); !created) return tl::unexpected(created.error());
  new_admin_token = *token;
  return {};
}

void App::Impl::Stop() {
  if (stopped) return;
  stopped = true;
  if (supervisor) supervisor->Stop();  // no restart of the cluster during the shutdown
  if (http) http->Stop();              // stop accepting, finish in-flight requests
  if (verdicts) verdicts->StopWarming();
  if (history) history->Stop();
  if (pool) pool->Close();
  if (embedded) {
    if (auto s = embedded->Stop(); !s) spdlog::warn("stopping PostgreSQL: {}", s.error().message);
  }
}

App::App(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
App::~App() { Stop(); }
void App::Stop() { impl_->Stop(); }
int App::port() const { return impl_->http ? impl_->http->port() : 0; }
const std::string& App::database_url() const { return impl_->dsn; }
const std::string& App::new_admin_token() const { return impl_->new_admin_token; }

Result<std::unique_ptr<App>> App::Start(const config::ServerConfig& config) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  if (config.database_url.empty()) {
    impl->embedded = MakeEmbedded(config);
    store::AdoptOrphanedPostmasters();  // a killed postmaster is reaped at once: supervisor
    spdlog::info("starting the embedded PostgreSQL in {}/pg", config.data_dir);
    auto dsn = impl->embedded->Start();
    if (!dsn) return tl::unexpected(InStep("embedded PostgreSQL", dsn.error()));
    impl->dsn = *dsn;
  } else {
    impl->dsn = config.database_url;
  }
  // From here on, a failure must stop the embedded cluster again: App's destructor does it.
  std::unique_ptr<App> app(new App(std::move(impl)));
  Impl& s = *app->impl_;

  auto migrated = store::Migrate(s.dsn, MigrationOptions(config));
  if (!migrated) return tl::unexpected(InStep("migrations", migrated.error()));
  spdlog::info("database schema at version {} ({} migration(s) applied now)", migrated->version,
               migrated->applied.size());

  // The embedded cluster serves through a role that can only read and write rows; with an
  // external DSN, the operator picks the role (docs/operations.md, least privilege).
  std::string serving_dsn = s.dsn;
  if (s.embedded) {
    auto app_dsn = s.embedded->EnsureAppRole();
    if (!app_dsn) return tl::unexpected(InStep("database role", app_dsn.error()));
    serving_dsn = *app_dsn;
    s.StartSupervisor();
  }
  store::PoolOptions pool_options;
  pool_options.dsn = serving_dsn;
  pool_options.max_size = config.pool_size;
  pool_options.statement_timeout_ms = config.limits.statement_timeout_ms;
  store::EmbeddedSupervisor* supervisor = s.supervisor.get();
  if (supervisor != nullptr) {
    pool_options.outage_reason = [supervisor]() { return supervisor->DownReason(); };
  }
  s.pool = std::make_unique<store::ConnectionPool>(pool_options);
  s.stores = std::make_unique<store::PgStore>(*s.pool);
  if (auto admin = s.EnsureAdminToken(); !admin) {
    return tl::unexpected(InStep("admin token", admin.error()));
  }

  // Which build answers: one series, always 1, labelled with the version (core/version.h).
  s.metrics.AddGauge(
      "perfwarden_build_info", "The perfwarden-server build (version from git)", []() {
        return std::vector<http::GaugeSample>{{{{"version", std::string(Version())}}, 1.0}};
      });
  store::ConnectionPool* pool = s.pool.get();
  s.metrics.AddGauge("perfwarden_db_pool_connections", "PostgreSQL connections by state", [pool]() {
    const store::PoolStats stats = pool->Stats();
    return std::vector<http::GaugeSample>{
        {{{"state", "in_use"}}, static_cast<double>(stats.in_use)},
        {{{"state", "idle"}}, static_cast<double>(stats.size - stats.in_use)},
        {{{"state", "max"}}, static_cast<double>(stats.max_size)}};
  });
  s.deps.projects = s.stores.get();
  s.deps.tokens = s.stores.get();
  s.deps.runs = s.stores.get();
  s.deps.series = s.stores.get();
  s.verdicts =
      std::make_unique<gate::VerdictService>(*s.stores, config.limits.baseline_cache_bytes);
  gate::VerdictService* verdicts = s.verdicts.get();
  s.metrics.AddGauge("perfwarden_baseline_cache", "Prepared baselines kept for verdicts",
                     [verdicts]() {
                       const gate::BaselineCache::Stats stats = verdicts->CacheStats();
                       return std::vector<http::GaugeSample>{
                           {{{"stat", "hits"}}, static_cast<double>(stats.hits)},
                           {{{"stat", "misses"}}, static_cast<double>(stats.misses)},
                           {{{"stat", "entries"}}, static_cast<double>(stats.entries)},
                           {{{"stat", "bytes"}}, static_cast<double>(stats.bytes)}};
                     });
  s.deps.verdicts = s.verdicts.get();
  s.deps.history = s.stores.get();
  s.deps.bisects = s.stores.get();
  s.deps.history_params = HistoryOptions(config.history);
  if (config.history.enabled) {
    s.history = std::make_unique<history::HistoryService>(*s.stores, s.deps.history_params);
    s.deps.history_service = s.history.get();
    history::HistoryService* service = s.history.get();
    s.metrics.AddGauge("perfwarden_history", "History analysis of tracked branches", [service]() {
      const history::HistoryService::Stats stats = service->stats();
      return std::vector<http::GaugeSample>{
          {{{"stat", "runs"}}, static_cast<double>(stats.runs)},
          {{{"stat", "alerts"}}, static_cast<double>(stats.alerts)},
          {{{"stat", "errors"}}, static_cast<double>(stats.errors)},
          {{{"stat", "webhook_failures"}}, static_cast<double>(stats.webhook_failures)},
          {{{"stat", "skipped"}}, static_cast<double>(stats.skipped)}};
    });
    s.history->Start();
  }
  s.deps.metrics = &s.metrics;
  s.deps.json_max_depth = config.limits.json_depth;
  s.deps.open_bisects_per_testbed = config.limits.open_bisects_per_testbed;
  s.deps.protected_branches = config.history.branches;
  s.deps.database_ready = [pool, supervisor]() -> Result<bool> {
    if (supervisor != nullptr) {
      if (std::string why = supervisor->DownReason(); !why.empty()) {
        return MakeError(ErrorCode::kUnavailable, why);
      }
    }
    return pool->Ping();
  };
  http::Router router;
  api::RegisterRoutes(router, s.deps);
  web::RegisterDashboardRoutes(router, web::DashboardOptions{config.web_root});

  http::ServerOptions options;
  options.host = config.listen.host;
  options.port = config.listen.port;
  options.threads = config.threads;
  options.body_limit = config.limits.body_bytes;
  options.request_memory_bytes = config.limits.request_memory_bytes;
  options.header_limit = config.limits.header_bytes;
  options.read_timeout = std::chrono::milliseconds(config.limits.read_timeout_ms);
  options.idle_timeout = std::chrono::milliseconds(config.limits.idle_timeout_ms);
  options.header_timeout = std::chrono::milliseconds(config.limits.header_timeout_ms);
  options.max_connections = static_cast<std::size_t>(config.limits.max_connections);
  options.shutdown_timeout = std::chrono::milliseconds(config.limits.drain_ms);
  options.heavy_requests = static_cast<std::size_t>(config.limits.heavy_requests);
  options.heavy_requests_per_caller =
      static_cast<std::size_t>(config.limits.heavy_requests_per_caller);
  s.http = std::make_unique<http::Server>(options, std::move(router), &s.metrics);
  if (auto started = s.http->Start(); !started) {
    return tl::unexpected(InStep("listen on " + config.listen.ToString(), started.error()));
  }
  spdlog::info("perfwarden-server listening on {}:{}", config.listen.host, s.http->port());
  return app;
}

Result<int> MigrateOnly(const config::ServerConfig& config) {
  std::unique_ptr<store::EmbeddedPostgres> embedded;
  std::string dsn = config.database_url;
  if (dsn.empty()) {
    embedded = MakeEmbedded(config);
    auto started = embedded->Start();
    if (!started) return tl::unexpected(InStep("embedded PostgreSQL", started.error()));
    dsn = *started;
  }
  auto migrated = store::Migrate(dsn, MigrationOptions(config));
  Result<std::string> role = std::string();
  if (embedded && migrated) role = embedded->EnsureAppRole();
  if (embedded) (void)embedded->Stop();
  if (!migrated) return tl::unexpected(InStep("migrations", migrated.error()));
  if (!role) return tl::unexpected(InStep("database role", role.error()));
  return static_cast<int>(migrated->applied.size());
}

}  // namespace perfwarden::server
