// SPDX-License-Identifier: Apache-2.0
// Fixture for tests of PgStore: a fresh, migrated database (PgTest), a connection pool, the
// store, and a project named "proj".
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "tests/testing/ids.h"
#include "tests/testing/pg_cluster.h"
#include "wire/run_upload.h"

namespace perfwarden::testing {

// The commit shas and run ids of the store tests (tests/testing/ids.h, salted for them).
inline std::string StoreSha(int n) { return TestSha(n, 0x5a); }

// Run n of project "proj" on testbed ci-1, at commit `commit` (its parent: commit - 1): BM_A
// with three repetitions around `level` (median level + 1), BM_B with one of 2 x level.
inline wire::RunUpload SampleRun(int n, int commit, const std::string& branch = "main",
                                 double level = 100) {
  wire::RunUpload run;
  run.id = TestRunId(n);
  run.project = "proj";
  run.branch = branch;
  run.commit = {StoreSha(commit),
                {StoreSha(commit - 1)},
                "2024-05-01T10:00:00Z",
                "c" + std::to_string(commit),
                "Ann"};
  run.testbed = {"ci-1", R"({"cpu_model":"x"})"};
  run.results = {
      {"gb", "BM_A", "real_time", "ns", Direction::kLowerIsBetter, {level, level + 2, level + 1}},
      {"gb", "BM_B", "real_time", "ns", Direction::kLowerIsBetter, {2 * level}},
  };
  return run;
}

// What an analysis of one run returns for the tests that stand in for the detectors.
using RunAnalysis =
    std::function<Result<std::vector<store::HistorySeriesUpdate>>(const store::HistoryRunWork&)>;

// One run taken into history as the worker does it (claim, analyse, commit) with `analyse` in
// place of the detectors: an error from it ends the transaction uncommitted. nullopt when no
// run is pending.
inline Result<std::optional<store::HistoryRunResult>> AnalyseNextRun(
    store::HistoryStore& store, const std::vector<std::string>& tracked,
    const RunAnalysis& analyse) {
  auto run = store.BeginNextRun(tracked);
  if (!run) return tl::unexpected(run.error());
  if (*run == nullptr) return std::optional<store::HistoryRunResult>();
  auto updates = analyse((*run)->Work());
  if (!updates) return tl::unexpected(updates.error());
  auto result = (*run)->Commit(*updates);
  if (!result) return tl::unexpected(result.error());
  return std::optional<store::HistoryRunResult>(std::move(*result));
}

class PgStoreTest : public PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Result<store::MigrationReport> migrated = store::Migrate(dsn_);
    ASSERT_TRUE(migrated.has_value()) << migrated.error().ToString();
    store::PoolOptions options;
    options.dsn = dsn_;
    options.max_size = 10;
    pool_ = std::make_unique<store::ConnectionPool>(options);
    store_ = std::make_unique<store::PgStore>(*pool_);
    Result<store::Project> project = store_->CreateProject("proj", false);
    ASSERT_TRUE(project.has_value()) << project.error().ToString();
    project_ = *project;
  }

  std::unique_ptr<store::ConnectionPool> pool_;
  std::unique_ptr<store::PgStore> store_;
  store::Project project_;
};

// The store tests' runs and their fixture (stores_pgtest.cc, stores_read_pgtest.cc): run n of
// "proj" on ci-1 at commit Sha(commit), a PR build with three series, and a row counter.
namespace stores {

inline std::string Sha(int n) {
  char buffer[41];
  std::snprintf(buffer, sizeof(buffer), "%040x", n);
  return buffer;
}

inline std::string Uuid(int n) {
  char buffer[37];
  std::snprintf(buffer, sizeof(buffer), "00000000-0000-4000-8000-%012x", n);
  return buffer;
}

inline wire::RunUpload MakeRun(int n, const std::string& branch = "main", int commit = 1) {
  wire::RunUpload run;
  run.id = Uuid(n);
  run.project = "proj";
  run.branch = branch;
  run.commit = {Sha(commit), {Sha(commit + 1000)}, "2024-05-01T10:00:00Z", "fix things", "Ann"};
  run.testbed = {"ci-1", R"({"cores":8,"cpu_model":"x","gpu":[{"name":"H100"}]})"};
  run.ci.provider = "github";
  run.ci.pr = 7;
  run.started_at = "2024-05-01T10:00:00Z";
  run.finished_at = "2024-05-01T12:05:00.5+02:00";
  run.results = {
      {"gb", "BM_Sort/1024", "real_time", "ns", Direction::kLowerIsBetter, {1021.5, 1e-7, 3}},
      {"gb", "BM_Sort/1024", "items_per_second", "1/s", Direction::kHigherIsBetter, {5e9, 6e9}},
      {"train", "resnet", "real_time", "ns", Direction::kLowerIsBetter, {0.1, 0.2}},
  };
  return run;
}

class StoresTest : public PgStoreTest {
 protected:
  int64_t Count(const std::string& table) {
    return *pool_->WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
      return tx.exec("SELECT count(*) FROM " + tx.quote_name(table))[0][0].as<int64_t>();
    });
  }
};

}  // namespace stores

}  // namespace perfwarden::testing
