// The server configuration e2e tests start perfgate-server (server::App) with: loopback, the
// test's database, a known admin token, two HTTP threads. Tests change what they exercise.
#pragma once

#include <cstdint>
#include <string>

#include "config/server_config.h"

namespace perfgate::testing {

inline config::ServerConfig TestServerConfig(const std::string& dsn, const std::string& admin_token,
                                             std::uint16_t port = 0) {
  config::ServerConfig config;
  config.listen.host = "127.0.0.1";
  config.listen.port = port;
  config.threads = 2;
  config.database_url = dsn;
  config.admin_token = admin_token;
  config.pool_size = 4;
  return config;
}

}  // namespace perfgate::testing
