// SPDX-License-Identifier: Apache-2.0
// The server configuration e2e tests start perfwarden-server (server::App) with: loopback, the
// test's database, a known admin token, two HTTP threads. Tests change what they exercise.
// ServerTest is the fixture that starts it with a generated admin token.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/http_client.h"
#include "tests/testing/pg_cluster.h"

namespace perfwarden::testing {

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

// Fixture: perfwarden-server on the test's database (TestServerConfig, then Customize), with a
// generated admin token and an HTTP client to it; stopped after the test.
class ServerTest : public PgTest {
 protected:
  virtual void Customize(config::ServerConfig& /*config*/) {}

  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto admin = auth::GenerateToken();
    ASSERT_TRUE(admin.has_value());
    admin_ = *admin;
    config::ServerConfig config = TestServerConfig(dsn_, admin_);
    Customize(config);
    auto app = server::App::Start(config);
    ASSERT_TRUE(app.has_value()) << app.error().ToString();
    app_ = std::move(*app);
    http_ = std::make_unique<HttpClient>(static_cast<std::uint16_t>(app_->port()));
  }
  void TearDown() override {
    http_.reset();
    if (app_) app_->Stop();
  }

  // POST /api/v1/projects as the admin; the test fails unless it is created.
  void CreateProject(const std::string& name) {
    ASSERT_EQ(http_->Post("/api/v1/projects", nlohmann::json{{"name", name}}.dump(), admin_).status,
              201);
  }

  std::string admin_;
  std::unique_ptr<server::App> app_;
  std::unique_ptr<HttpClient> http_;
};

}  // namespace perfwarden::testing
