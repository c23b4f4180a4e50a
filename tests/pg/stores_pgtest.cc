// SPDX-License-Identifier: Apache-2.0
// PgStore against a real, migrated PostgreSQL: projects, tokens, ingest (round trip,
// idempotency, conflicts, rollback on failure, concurrent posts of one id). Listing runs, series
// and sample sets are stores_read_pgtest.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <thread>
#include <vector>

#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

using ::perfwarden::testing::stores::MakeRun;
using ::perfwarden::testing::stores::Sha;
using ::perfwarden::testing::stores::StoresTest;
using ::perfwarden::testing::stores::Uuid;

TEST_F(StoresTest, Projects) {
  EXPECT_EQ(project_.name, "proj");
  EXPECT_FALSE(project_.public_read);
  EXPECT_EQ(project_.created_at.size(), 24u) << project_.created_at;  // ....SS.mmmZ
  EXPECT_EQ(store_->CreateProject("proj", true).error().code, ErrorCode::kConflict);
  ASSERT_TRUE(store_->CreateProject("another", true));
  Result<std::vector<Project>> all = store_->ListProjects();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "another");
  EXPECT_TRUE((*all)[0].public_read);
  Result<Project> got = store_->GetProject("proj");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->id, project_.id);
  EXPECT_EQ(store_->GetProject("nope").error().code, ErrorCode::kNotFound);
}

TEST_F(StoresTest, Tokens) {
  EXPECT_FALSE(*store_->HasAdminToken());
  NewToken admin{std::nullopt, "admin", "pwt_aaaa", std::string(64, 'a'), {"admin"}};
  Result<TokenRecord> a = store_->CreateToken(admin);
  ASSERT_TRUE(a) << a.error().ToString();
  EXPECT_FALSE(a->project_id);
  EXPECT_EQ(a->project, "");
  EXPECT_TRUE(*store_->HasAdminToken());
  NewToken ci{project_.id, "ci", "pwt_bbbb", std::string(64, 'b'), {"ingest", "read"}};
  Result<TokenRecord> b = store_->CreateToken(ci);
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ(b->project, "proj");
  EXPECT_EQ(b->scopes, (std::vector<std::string>{"ingest", "read"}));
  EXPECT_EQ(store_->CreateToken(ci).error().code, ErrorCode::kConflict);  // same hash

  Result<TokenRecord> found = store_->FindTokenByHash(std::string(64, 'b'));
  ASSERT_TRUE(found) << found.error().ToString();
  EXPECT_EQ(found->id, b->id);
  EXPECT_EQ(found->prefix, "pwt_bbbb");
  EXPECT_FALSE(found->revoked);
  EXPECT_EQ(*pool_->WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
    return tx.exec("SELECT count(*) FROM tokens WHERE last_used_at IS NOT NULL")[0][0]
        .as<int64_t>();
  }),
            1);
  EXPECT_EQ(store_->FindTokenByHash(std::string(64, 'c')).error().code, ErrorCode::kNotFound);

  EXPECT_EQ(store_->ListTokens(std::nullopt)->size(), 2u);
  EXPECT_EQ(store_->ListTokens(project_.id)->size(), 1u);
  EXPECT_TRUE(*store_->RevokeToken(b->id));
  EXPECT_TRUE(store_->FindTokenByHash(std::string(64, 'b'))->revoked);
  EXPECT_FALSE(*store_->RevokeToken(9999));
  EXPECT_TRUE(*store_->RevokeToken(a->id));
  EXPECT_FALSE(*store_->HasAdminToken());
}

// samples has no foreign keys (migration 0002: they cost one query per row); deleting runs,
// directly or through a project's cascade, must still delete their samples.
TEST_F(StoresTest, DeletingRunsDeletesTheirSamples) {
  ASSERT_TRUE(store_->IngestRun(project_, MakeRun(1)));
  ASSERT_TRUE(store_->IngestRun(project_, MakeRun(2)));
  ASSERT_EQ(Count("samples"), 14);
  auto exec = [&](const std::string& sql) {
    auto done = pool_->WithTransaction<bool>([&](pqxx::work& tx) -> Result<bool> {
      tx.exec(sql);
      return true;
    });
    ASSERT_TRUE(done) << done.error().ToString();
  };
  exec("DELETE FROM runs WHERE id = '" + MakeRun(1).id + "'");
  EXPECT_EQ(Count("runs"), 1);
  EXPECT_EQ(Count("samples"), 7);
  exec("DELETE FROM projects WHERE name = 'proj'");
  EXPECT_EQ(Count("runs"), 0);
  EXPECT_EQ(Count("samples"), 0);
}

TEST_F(StoresTest, IngestRoundTrip) {
  const wire::RunUpload run = MakeRun(1);
  Result<IngestOutcome> outcome = store_->IngestRun(project_, run);
  ASSERT_TRUE(outcome) << outcome.error().ToString();
  EXPECT_TRUE(outcome->created);
  EXPECT_EQ(outcome->run.id, run.id);
  EXPECT_EQ(outcome->run.project, "proj");
  EXPECT_EQ(outcome->run.branch, "main");
  EXPECT_EQ(outcome->run.commit_sha, Sha(1));
  EXPECT_EQ(outcome->run.testbed, "ci-1");
  EXPECT_EQ(outcome->run.pr, 7);
  EXPECT_EQ(outcome->run.started_at, "2024-05-01T10:00:00.000Z");
  EXPECT_EQ(outcome->run.finished_at, "2024-05-01T10:05:00.500Z");
  EXPECT_EQ(outcome->run.sample_count, 7);
  EXPECT_EQ(Count("samples"), 7);
  // The run row keeps the upload without its values (they are in samples once) and the
  // digest of the full upload (migration 0003); GetRun below puts the values back.
  EXPECT_EQ(*pool_->WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
    return tx
        .exec(
            "SELECT count(*) FROM runs, jsonb_array_elements(upload->'results') AS r "
            "WHERE jsonb_array_length(r->'values') = 0 AND upload_sha256 IS NOT NULL")[0][0]
        .as<int64_t>();
  }),
            static_cast<int64_t>(run.results.size()));

  Result<StoredRun> stored = store_->GetRun(project_, run.id);
  ASSERT_TRUE(stored) << stored.error().ToString();
  EXPECT_EQ(stored->upload, run);
  EXPECT_EQ(wire::EncodeRunUpload(stored->upload), wire::EncodeRunUpload(run));
  EXPECT_EQ(stored->summary.created_at, outcome->run.created_at);
  EXPECT_EQ(store_->GetRun(project_, Uuid(2)).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->GetRun(project_, "not-a-uuid").error().code, ErrorCode::kNotFound);
  Project other = *store_->CreateProject("other", false);
  EXPECT_EQ(store_->GetRun(other, run.id).error().code, ErrorCode::kNotFound);

  Result<std::vector<BenchmarkInfo>> benchmarks = store_->ListBenchmarks(project_);
  ASSERT_TRUE(benchmarks);
  ASSERT_EQ(benchmarks->size(), 2u);
  EXPECT_EQ((*benchmarks)[0].suite, "gb");
  EXPECT_EQ((*benchmarks)[1].name, "resnet");
  // Each benchmark lists the metrics stored for it, not every metric of the project.
  ASSERT_EQ((*benchmarks)[0].metrics.size(), 2u);
  EXPECT_EQ((*benchmarks)[0].metrics[0].name, "items_per_second");
  EXPECT_EQ((*benchmarks)[0].metrics[0].direction, Direction::kHigherIsBetter);
  ASSERT_EQ((*benchmarks)[1].metrics.size(), 1u);
  EXPECT_EQ((*benchmarks)[1].metrics[0].name, "real_time");
  Result<std::vector<MetricInfo>> metrics = store_->ListMetrics(project_);
  ASSERT_TRUE(metrics);
  ASSERT_EQ(metrics->size(), 2u);
  EXPECT_EQ((*metrics)[0].name, "items_per_second");
  EXPECT_EQ((*metrics)[0].direction, Direction::kHigherIsBetter);
  EXPECT_EQ((*metrics)[1].unit, "ns");

  // A second run at the same commit and testbed reuses every row but the run's own.
  ASSERT_TRUE(store_->IngestRun(project_, MakeRun(2)));
  EXPECT_EQ(Count("commits"), 1);
  EXPECT_EQ(Count("testbeds"), 1);
  EXPECT_EQ(Count("branches"), 1);
  EXPECT_EQ(Count("samples"), 14);
  // A changed fingerprint is a new testbed row.
  wire::RunUpload moved = MakeRun(3);
  moved.testbed.fingerprint_json = R"({"cores":16})";
  ASSERT_TRUE(store_->IngestRun(project_, moved));
  EXPECT_EQ(Count("testbeds"), 2);

  // The dashboard's filters: names with their runs, newest first; a testbed name covers its
  // fingerprints.
  ASSERT_TRUE(store_->IngestRun(project_, MakeRun(4, "feature", 2)));
  Result<std::vector<NamedRuns>> branches = store_->ListBranches(project_);
  ASSERT_TRUE(branches) << branches.error().ToString();
  ASSERT_EQ(branches->size(), 2u);
  EXPECT_EQ((*branches)[0].name, "feature");
  EXPECT_EQ((*branches)[0].runs, 1);
  EXPECT_EQ((*branches)[1].name, "main");
  EXPECT_EQ((*branches)[1].runs, 3);
  EXPECT_FALSE((*branches)[1].last_run_at.empty());
  Result<std::vector<NamedRuns>> testbeds = store_->ListTestbeds(project_);
  ASSERT_TRUE(testbeds);
  ASSERT_EQ(testbeds->size(), 1u);
  EXPECT_EQ((*testbeds)[0].name, "ci-1");
  EXPECT_EQ((*testbeds)[0].runs, 4);
  Project empty = *store_->CreateProject("empty", false);
  EXPECT_TRUE(store_->ListBranches(empty)->empty());
}

TEST_F(StoresTest, IdempotentRepostAndConflict) {
  const wire::RunUpload run = MakeRun(1);
  Result<IngestOutcome> first = store_->IngestRun(project_, run);
  ASSERT_TRUE(first) << first.error().ToString();
  Result<IngestOutcome> again = store_->IngestRun(project_, run);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->run.created_at, first->run.created_at);
  EXPECT_EQ(again->run.sample_count, 7);
  EXPECT_EQ(Count("runs"), 1);
  EXPECT_EQ(Count("samples"), 7);

  wire::RunUpload changed = run;
  changed.results[0].values[0] = 1021.6;
  Result<IngestOutcome> conflict = store_->IngestRun(project_, changed);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code, ErrorCode::kConflict);
  EXPECT_EQ(conflict.error().message, "run " + run.id + " already exists with different content");
  EXPECT_EQ(Count("samples"), 7);
}

// Run ids are unique per project (migration 0015): another project's run of the same id is
// stored as a new run, and each project reads, judges and re-posts its own.
TEST_F(StoresTest, AnotherProjectMayHoldTheSameRunId) {
  const wire::RunUpload run = MakeRun(1);
  ASSERT_TRUE(store_->IngestRun(project_, run));
  const Project other = *store_->CreateProject("other", false);
  wire::RunUpload others = run;
  others.project = "other";
  others.results[0].values[0] = 1021.6;
  Result<IngestOutcome> fresh = store_->IngestRun(other, others);
  ASSERT_TRUE(fresh) << fresh.error().ToString();
  EXPECT_TRUE(fresh->created);
  EXPECT_EQ(fresh->run.project, "other");
  EXPECT_FALSE(store_->IngestRun(other, others)->created);
  wire::RunUpload changed = others;
  changed.results[0].values[0] = 1021.5;
  EXPECT_EQ(store_->IngestRun(other, changed).error().code, ErrorCode::kConflict);
  EXPECT_FALSE(store_->IngestRun(project_, run)->created);
  EXPECT_EQ(Count("runs"), 2);
  EXPECT_EQ(Count("samples"), 14);

  EXPECT_EQ(store_->GetRun(project_, run.id)->upload, run);
  EXPECT_EQ(store_->GetRun(other, run.id)->upload, others);
  // Sets in key order: (gb, BM_Sort/1024, items_per_second), then real_time.
  EXPECT_EQ(store_->GetSampleSets(project_, {run.id})->at(1).values, run.results[0].values);
  EXPECT_EQ(store_->GetSampleSets(other, {run.id})->at(1).values, others.results[0].values);
  for (const auto& [project, outcome] :
       {std::pair{project_, "pass"}, std::pair{other, "regression"}}) {
    NewVerdict verdict;
    verdict.run_id = run.id;
    verdict.contender_run_ids = {run.id};
    verdict.outcome = outcome;
    verdict.algorithm_version = "v";
    ASSERT_TRUE(store_->SaveVerdict(project, verdict));
  }
  EXPECT_EQ((*store_->LatestVerdict(project_, run.id))->verdict.outcome, "pass");
  EXPECT_EQ((*store_->LatestVerdict(other, run.id))->verdict.outcome, "regression");
  EXPECT_EQ(store_->GetRun(other, run.id)->latest_verdict->outcome, "regression");
}

TEST_F(StoresTest, FailedIngestLeavesNothing) {
  wire::RunUpload throughput = MakeRun(1);
  throughput.results = {{"gb", "BM_A", "x", "u", Direction::kHigherIsBetter, {1}}};
  ASSERT_TRUE(store_->IngestRun(project_, throughput));
  const int64_t runs = Count("runs"), commits = Count("commits"), testbeds = Count("testbeds"),
                benchmarks = Count("benchmarks"), samples = Count("samples"),
                branches = Count("branches");

  // Direction conflicting with the stored metric, after new branch/commit/testbed/benchmarks.
  wire::RunUpload bad = MakeRun(2, "feature", 2);
  bad.testbed.name = "ci-2";
  bad.results.push_back({{"gb", "BM_B", "x"}, "u", Direction::kLowerIsBetter, {1}});
  Result<IngestOutcome> failed = store_->IngestRun(project_, bad);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(failed.error().field, "results[3].direction");

  // Directions disagreeing inside one upload.
  bad.results.back().direction = Direction::kHigherIsBetter;
  bad.results.push_back({{"gb", "BM_C", "x"}, "u", Direction::kLowerIsBetter, {1}});
  failed = store_->IngestRun(project_, bad);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().field, "results[4].direction");

  // A value the schema's CHECK refuses, in the last statement of the transaction.
  wire::RunUpload infinite = MakeRun(3, "feature", 3);
  infinite.testbed.name = "ci-3";
  infinite.results[2].values[1] = std::numeric_limits<double>::infinity();
  failed = store_->IngestRun(project_, infinite);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(failed.error().field, "results[2].values[1]");

  EXPECT_EQ(Count("runs"), runs);
  EXPECT_EQ(Count("commits"), commits);
  EXPECT_EQ(Count("testbeds"), testbeds);
  EXPECT_EQ(Count("benchmarks"), benchmarks);
  EXPECT_EQ(Count("metrics"), 1);
  EXPECT_EQ(Count("samples"), samples);
  EXPECT_EQ(Count("branches"), branches);
}

TEST_F(StoresTest, ConcurrentIngestOfOneIdStoresItOnce) {
  const wire::RunUpload run = MakeRun(1);
  std::atomic<int> created{0}, ok{0};
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      Result<IngestOutcome> outcome = store_->IngestRun(project_, run);
      if (!outcome) {
        errors[static_cast<size_t>(i)] = outcome.error().ToString();
        return;
      }
      ++ok;
      if (outcome->created) ++created;
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(Count("runs"), 1);
  EXPECT_EQ(Count("samples"), 7);
}

TEST_F(StoresTest, ConcurrentIngestOfDistinctRunsSharingRows) {
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      Result<IngestOutcome> outcome = store_->IngestRun(project_, MakeRun(i + 1, "b", i % 2));
      if (!outcome) errors[static_cast<size_t>(i)] = outcome.error().ToString();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(Count("runs"), 8);
  EXPECT_EQ(Count("commits"), 2);
  EXPECT_EQ(Count("benchmarks"), 2);
}

}  // namespace
}  // namespace perfwarden::store
