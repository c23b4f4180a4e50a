// SPDX-License-Identifier: Apache-2.0
// Migrator against a real PostgreSQL: applies on an empty database, is idempotent, serialises
// concurrent servers with the advisory lock, refuses edited or unknown migrations.
#include <gtest/gtest.h>

#include <fstream>
#include <pqxx/pqxx>
#include <set>
#include <thread>
#include <vector>

#include "server/store/migrator.h"
#include "tests/testing/pg_cluster.h"

namespace perfwarden::store {
namespace {

namespace fs = std::filesystem;
using testing::PgTest;

int64_t QueryInt(const std::string& dsn, const std::string& sql) {
  pqxx::connection conn(dsn);
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

class MigratorTest : public PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    dir_ = cluster_->temp_dir() / ("migrations-" + std::to_string(counter_++));
    fs::create_directories(dir_);
    fs::copy(MigratorOptions::DefaultMigrationsDir(), dir_);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  MigratorOptions Options() const {
    MigratorOptions options;
    options.dir = dir_;
    return options;
  }
  // Applies the migrations before `first_held` (a file name prefix such as "0004") and sets the
  // others aside for ApplyHeld.
  void MigrateBefore(const std::string& first_held) {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir_)) {
      if (entry.path().filename().string() >= first_held) held_.push_back(entry.path().filename());
    }
    ASSERT_FALSE(held_.empty());
    fs::create_directories(HeldDir());
    for (const fs::path& file : held_) fs::rename(dir_ / file, HeldDir() / file);
    Result<MigrationReport> report = Migrate(dsn_, Options());
    ASSERT_TRUE(report.has_value()) << report.error().ToString();
  }
  // Puts the held migrations back and applies them, `first` first.
  void ApplyHeld(const std::string& first) {
    for (const fs::path& file : held_) fs::rename(HeldDir() / file, dir_ / file);
    held_.clear();
    Result<MigrationReport> report = Migrate(dsn_, Options());
    ASSERT_TRUE(report.has_value()) << report.error().ToString();
    EXPECT_EQ(report->applied.front(), first);
  }
  // Whether `sql`, committed in one transaction, fails.
  static bool Fails(pqxx::connection& conn, const std::string& sql) {
    try {
      pqxx::work tx(conn);
      tx.exec(sql);
      tx.commit();
      return false;
    } catch (const pqxx::sql_error&) {
      return true;
    }
  }
  fs::path HeldDir() const { return dir_.parent_path() / (dir_.filename().string() + "-held"); }

  static inline int counter_ = 0;
  fs::path dir_;
  std::vector<fs::path> held_;  // file names
};

TEST_F(MigratorTest, AppliesOnEmptyDatabaseThenNothing) {
  MigratorOptions options;  // the real migrations/ of the source tree
  Result<MigrationReport> first = Migrate(dsn_, options);
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  Result<std::vector<Migration>> files = LoadMigrations(options.dir);
  ASSERT_TRUE(files.has_value());
  ASSERT_EQ(first->applied.size(), files->size());
  EXPECT_EQ(first->applied.front(), "0001_create_schema");
  EXPECT_EQ(first->version, files->back().version);
  for (const char* table :
       {"projects", "tokens", "testbeds", "branches", "commits", "runs", "benchmarks", "metrics",
        "samples", "verdicts", "change_points", "alerts", "alert_events", "bisect_jobs",
        "history_series", "history_points"}) {
    EXPECT_EQ(QueryInt(dsn_, std::string("SELECT count(*) FROM ") + table), 0) << table;
  }
  EXPECT_EQ(QueryInt(dsn_, "SELECT count(*) FROM schema_migrations"),
            static_cast<int64_t>(files->size()));

  Result<MigrationReport> second = Migrate(dsn_, options);
  ASSERT_TRUE(second.has_value()) << second.error().ToString();
  EXPECT_TRUE(second->applied.empty());
  EXPECT_EQ(second->version, first->version);
}

TEST_F(MigratorTest, SchemaRejectsBadValues) {
  ASSERT_TRUE(Migrate(dsn_, Options()).has_value());
  pqxx::connection conn(dsn_);
  auto fails = [&](const std::string& sql) { return Fails(conn, sql); };
  EXPECT_FALSE(fails("INSERT INTO projects (name) VALUES ('p')"));
  EXPECT_TRUE(fails("INSERT INTO projects (name) VALUES ('p')"));  // unique
  EXPECT_TRUE(fails("INSERT INTO metrics (project_id, name, direction) VALUES (1, 'm', 'up')"));
  EXPECT_TRUE(fails("INSERT INTO tokens (token_hash, scopes) VALUES ('ab', '{read}')"));
  EXPECT_TRUE(fails("INSERT INTO tokens (token_hash, scopes) VALUES (repeat('a', 64), '{write}')"));
  EXPECT_FALSE(
      fails("INSERT INTO testbeds (project_id, name, fingerprint) "
            "VALUES (1, 'tb', '{\"b\": 1, \"a\": 2}')"));
  // The same fingerprint with keys in another order is the same testbed.
  EXPECT_TRUE(
      fails("INSERT INTO testbeds (project_id, name, fingerprint) "
            "VALUES (1, 'tb', '{\"a\": 2, \"b\": 1}')"));
  EXPECT_FALSE(
      fails("INSERT INTO testbeds (project_id, name, fingerprint) "
            "VALUES (1, 'tb', '{\"a\": 3, \"b\": 1}')"));
}

TEST_F(MigratorTest, RacingMigratorsApplyEachMigrationOnce) {
  Write("9002_create_counter.sql",
        "CREATE TABLE counter (n integer);\nINSERT INTO counter VALUES (1);\n");
  Write("9003_bump_counter.sql", "UPDATE counter SET n = n + 1;\n");
  constexpr int kThreads = 6;
  std::vector<Result<MigrationReport>> reports(kThreads, MigrationReport{});
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { reports[i] = Migrate(dsn_, Options()); });
  }
  for (auto& t : threads) t.join();
  std::multiset<std::string> applied;
  for (const auto& report : reports) {
    ASSERT_TRUE(report.has_value()) << report.error().ToString();
    EXPECT_EQ(report->version, 9003);
    applied.insert(report->applied.begin(), report->applied.end());
  }
  // Every migration (the real ones copied into dir_, and the two above) applied exactly once.
  Result<std::vector<Migration>> files = LoadMigrations(dir_);
  ASSERT_TRUE(files.has_value());
  std::multiset<std::string> expected;
  for (const auto& m : *files) expected.insert(m.name);
  EXPECT_EQ(applied, expected);
  EXPECT_EQ(expected.count("9002_create_counter"), 1u);
  EXPECT_EQ(QueryInt(dsn_, "SELECT n FROM counter"), 2);
  EXPECT_EQ(QueryInt(dsn_, "SELECT count(*) FROM schema_migrations"),
            static_cast<int64_t>(expected.size()));
}

TEST_F(MigratorTest, RefusesAChangedMigration) {
  Write("9002_create_thing.sql", "CREATE TABLE thing (a integer);\n");
  ASSERT_TRUE(Migrate(dsn_, Options()).has_value());
  Write("9002_create_thing.sql", "CREATE TABLE thing (a bigint);\n");
  Result<MigrationReport> report = Migrate(dsn_, Options());
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kConflict);
  EXPECT_NE(report.error().message.find("9002_create_thing was changed"), std::string::npos)
      << report.error().message;
}

TEST_F(MigratorTest, RefusesADatabaseNewerThanTheFiles) {
  Write("9002_create_thing.sql", "CREATE TABLE thing (a integer);\n");
  ASSERT_TRUE(Migrate(dsn_, Options()).has_value());
  fs::remove(dir_ / "9002_create_thing.sql");
  Result<MigrationReport> report = Migrate(dsn_, Options());
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kConflict);
  EXPECT_NE(report.error().message.find("9002_create_thing"), std::string::npos);
}

TEST_F(MigratorTest, AFailingMigrationIsRolledBackAndCanBeFixed) {
  Write("9002_create_thing.sql", "CREATE TABLE thing (a integer);\nSELECT 1 / 0;\n");
  Result<MigrationReport> report = Migrate(dsn_, Options());
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kInternal);
  EXPECT_NE(report.error().message.find("apply migration 9002_create_thing"), std::string::npos)
      << report.error().message;
  // Only the real migrations (copied into dir_) are recorded: the failing one left no trace.
  EXPECT_EQ(QueryInt(dsn_, "SELECT count(*) FROM schema_migrations"),
            static_cast<int64_t>(LoadMigrations(dir_)->size()) - 1);
  EXPECT_EQ(QueryInt(dsn_, "SELECT count(*) FROM pg_tables WHERE tablename = 'thing'"), 0);

  Write("9002_create_thing.sql", "CREATE TABLE thing (a integer);\n");
  report = Migrate(dsn_, Options());
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->applied, std::vector<std::string>{"9002_create_thing"});
}

TEST_F(MigratorTest, PackingSamplesKeepsEveryValueInRepetitionOrder) {
  // A database at version 0003 with per-repetition samples, then migration 0004.
  ASSERT_NO_FATAL_FAILURE(MigrateBefore("0004"));
  {
    pqxx::connection conn(dsn_);
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO projects (name) VALUES ('p');"
        "INSERT INTO branches (project_id, name) VALUES (1, 'main');"
        "INSERT INTO testbeds (project_id, name) VALUES (1, 'tb');"
        "INSERT INTO commits (project_id, sha) VALUES (1, repeat('a', 40));"
        "INSERT INTO benchmarks (project_id, suite, name) VALUES (1, 's', 'A'), (1, 's', 'B');"
        "INSERT INTO metrics (project_id, name, direction) VALUES (1, 'real_time', 'lower');"
        "INSERT INTO runs (id, project_id, branch_id, commit_id, testbed_id, upload) VALUES "
        " ('00000000-0000-4000-8000-000000000001', 1, 1, 1, 1, '{}');"
        // Inserted out of order: the packed array must follow the repetition index.
        "INSERT INTO samples VALUES "
        " ('00000000-0000-4000-8000-000000000001', 1, 1, 2, 12.5),"
        " ('00000000-0000-4000-8000-000000000001', 1, 1, 0, 10.5),"
        " ('00000000-0000-4000-8000-000000000001', 1, 1, 1, 11.5),"
        " ('00000000-0000-4000-8000-000000000001', 2, 1, 0, 7);");
    tx.commit();
  }
  ASSERT_NO_FATAL_FAILURE(ApplyHeld("0004_pack_samples_into_sample_sets"));

  pqxx::connection conn(dsn_);
  pqxx::nontransaction tx(conn);
  EXPECT_EQ(
      tx.exec1("SELECT vals::text FROM sample_sets WHERE benchmark_id = 1")[0].as<std::string>(),
      "{10.5,11.5,12.5}");
  EXPECT_EQ(
      tx.exec1("SELECT vals::text FROM sample_sets WHERE benchmark_id = 2")[0].as<std::string>(),
      "{7}");
  // The samples view gives back the one-row-per-repetition shape.
  EXPECT_EQ(tx.exec1("SELECT string_agg(repetition || ':' || value, ',' ORDER BY repetition) "
                     "FROM samples WHERE benchmark_id = 1")[0]
                .as<std::string>(),
            "0:10.5,1:11.5,2:12.5");
  // Deleting the run deletes its sets (the foreign key cascades).
  tx.exec("DELETE FROM runs");
  EXPECT_EQ(QueryInt(dsn_, "SELECT count(*) FROM sample_sets"), 0);
}

TEST_F(MigratorTest, RunIdsBecomeUniquePerProjectWithoutLosingData) {
  // A database at version 0015 with a run, its sample set and its verdict in each of two
  // projects, then migration 0015.
  ASSERT_NO_FATAL_FAILURE(MigrateBefore("0015"));
  const std::string u1 = "'00000000-0000-4000-8000-000000000001'";
  const std::string u2 = "'00000000-0000-4000-8000-000000000002'";
  auto run_of = [](const std::string& id, int project) {
    const std::string p = std::to_string(project);
    return "INSERT INTO runs (id, project_id, branch_id, commit_id, testbed_id, upload) VALUES (" +
           id + ", " + p + ", " + p + ", " + p + ", " + p + ", '{}');";
  };
  {
    pqxx::connection conn(dsn_);
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO projects (name) VALUES ('p'), ('q');"
        "INSERT INTO branches (project_id, name) VALUES (1, 'main'), (2, 'main');"
        "INSERT INTO testbeds (project_id, name) VALUES (1, 'tb'), (2, 'tb');"
        "INSERT INTO commits (project_id, sha) VALUES (1, repeat('a', 40)), (2, repeat('b', 40));"
        "INSERT INTO benchmarks (project_id, suite, name) VALUES (1, 's', 'A'), (2, 's', 'A');"
        "INSERT INTO metrics (project_id, name, direction) VALUES (1, 'real_time', 'lower'),"
        " (2, 'real_time', 'lower');" +
        run_of(u1, 1) + run_of(u2, 2) + "INSERT INTO sample_sets VALUES (" + u1 +
        ", 1, 1, '{1,2,3}'), (" + u2 +
        ", 2, 2, '{4,5}');"
        "INSERT INTO verdicts (run_id, outcome, algorithm_version) VALUES (" +
        u1 + ", 'pass', 'v'), (" + u2 + ", 'regression', 'v');");
    tx.commit();
  }
  ASSERT_NO_FATAL_FAILURE(ApplyHeld("0015_run_ids_per_project"));

  pqxx::connection conn(dsn_);
  auto text = [&](const std::string& sql) {
    pqxx::nontransaction tx(conn);
    return tx.exec1(sql)[0].as<std::string>();
  };
  auto fails = [&](const std::string& sql) { return Fails(conn, sql); };
  // Every row kept, each child with its run's project.
  EXPECT_EQ(text("SELECT string_agg(project_id || ' ' || right(run_id::text, 1) || ' ' || "
                 "vals::text, ',' ORDER BY project_id) FROM sample_sets"),
            "1 1 {1,2,3},2 2 {4,5}");
  EXPECT_EQ(text("SELECT string_agg(project_id || ' ' || right(run_id::text, 1) || ' ' || outcome, "
                 "',' ORDER BY project_id) FROM verdicts"),
            "1 1 pass,2 2 regression");
  // Project q may now hold run id 1 too, once; p may not hold it twice.
  EXPECT_FALSE(fails(run_of(u1, 2) +
                     "INSERT INTO sample_sets (project_id, run_id, benchmark_id, metric_id, vals) "
                     "VALUES (2, " +
                     u1 +
                     ", 2, 2, '{6}');"
                     "INSERT INTO verdicts (project_id, run_id, outcome, algorithm_version) "
                     "VALUES (2, " +
                     u1 + ", 'no_baseline', 'v')"));
  EXPECT_TRUE(fails(run_of(u1, 1)));
  // A child names its run with the run's project: run 2 is not in p.
  EXPECT_TRUE(
      fails("INSERT INTO sample_sets (project_id, run_id, benchmark_id, metric_id, vals) "
            "VALUES (1, " +
            u2 + ", 1, 1, '{1}')"));
  // The views tell the two runs of id 1 apart.
  EXPECT_EQ(text("SELECT string_agg(project || ' ' || value, ',' ORDER BY project) FROM "
                 "perfwarden_views.series_points WHERE run_id = " +
                 u1),
            "p 2,q 6");
  EXPECT_EQ(text("SELECT string_agg(project || ' ' || outcome || ' ' || latest, ',' "
                 "ORDER BY project) FROM perfwarden_views.verdicts WHERE run_id = " +
                 u1),
            "p pass true,q no_baseline true");
  EXPECT_EQ(text("SELECT string_agg(project_id || ' ' || value, ',' ORDER BY project_id, "
                 "repetition) FROM samples WHERE run_id = " +
                 u1),
            "1 1,1 2,1 3,2 6");
  // Deleting q's run 1 leaves p's run 1, its sets and its verdict.
  EXPECT_FALSE(fails("DELETE FROM runs WHERE project_id = 2 AND id = " + u1));
  EXPECT_EQ(text("SELECT count(*) || ' ' || min(project_id) FROM sample_sets WHERE run_id = " + u1),
            "1 1");
  EXPECT_EQ(text("SELECT count(*) || ' ' || min(project_id) FROM verdicts WHERE run_id = " + u1),
            "1 1");
}

TEST_F(MigratorTest, SampleSetsRejectNonFiniteAndEmptyValues) {
  ASSERT_TRUE(Migrate(dsn_, Options()).has_value());
  pqxx::connection conn(dsn_);
  {
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO projects (name) VALUES ('p');"
        "INSERT INTO branches (project_id, name) VALUES (1, 'main');"
        "INSERT INTO testbeds (project_id, name) VALUES (1, 'tb');"
        "INSERT INTO commits (project_id, sha) VALUES (1, repeat('a', 40));"
        "INSERT INTO benchmarks (project_id, suite, name) VALUES (1, 's', 'A');"
        "INSERT INTO metrics (project_id, name, direction) VALUES (1, 'real_time', 'lower');"
        "INSERT INTO runs (id, project_id, branch_id, commit_id, testbed_id, upload) VALUES "
        " ('00000000-0000-4000-8000-000000000001', 1, 1, 1, 1, '{}');");
    tx.commit();
  }
  auto fails = [&](const std::string& vals) {
    try {
      pqxx::work tx(conn);
      tx.exec(
          "INSERT INTO sample_sets (project_id, run_id, benchmark_id, metric_id, vals) VALUES "
          "(1, '00000000-0000-4000-8000-000000000001', 1, 1, '" +
          vals + "')");
      tx.abort();
      return false;
    } catch (const pqxx::sql_error&) {
      return true;
    }
  };
  EXPECT_FALSE(fails("{1.5,2}"));
  EXPECT_TRUE(fails("{1.5,NaN}"));
  EXPECT_TRUE(fails("{Infinity}"));
  EXPECT_TRUE(fails("{-Infinity,1}"));
  EXPECT_TRUE(fails("{1,NULL}"));
  EXPECT_TRUE(fails("{}"));
  EXPECT_TRUE(fails("{{1,2},{3,4}}"));
  EXPECT_TRUE(fails("[0:1]={1,2}"));
}

TEST_F(MigratorTest, ExistingAlertsGetAGroupPerRangeAndWentAwayIsAState) {
  // A database at version 0015 with three alerts (two of one commit range, on two series) and a
  // bisect of one of them, then migration 0016.
  ASSERT_NO_FATAL_FAILURE(MigrateBefore("0016"));
  {
    pqxx::connection conn(dsn_);
    pqxx::work tx(conn);
    tx.exec(
        "INSERT INTO projects (name) VALUES ('p');"
        "INSERT INTO branches (project_id, name) VALUES (1, 'main');"
        "INSERT INTO testbeds (project_id, name) VALUES (1, 'tb');"
        "INSERT INTO commits (project_id, sha) SELECT 1, repeat(c, 40) "
        "FROM unnest(ARRAY['a', 'b', 'c', 'd']) c;"
        "INSERT INTO benchmarks (project_id, suite, name) VALUES (1, 's', 'A'), (1, 's', 'B');"
        "INSERT INTO metrics (project_id, name, direction) VALUES (1, 'real_time', 'lower');"
        "INSERT INTO history_series (project_id, branch_id, testbed, benchmark_id, metric_id, "
        "length) VALUES (1, 1, 'tb', 1, 1, 4), (1, 1, 'tb', 2, 1, 4);"
        "INSERT INTO history_points (series_id, position, commit_id, testbed_id, run_ids, vals, "
        "level) SELECT s, p, p + 1, 1, '{}', '{1}', 1 FROM generate_series(1, 2) s, "
        "generate_series(0, 3) p;"
        "INSERT INTO alerts (project_id, series_id, position, last_good_commit_id, "
        "first_bad_commit_id, kind, cause, magnitude, p_value, q_value, level_before, "
        "level_after, detectors) VALUES (1, 1, 2, 2, 3, 'regression', 'code', 0.1, 0, 0, 1, 1.1, "
        "'{}'), (1, 2, 2, 2, 3, 'regression', 'code', 0.1, 0, 0, 1, 1.1, '{}'), "
        "(1, 2, 3, 3, 4, 'improvement', 'code', -0.1, 0, 0, 1.1, 1, '{}');"
        "INSERT INTO bisect_jobs (project_id, alert_id, good_sha, bad_sha) "
        "VALUES (1, 2, repeat('b', 40), repeat('c', 40));");
    tx.commit();
  }
  ASSERT_NO_FATAL_FAILURE(ApplyHeld("0016_group_alerts"));
  pqxx::connection conn(dsn_);
  auto text = [&](const std::string& sql) {
    pqxx::nontransaction tx(conn);
    return tx.exec1(sql)[0].as<std::string>();
  };
  EXPECT_EQ(text("SELECT string_agg(a.id || ':' || g.last_good_commit_id || '..' || "
                 "g.first_bad_commit_id, ',' ORDER BY a.id) FROM alerts a "
                 "JOIN alert_groups g ON g.id = a.group_id"),
            "1:2..3,2:2..3,3:3..4");
  EXPECT_EQ(QueryInt(dsn_, "SELECT count(DISTINCT group_id) FROM alerts"), 2);
  EXPECT_EQ(QueryInt(dsn_,
                     "SELECT count(*) FROM alerts a JOIN alerts b ON a.group_id = "
                     "b.group_id AND a.id = 1 AND b.id = 2"),
            1);
  EXPECT_EQ(QueryInt(dsn_,
                     "SELECT count(*) FROM bisect_jobs j JOIN alerts a ON a.id = 2 "
                     "AND j.group_id = a.group_id"),
            1);
  EXPECT_FALSE(Fails(conn, "UPDATE alerts SET state = 'went_away' WHERE id = 3"));
  EXPECT_TRUE(Fails(conn, "UPDATE alerts SET state = 'gone' WHERE id = 3"));
}

TEST_F(MigratorTest, RejectsBadFileNames) {
  Write("2_create_thing.sql", "SELECT 1;\n");
  Result<std::vector<Migration>> files = LoadMigrations(dir_);
  ASSERT_FALSE(files.has_value());
  EXPECT_EQ(files.error().code, ErrorCode::kInvalidArgument);
  fs::remove(dir_ / "2_create_thing.sql");

  Write("0001_create_other.sql", "SELECT 1;\n");
  files = LoadMigrations(dir_);
  ASSERT_FALSE(files.has_value());
  EXPECT_NE(files.error().message.find("share version 0001"), std::string::npos);
  fs::remove(dir_ / "0001_create_other.sql");

  Write("README.md", "not a migration");  // non-.sql files are ignored
  EXPECT_TRUE(LoadMigrations(dir_).has_value());
  EXPECT_FALSE(LoadMigrations(dir_ / "missing").has_value());
}

TEST_F(MigratorTest, UnreachableDatabaseIsUnavailable) {
  MigratorOptions options = Options();
  options.connect_timeout_s = 2;
  // Port 1 on loopback: refused at once.
  Result<MigrationReport> report = Migrate("host=127.0.0.1 port=1 dbname=x user=x", options);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code, ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace perfwarden::store
