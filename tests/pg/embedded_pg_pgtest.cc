// SPDX-License-Identifier: Apache-2.0
// EmbeddedPostgres: creates a cluster on first start, stops it, reuses it (data and
// password) on the next start, adopts a postmaster left running, and reports missing
// binaries and foreign directories clearly.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <pqxx/pqxx>

#include "server/store/embedded_pg.h"
#include "server/store/migrator.h"
#include "tests/testing/pg_cluster.h"

namespace perfwarden::store {
namespace {

namespace fs = std::filesystem;

class EmbeddedPgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto bin = FindPostgresBinDir(); !bin) GTEST_SKIP() << bin.error().message;
    Result<fs::path> dir = testing::MakePgTempDir("perfwarden-embedded-");
    ASSERT_TRUE(dir.has_value());
    dir_ = *dir;
    options_.data_dir = dir_ / "pg";
    options_.durable = false;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  fs::path dir_;
  EmbeddedPostgresOptions options_;
};

TEST_F(EmbeddedPgTest, StartsStopsAndReusesTheCluster) {
  std::string first_dsn;
  {
    EmbeddedPostgres pg(options_);
    Result<std::string> dsn = pg.Start();
    ASSERT_TRUE(dsn.has_value()) << dsn.error().ToString();
    first_dsn = *dsn;
    EXPECT_TRUE(pg.running());
    EXPECT_GT(pg.port(), 0);
    pqxx::connection conn(*dsn);
    pqxx::work tx(conn);
    EXPECT_EQ(tx.exec1("SELECT current_database()")[0].as<std::string>(), "perfwarden");
    EXPECT_EQ(tx.exec1("SHOW listen_addresses")[0].as<std::string>(), "127.0.0.1");
    tx.exec("CREATE TABLE kept (v text)");
    tx.exec("INSERT INTO kept VALUES ('still here')");
    tx.commit();
    conn.disconnect();
    ASSERT_TRUE(pg.Stop().has_value());
    EXPECT_FALSE(pg.running());
    EXPECT_THROW(pqxx::connection{*dsn + " connect_timeout=5"}, pqxx::broken_connection);
  }
  EmbeddedPostgres again(options_);
  Result<std::string> dsn = again.Start();
  ASSERT_TRUE(dsn.has_value()) << dsn.error().ToString();
  pqxx::connection conn(*dsn);
  pqxx::work tx(conn);
  EXPECT_EQ(tx.exec1("SELECT v FROM kept")[0].as<std::string>(), "still here");
  // Password authentication is on: a wrong password is refused.
  const std::string wrong =
      "host=127.0.0.1 port=" + std::to_string(again.port()) + " user=perfwarden password=x";
  EXPECT_THROW(pqxx::connection{wrong}, pqxx::broken_connection);
}

TEST_F(EmbeddedPgTest, TheAppRoleReadsAndWritesRowsAndNothingElse) {
  EmbeddedPostgres pg(options_);
  Result<std::string> owner_dsn = pg.Start();
  ASSERT_TRUE(owner_dsn.has_value()) << owner_dsn.error().ToString();
  ASSERT_TRUE(Migrate(*owner_dsn).has_value());
  Result<std::string> app_dsn = pg.EnsureAppRole();
  ASSERT_TRUE(app_dsn.has_value()) << app_dsn.error().ToString();
  EXPECT_NE(app_dsn->find("user=perfwarden_app"), std::string::npos);

  pqxx::connection conn(*app_dsn);
  auto runs = [&](const std::string& sql) {
    try {
      pqxx::work tx(conn);
      tx.exec(sql);
      tx.commit();
      return true;
    } catch (const pqxx::sql_error&) {
      return false;
    }
  };
  EXPECT_TRUE(runs("INSERT INTO projects (name) VALUES ('p')"));  // identity sequence too
  EXPECT_TRUE(runs("UPDATE projects SET public_read = true"));
  EXPECT_TRUE(runs("SELECT count(*) FROM samples"));  // the view
  EXPECT_TRUE(runs("SELECT count(*) FROM schema_migrations"));
  EXPECT_TRUE(runs("DELETE FROM projects"));
  EXPECT_FALSE(runs("CREATE TABLE mine (v integer)"));
  EXPECT_FALSE(runs("DROP TABLE runs"));
  EXPECT_FALSE(runs("ALTER TABLE runs ADD COLUMN x integer"));
  EXPECT_FALSE(runs("TRUNCATE runs"));
  EXPECT_FALSE(runs("DELETE FROM schema_migrations"));
  EXPECT_FALSE(runs("CREATE ROLE other"));
  EXPECT_FALSE(runs("CREATE DATABASE other"));
  // An up-to-date database migrates with the app role: nothing to do, no DDL needed.
  Result<MigrationReport> again = Migrate(*app_dsn);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_TRUE(again->applied.empty());
  // Idempotent: the second call keeps the password (existing DSNs keep working).
  Result<std::string> second = pg.EnsureAppRole();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*second, *app_dsn);
  pqxx::connection again_conn(*app_dsn);
}

TEST_F(EmbeddedPgTest, AdoptsAServerLeftRunning) {
  EmbeddedPostgres first(options_);
  ASSERT_TRUE(first.Start().has_value());
  EmbeddedPostgres second(options_);  // e.g. the server restarted after being killed
  Result<std::string> dsn = second.Start();
  ASSERT_TRUE(dsn.has_value()) << dsn.error().ToString();
  EXPECT_EQ(second.port(), first.port());
  pqxx::connection conn(*dsn);
  EXPECT_TRUE(conn.is_open());
  conn.disconnect();
  EXPECT_TRUE(second.Stop().has_value());
}

TEST_F(EmbeddedPgTest, TheClusterKeepsItsPortAcrossRestarts) {
  int port = 0;
  {
    EmbeddedPostgres first(options_);
    ASSERT_TRUE(first.Start().has_value());
    port = first.port();
    ASSERT_TRUE(first.Stop().has_value());
  }
  EmbeddedPostgres again(options_);
  ASSERT_TRUE(again.Start().has_value());
  EXPECT_EQ(again.port(), port);
}

// A server and its postmaster killed with SIGKILL, and a new server started at once: it waits
// for the dead postmaster instead of adopting it, and starts the cluster again (no manual wait).
TEST_F(EmbeddedPgTest, RecoversAtOnceFromAKilledPostmaster) {
  // Durable, as a production server runs: a commit survives the crash. (`first` believes its
  // cluster runs; its destructor's stop at the end finds none: harmless.)
  options_.durable = true;
  EmbeddedPostgres first(options_);
  ASSERT_TRUE(first.Start().has_value());
  const int port = first.port();
  {
    pqxx::connection conn(first.dsn());
    pqxx::work tx(conn);
    tx.exec("CREATE TABLE survived (v int)");
    tx.exec("INSERT INTO survived VALUES (7)");
    tx.commit();
  }
  std::ifstream pid_file(options_.data_dir / "postmaster.pid");
  pid_t postmaster = 0;
  ASSERT_TRUE(pid_file >> postmaster);
  ASSERT_EQ(kill(postmaster, SIGKILL), 0);
  EmbeddedPostgres second(options_);
  Result<std::string> dsn = second.Start();
  ASSERT_TRUE(dsn.has_value()) << dsn.error().ToString();
  EXPECT_EQ(second.port(), port);
  pqxx::connection conn(*dsn);
  pqxx::work tx(conn);
  EXPECT_EQ(tx.exec1("SELECT v FROM survived")[0].as<int>(), 7);
  tx.commit();
  conn.disconnect();
  EXPECT_TRUE(second.Stop().has_value());
}

TEST_F(EmbeddedPgTest, MissingBinariesAreNotFound) {
  options_.bin_dir = dir_ / "no-such-bin";
  EmbeddedPostgres pg(options_);
  Result<std::string> dsn = pg.Start();
  ASSERT_FALSE(dsn.has_value());
  EXPECT_EQ(dsn.error().code, ErrorCode::kNotFound);
  EXPECT_NE(dsn.error().message.find("no-such-bin"), std::string::npos);
}

TEST_F(EmbeddedPgTest, RefusesADirectoryThatIsNotACluster) {
  fs::create_directories(options_.data_dir);
  std::ofstream(options_.data_dir / "notes.txt") << "mine";
  EmbeddedPostgres pg(options_);
  Result<std::string> dsn = pg.Start();
  ASSERT_FALSE(dsn.has_value());
  EXPECT_NE(dsn.error().message.find("no PostgreSQL cluster"), std::string::npos)
      << dsn.error().message;
}

}  // namespace
}  // namespace perfwarden::store
