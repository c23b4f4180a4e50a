// SPDX-License-Identifier: Apache-2.0
// Test support for the pg label: one throwaway PostgreSQL cluster per test process (started on
// first use in a temp directory with EmbeddedPostgres, stopped and deleted at exit) and a
// fresh database per test. Under ctest every test runs in its own process, so each gets its
// own cluster; no test shares state with another.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/store/embedded_pg.h"

namespace perfwarden::testing {

class PgCluster {
 public:
  // The process's cluster, started on the first call. kNotFound when PostgreSQL is not
  // installed (tests skip), other errors when it would not start (tests fail).
  static Result<PgCluster*> Get();

  // A new, empty database t_<n> and its DSN.
  Result<std::string> CreateDatabase();

  // Stop/start the cluster to simulate an outage; it comes back on the same port.
  Result<void> Stop() { return server_->Stop(); }
  Result<void> Start();

  store::EmbeddedPostgres& server() { return *server_; }
  // A scratch directory (removed at exit) for tests that need files or a second cluster.
  const std::filesystem::path& temp_dir() const { return temp_dir_; }

  ~PgCluster();

 private:
  PgCluster() = default;

  std::filesystem::path temp_dir_;
  std::unique_ptr<store::EmbeddedPostgres> server_;
  int next_database_ = 0;
};

// Makes a temporary directory that the cluster's system user can use too (when root, it is
// handed to that user). Removed by the caller.
Result<std::filesystem::path> MakePgTempDir(const std::string& prefix);

// Fixture: a fresh database per test in dsn_; skips the test when PostgreSQL is missing.
class PgTest : public ::testing::Test {
 protected:
  void SetUp() override;

  PgCluster* cluster_ = nullptr;
  std::string dsn_;
};

}  // namespace perfwarden::testing
