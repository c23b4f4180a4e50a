// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/pg_cluster.h"

#include <unistd.h>

#include <cstdlib>
#include <pqxx/pqxx>

// libpq 15 under libpqxx 6.4 leaks one PGresult (about 2 KB) when a server ends a session
// that is in use (a restart, pg_terminate_backend). The tests provoke exactly that, so LSan
// is told to ignore allocations made inside libpq; perfwarden code never calls libpq directly.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpq.so\n"; }

namespace perfwarden::testing {

Result<std::filesystem::path> MakePgTempDir(const std::string& prefix) {
  return store::MakeClusterTempDir(prefix);
}

Result<PgCluster*> PgCluster::Get() {
  // Destroyed at exit, which stops the cluster and deletes its directory.
  static std::unique_ptr<PgCluster> cluster;
  static Result<PgCluster*> outcome = []() -> Result<PgCluster*> {
    if (auto bin = store::FindPostgresBinDir(); !bin) return tl::unexpected(bin.error());
    Result<std::filesystem::path> dir = MakePgTempDir("perfwarden-pgtest-");
    if (!dir) return tl::unexpected(dir.error());
    cluster.reset(new PgCluster());
    cluster->temp_dir_ = *dir;
    store::EmbeddedPostgresOptions options;
    options.data_dir = *dir / "data";
    options.database = "postgres";
    options.durable = false;
    cluster->server_ = std::make_unique<store::EmbeddedPostgres>(options);
    if (auto dsn = cluster->server_->Start(); !dsn) return tl::unexpected(dsn.error());
    return cluster.get();
  }();
  return outcome;
}

PgCluster::~PgCluster() {
  if (server_ != nullptr) (void)server_->Stop();
  server_.reset();
  std::error_code ec;
  if (!temp_dir_.empty()) std::filesystem::remove_all(temp_dir_, ec);
}

Result<void> PgCluster::Start() {
  Result<std::string> dsn = server_->Start();
  if (!dsn) return tl::unexpected(dsn.error());
  return {};
}

Result<std::string> PgCluster::CreateDatabase() {
  const std::string name = "t_" + std::to_string(++next_database_);
  try {
    pqxx::connection conn(server_->DsnFor("postgres"));
    pqxx::nontransaction tx(conn);
    tx.exec("CREATE DATABASE " + tx.quote_name(name));
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kUnavailable, "CREATE DATABASE " + name + ": " + e.what());
  }
  return server_->DsnFor(name);
}

void PgTest::SetUp() {
  Result<PgCluster*> cluster = PgCluster::Get();
  if (!cluster && cluster.error().code == ErrorCode::kNotFound) {
    GTEST_SKIP() << "PostgreSQL is not installed: " << cluster.error().message;
  }
  ASSERT_TRUE(cluster.has_value()) << cluster.error().ToString();
  cluster_ = *cluster;
  if (!cluster_->server().running()) {
    // A previous test in this process stopped it and failed before restarting it.
    ASSERT_TRUE(cluster_->Start().has_value());
  }
  Result<std::string> dsn = cluster_->CreateDatabase();
  ASSERT_TRUE(dsn.has_value()) << dsn.error().ToString();
  dsn_ = *dsn;
}

}  // namespace perfwarden::testing
