// SPDX-License-Identifier: Apache-2.0
// Sizes the two paths that must stay fast, printing timings (never asserting them: the
// machine is shared): bulk sample writes (bound unnest arrays vs COPY through
// pqxx::stream_to) for 500 benchmarks x 20 repetitions, and GetSeries over 10,000 commits x
// 10 repetitions (checked for content only).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"
#include "tests/testing/pg_cluster.h"

namespace perfwarden::store {
namespace {

using testing::PgTest;
using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

class StoresPerfTest : public PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(Migrate(dsn_).has_value());
    PoolOptions options;
    options.dsn = dsn_;
    pool_ = std::make_unique<ConnectionPool>(options);
    store_ = std::make_unique<PgStore>(*pool_);
    project_ = *store_->CreateProject("proj", false);
  }
  std::unique_ptr<ConnectionPool> pool_;
  std::unique_ptr<PgStore> store_;
  Project project_;
};

TEST_F(StoresPerfTest, SampleWritersUnnestVersusCopy) {
  // A stand-in table of the samples' shape without foreign keys, so both writers do the same.
  ASSERT_TRUE(pool_->WithTransaction<int>([](pqxx::work& tx) -> Result<int> {
    tx.exec(
        "CREATE TABLE s (run_id uuid, benchmark_id bigint, metric_id bigint, "
        "repetition integer, value double precision, PRIMARY KEY (run_id, benchmark_id, "
        "metric_id, repetition))");
    return 0;
  }));
  std::vector<int64_t> benchmark, metric;
  std::vector<int> repetition;
  std::vector<double> value;
  for (int b = 0; b < 500; ++b) {
    for (int r = 0; r < 20; ++r) {
      benchmark.push_back(b);
      metric.push_back(1);
      repetition.push_back(r);
      value.push_back(1000.0 + b + r / 7.0);
    }
  }
  double unnest_ms = 0, copy_ms = 0;
  for (int round = 0; round < 5; ++round) {
    const std::string a = "00000000-0000-4000-8000-" + std::string(11, '0') + std::to_string(round);
    const std::string c = "00000000-0000-4000-9000-" + std::string(11, '0') + std::to_string(round);
    Clock::time_point t0 = Clock::now();
    ASSERT_TRUE(pool_->WithTransaction<int>([&](pqxx::work& tx) -> Result<int> {
      tx.exec_params(
          "INSERT INTO s SELECT $1::uuid, b, m, r, v FROM unnest($2::bigint[], $3::bigint[], "
          "$4::int[], $5::float8[]) AS k(b, m, r, v)",
          a, pgutil::IntegerArray(benchmark), pgutil::IntegerArray(metric),
          pgutil::IntegerArray(repetition), pgutil::Float8Array(value));
      return 0;
    }));
    Clock::time_point t1 = Clock::now();
    ASSERT_TRUE(pool_->WithTransaction<int>([&](pqxx::work& tx) -> Result<int> {
      pqxx::stream_to stream(tx, "s");
      for (size_t i = 0; i < value.size(); ++i) {
        stream << std::make_tuple(c, benchmark[i], metric[i], repetition[i], value[i]);
      }
      stream.complete();
      return 0;
    }));
    Clock::time_point t2 = Clock::now();
    if (round > 0) {  // the first round warms the connection and caches
      unnest_ms += Ms(t1 - t0);
      copy_ms += Ms(t2 - t1);
    }
  }
  std::printf("10,000 samples per transaction, mean of 4: unnest %.1f ms, COPY %.1f ms\n",
              unnest_ms / 4, copy_ms / 4);
  EXPECT_EQ(*pool_->WithTransaction<int64_t>([](pqxx::work& tx) -> Result<int64_t> {
    return tx.exec("SELECT count(*) FROM s")[0][0].as<int64_t>();
  }),
            100000);
}

TEST_F(StoresPerfTest, SeriesOverTenThousandCommits) {
  // Rows written directly (10,000 ingests would take minutes under the sanitizers); one run
  // per commit, 10 repetitions, plus a second benchmark the query must skip.
  ASSERT_TRUE(pool_->WithTransaction<int>([&](pqxx::work& tx) -> Result<int> {
    tx.exec_params(
        "WITH b AS (INSERT INTO branches (project_id, name) VALUES ($1, 'main') RETURNING id), "
        "t AS (INSERT INTO testbeds (project_id, name) VALUES ($1, 'ci') RETURNING id) "
        "SELECT 1",
        project_.id);
    tx.exec_params(
        "INSERT INTO benchmarks (project_id, suite, name) VALUES ($1, 'gb', 'A'), ($1, 'gb', 'B')",
        project_.id);
    tx.exec_params(
        "INSERT INTO metrics (project_id, name, unit, direction) VALUES ($1, 'real_time', 'ns', "
        "'lower')",
        project_.id);
    tx.exec_params(
        "INSERT INTO commits (project_id, sha) SELECT $1, lpad(to_hex(g), 40, '0') "
        "FROM generate_series(1, 10000) g",
        project_.id);
    tx.exec_params(
        "INSERT INTO runs (id, project_id, branch_id, commit_id, testbed_id, upload, created_at) "
        "SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(c.id), 12, '0'))::uuid, $1, "
        "(SELECT id FROM branches), c.id, (SELECT id FROM testbeds), '{}', "
        "timestamptz '2024-01-01' + c.id * interval '1 minute' FROM commits c",
        project_.id);
    tx.exec(
        "INSERT INTO sample_sets (run_id, benchmark_id, metric_id, vals, project_id) "
        "SELECT r.id, b.id, m.id, "
        "ARRAY(SELECT 100 + g FROM generate_series(0, 9) g)::float8[], r.project_id FROM runs r, "
        "benchmarks b, metrics m");
    tx.exec("ANALYZE");
    return 0;
  }));
  SeriesQuery query;
  query.benchmark = "A";
  query.metric = "real_time";
  query.branch = "main";
  query.limit = 10000;
  Result<Series> series;
  double total_ms = 0;
  for (int round = 0; round < 4; ++round) {
    Clock::time_point t0 = Clock::now();
    series = store_->GetSeries(project_, query);
    if (round > 0) total_ms += Ms(Clock::now() - t0);
    ASSERT_TRUE(series) << series.error().ToString();
  }
  std::printf("GetSeries, 10,000 commits x 10 repetitions, mean of 3: %.1f ms\n", total_ms / 3);
  ASSERT_EQ(series->points.size(), 10000u);
  EXPECT_EQ(series->points.front().commit_sha, std::string(39, '0') + "1");
  EXPECT_EQ(series->points.back().values.size(), 10u);
  EXPECT_EQ(series->points.back().values[9], 109);
}

}  // namespace
}  // namespace perfwarden::store
