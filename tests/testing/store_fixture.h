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

namespace perfgate::testing {

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

}  // namespace perfgate::testing
