// SPDX-License-Identifier: Apache-2.0
// The perfwarden-server application: composes the embedded or external PostgreSQL, the
// migrations, the connection pool, the stores, the API routes and the HTTP server. main.cc
// parses flags and signals around it; e2e tests start it in-process on an ephemeral port.
#pragma once

#include <memory>
#include <string>

#include "config/server_config.h"
#include "core/result.h"

namespace perfwarden::server {

class App {
 public:
  // Starts everything (embedded PostgreSQL when config.database_url is empty, under
  // config.data_dir + "/pg"), applies pending migrations, ensures an admin token exists
  // (config.admin_token when set, else a generated one, reported once through
  // new_admin_token()), and listens. Errors name the failing step.
  static Result<std::unique_ptr<App>> Start(const config::ServerConfig& config);

  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  int port() const;                         // the bound port (useful with listen port 0)
  const std::string& database_url() const;  // the DSN in use (embedded or given)
  // The admin token generated at this start ("" when one already existed or was configured).
  const std::string& new_admin_token() const;

  // Graceful shutdown: stop accepting, finish in-flight requests, close the pool, stop the
  // embedded PostgreSQL. Idempotent; also done by the destructor.
  void Stop();

 private:
  struct Impl;
  explicit App(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `perfwarden-server migrate`: applies pending migrations and returns (embedded PostgreSQL is
// started and stopped around it when no DSN is configured).
Result<int> MigrateOnly(const config::ServerConfig& config);

}  // namespace perfwarden::server
