// SPDX-License-Identifier: Apache-2.0
// ConnectionPool against a real PostgreSQL: transactions commit or roll back, pqxx errors map
// to ErrorCodes, the pool answers kUnavailable while PostgreSQL is down and recovers after a
// restart without a failed request, and it stays within its size under concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "server/store/pool.h"
#include "tests/testing/pg_cluster.h"

namespace perfwarden::store {
namespace {

using testing::PgTest;

class PoolTest : public PgTest {
 protected:
  PoolOptions Options(int max_size = 4) const {
    PoolOptions options;
    options.dsn = dsn_;
    options.max_size = max_size;
    options.connect_timeout_s = 5;
    return options;
  }
  static Result<int64_t> Exec(ConnectionPool& pool, const std::string& sql) {
    return pool.WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
      pqxx::result r = tx.exec(sql);
      return r.empty() ? int64_t{0} : r[0][0].as<int64_t>();
    });
  }
};

TEST_F(PoolTest, CommitsOnValueRollsBackOnError) {
  ConnectionPool pool(Options());
  ASSERT_TRUE(Exec(pool, "CREATE TABLE t (k integer PRIMARY KEY, v integer CHECK (v >= 0))"));
  Result<int64_t> failed = pool.WithTransaction<int64_t>([](pqxx::work& tx) -> Result<int64_t> {
    tx.exec("INSERT INTO t VALUES (1, 1)");
    return InvalidArgument("changed my mind", "k");
  });
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().field, "k");
  EXPECT_EQ(*Exec(pool, "SELECT count(*) FROM t"), 0);

  ASSERT_TRUE(pool.WithTransaction<int64_t>([](pqxx::work& tx) -> Result<int64_t> {
    tx.exec_params("INSERT INTO t VALUES ($1, $2)", 1, 1);
    return 1;
  }));
  EXPECT_EQ(*Exec(pool, "SELECT count(*) FROM t"), 1);
}

TEST_F(PoolTest, MapsDatabaseErrorsToCodes) {
  ConnectionPool pool(Options());
  ASSERT_TRUE(Exec(pool, "CREATE TABLE t (k integer PRIMARY KEY, v integer CHECK (v >= 0))"));
  ASSERT_TRUE(Exec(pool, "INSERT INTO t VALUES (1, 1)"));
  EXPECT_EQ(Exec(pool, "INSERT INTO t VALUES (1, 2)").error().code, ErrorCode::kConflict);
  EXPECT_EQ(Exec(pool, "INSERT INTO t VALUES (2, -1)").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Exec(pool, "SELECT 'x'::integer").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Exec(pool, "SELEC 1").error().code, ErrorCode::kInternal);
  Result<int64_t> thrown = pool.WithTransaction<int64_t>(
      [](pqxx::work&) -> Result<int64_t> { throw std::runtime_error("bug"); });
  EXPECT_EQ(thrown.error().code, ErrorCode::kInternal);
  // Failed transactions do not poison the pooled connections.
  EXPECT_EQ(*Exec(pool, "SELECT count(*) FROM t"), 1);
}

// The database's text (the SQL, DETAIL and CONTEXT lines, the host and port) is logged, never
// returned: errors reach HTTP bodies.
TEST_F(PoolTest, ErrorsCarryAGenericMessageWithoutTheDatabasesText) {
  ConnectionPool pool(Options());
  ASSERT_TRUE(Exec(pool, "CREATE TABLE t (k integer PRIMARY KEY, name text)"));
  ASSERT_TRUE(Exec(pool, "INSERT INTO t VALUES (1, 'a')"));
  for (const char* sql : {"INSERT INTO t VALUES (1, 'b')", "SELECT convert_from('\\xff', 'UTF8')",
                          "SELECT 'x'::integer", "SELEC 1"}) {
    Result<int64_t> failed = Exec(pool, sql);
    ASSERT_FALSE(failed.has_value()) << sql;
    EXPECT_EQ(failed.error().message, "the database refused the request") << sql;
  }

  PoolOptions options = Options(1);
  options.dsn = "host=127.0.0.1 port=1 dbname=nothing user=nobody connect_timeout=2";
  ConnectionPool unreachable(options);
  Result<int64_t> down = Exec(unreachable, "SELECT 1");
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(down.error().message, "the database is unavailable");
}

TEST_F(PoolTest, AStatementPastTheTimeoutIsCancelledAndTheConnectionKept) {
  PoolOptions options = Options(1);
  options.statement_timeout_ms = 200;
  ConnectionPool pool(options);
  Result<int64_t> slow = Exec(pool, "SELECT 1 FROM pg_sleep(30)");
  ASSERT_FALSE(slow.has_value());
  EXPECT_EQ(slow.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(slow.error().message, "statement timeout");
  // The same (only) connection answers the next request.
  EXPECT_EQ(*Exec(pool, "SELECT 7"), 7);
  EXPECT_EQ(pool.Stats().discarded, 0u);
  EXPECT_EQ(*Exec(pool,
                  "SELECT setting::bigint FROM pg_settings WHERE name = "
                  "'idle_in_transaction_session_timeout'"),
            200);
}

TEST_F(PoolTest, UnavailableWhilePostgresIsDownThenRecovers) {
  ConnectionPool pool(Options());
  ASSERT_TRUE(Exec(pool, "SELECT 1"));
  ASSERT_TRUE(cluster_->Stop());

  Result<int64_t> down = Exec(pool, "SELECT 1");
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable) << down.error().ToString();
  Result<Lease> lease = pool.Acquire();
  ASSERT_FALSE(lease.has_value());
  EXPECT_EQ(lease.error().code, ErrorCode::kUnavailable);
  EXPECT_GE(pool.Stats().connect_failures, 1u);
  EXPECT_EQ(pool.Stats().in_use, 0);

  ASSERT_TRUE(cluster_->Start());
  Result<int64_t> up = Exec(pool, "SELECT 7");
  ASSERT_TRUE(up.has_value()) << up.error().ToString();
  EXPECT_EQ(*up, 7);
}

TEST_F(PoolTest, FirstRequestAfterARestartSucceeds) {
  // Idle connections made before the restart are dead; the pool must notice and reconnect
  // instead of failing the first request that picks one up.
  ConnectionPool pool(Options(3));
  {
    std::vector<Lease> leases;
    for (int i = 0; i < 3; ++i) leases.push_back(*pool.Acquire());
  }
  ASSERT_EQ(pool.Stats().size, 3);
  ASSERT_TRUE(cluster_->Stop());
  ASSERT_TRUE(cluster_->Start());
  for (int i = 0; i < 3; ++i) {
    Result<int64_t> r = Exec(pool, "SELECT 1");
    ASSERT_TRUE(r.has_value()) << i << ": " << r.error().ToString();
  }
  EXPECT_GE(pool.Stats().discarded, 1u);
}

TEST_F(PoolTest, AConnectionKilledDuringATransactionIsReplaced) {
  ConnectionPool pool(Options(2));
  Result<int64_t> killed = pool.WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
    tx.exec("SELECT 1");
    pqxx::connection admin(dsn_);
    pqxx::nontransaction(admin).exec_params("SELECT pg_terminate_backend($1)",
                                            tx.conn().backendpid());
    tx.exec("SELECT 2");  // throws: the server ended this session
    return 2;
  });
  ASSERT_FALSE(killed.has_value());
  EXPECT_EQ(killed.error().code, ErrorCode::kUnavailable) << killed.error().ToString();
  EXPECT_EQ(pool.Stats().size, 0);
  EXPECT_EQ(*Exec(pool, "SELECT 3"), 3);
}

TEST_F(PoolTest, ExhaustedPoolTimesOutWithUnavailable) {
  PoolOptions options = Options(1);
  options.acquire_timeout = std::chrono::milliseconds(50);
  ConnectionPool pool(options);
  Result<Lease> held = pool.Acquire();
  ASSERT_TRUE(held.has_value());
  Result<Lease> second = pool.Acquire();
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(pool.Stats().acquire_timeouts, 1u);
  *held = Lease();  // give it back
  EXPECT_TRUE(pool.Acquire().has_value());
}

TEST_F(PoolTest, ConcurrentTransactionsStayWithinMaxSize) {
  ConnectionPool pool(Options(3));
  ASSERT_TRUE(Exec(pool, "CREATE TABLE c (n integer)"));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        if (!Exec(pool, "INSERT INTO c VALUES (1)")) ++failures;
        if (pool.Stats().size > 3) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*Exec(pool, "SELECT count(*) FROM c"), 200);
  PoolStats stats = pool.Stats();
  EXPECT_EQ(stats.in_use, 0);
  EXPECT_LE(stats.size, 3);
  EXPECT_EQ(stats.connect_failures, 0u);
}

TEST_F(PoolTest, ClosedPoolRefusesLeases) {
  ConnectionPool pool(Options());
  ASSERT_TRUE(Exec(pool, "SELECT 1"));
  pool.Close();
  EXPECT_EQ(pool.Acquire().error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(pool.Stats().size, 0);
}

TEST(ConnectTimeoutTest, AddsTheSettingInBothDsnForms) {
  EXPECT_EQ(WithConnectTimeout("host=h", 5), "host=h connect_timeout=5");
  EXPECT_EQ(WithConnectTimeout("postgresql://h/db", 5), "postgresql://h/db?connect_timeout=5");
  EXPECT_EQ(WithConnectTimeout("postgres://h/db?sslmode=disable", 5),
            "postgres://h/db?sslmode=disable&connect_timeout=5");
  EXPECT_EQ(WithConnectTimeout("host=h connect_timeout=1", 5), "host=h connect_timeout=1");
}

}  // namespace
}  // namespace perfwarden::store
