// PgStore against a real, migrated PostgreSQL: projects, tokens, ingest (round trip,
// idempotency, conflicts, rollback on failure, concurrent posts of one id), run listing with
// keyset pagination, and series. Also prints how fast the two bulk sample writers are.
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

namespace perfgate::store {
namespace {

std::string Sha(int n) {
  char buffer[41];
  std::snprintf(buffer, sizeof(buffer), "%040x", n);
  return buffer;
}

std::string Uuid(int n) {
  char buffer[37];
  std::snprintf(buffer, sizeof(buffer), "00000000-0000-4000-8000-%012x", n);
  return buffer;
}

wire::RunUpload MakeRun(int n, const std::string& branch = "main", int commit = 1) {
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

class StoresTest : public testing::PgStoreTest {
 protected:
  int64_t Count(const std::string& table) {
    return *pool_->WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
      return tx.exec("SELECT count(*) FROM " + tx.quote_name(table))[0][0].as<int64_t>();
    });
  }
};

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
  NewToken admin{std::nullopt, "admin", "pgt_aaaa", std::string(64, 'a'), {"admin"}};
  Result<TokenRecord> a = store_->CreateToken(admin);
  ASSERT_TRUE(a) << a.error().ToString();
  EXPECT_FALSE(a->project_id);
  EXPECT_EQ(a->project, "");
  EXPECT_TRUE(*store_->HasAdminToken());
  NewToken ci{project_.id, "ci", "pgt_bbbb", std::string(64, 'b'), {"ingest", "read"}};
  Result<TokenRecord> b = store_->CreateToken(ci);
  ASSERT_TRUE(b) << b.error().ToString();
  EXPECT_EQ(b->project, "proj");
  EXPECT_EQ(b->scopes, (std::vector<std::string>{"ingest", "read"}));
  EXPECT_EQ(store_->CreateToken(ci).error().code, ErrorCode::kConflict);  // same hash

  Result<TokenRecord> found = store_->FindTokenByHash(std::string(64, 'b'));
  ASSERT_TRUE(found) << found.error().ToString();
  EXPECT_EQ(found->id, b->id);
  EXPECT_EQ(found->prefix, "pgt_bbbb");
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
  // The same body posted to another project is not this run either.
  Project other = *store_->CreateProject("other", false);
  EXPECT_EQ(store_->IngestRun(other, run).error().code, ErrorCode::kConflict);
  EXPECT_EQ(Count("samples"), 7);
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
  bad.results.push_back({"gb", "BM_B", "x", "u", Direction::kLowerIsBetter, {1}});
  Result<IngestOutcome> failed = store_->IngestRun(project_, bad);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(failed.error().field, "results[3].direction");

  // Directions disagreeing inside one upload.
  bad.results.back().direction = Direction::kHigherIsBetter;
  bad.results.push_back({"gb", "BM_C", "x", "u", Direction::kLowerIsBetter, {1}});
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

TEST_F(StoresTest, ListRunsFiltersAndPages) {
  for (int i = 1; i <= 7; ++i) {
    wire::RunUpload run = MakeRun(i, i % 2 == 0 ? "feature" : "main", i <= 3 ? 1 : 2);
    if (i == 7) run.testbed.name = "ci-2";
    ASSERT_TRUE(store_->IngestRun(project_, run));
  }
  RunFilter filter;
  Result<RunPage> all = store_->ListRuns(project_, filter);
  ASSERT_TRUE(all) << all.error().ToString();
  ASSERT_EQ(all->runs.size(), 7u);
  EXPECT_EQ(all->next_cursor, "");
  EXPECT_EQ(all->runs[0].id, Uuid(7));  // newest first
  EXPECT_EQ(all->runs[6].id, Uuid(1));

  filter.limit = 3;
  std::vector<std::string> seen;
  for (int page = 0; page < 5; ++page) {
    Result<RunPage> p = store_->ListRuns(project_, filter);
    ASSERT_TRUE(p) << p.error().ToString();
    for (const RunSummary& r : p->runs) seen.push_back(r.id);
    if (p->next_cursor.empty()) break;
    filter.cursor = p->next_cursor;
  }
  ASSERT_EQ(seen.size(), 7u);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(seen[i], all->runs[i].id);

  RunFilter main;
  main.branch = "main";
  EXPECT_EQ(store_->ListRuns(project_, main)->runs.size(), 4u);
  main.commit = Sha(2);
  EXPECT_EQ(store_->ListRuns(project_, main)->runs.size(), 2u);  // 5, 7
  main.testbed = "ci-2";
  EXPECT_EQ(store_->ListRuns(project_, main)->runs.size(), 1u);
  RunFilter window;
  window.since = all->runs[5].created_at;  // ms precision: may include run 2's instant
  window.until = "2999-01-01T00:00:00+01:00";
  EXPECT_GE(store_->ListRuns(project_, window)->runs.size(), 5u);
  window.until = "2000-01-01T00:00:00Z";
  EXPECT_EQ(store_->ListRuns(project_, window)->runs.size(), 0u);
  RunFilter none;
  none.branch = "nope";
  EXPECT_EQ(store_->ListRuns(project_, none)->runs.size(), 0u);

  for (auto [limit, field] : {std::pair(0, "limit"), std::pair(1001, "limit")}) {
    RunFilter f;
    f.limit = limit;
    EXPECT_EQ(store_->ListRuns(project_, f).error().field, field);
  }
  RunFilter bad;
  bad.cursor = "zz";
  EXPECT_EQ(store_->ListRuns(project_, bad).error().field, "cursor");
  bad.cursor = pgutil::HexEncode("2024-01-01T00:00:00Z|x");
  EXPECT_EQ(store_->ListRuns(project_, bad).error().field, "cursor");
  bad = {};
  bad.since = "yesterday";
  EXPECT_EQ(store_->ListRuns(project_, bad).error().field, "since");
  bad = {};
  bad.until = "2024-02-30T00:00:00Z";
  EXPECT_EQ(store_->ListRuns(project_, bad).error().field, "until");
  bad = {};
  bad.branch = "'; DROP TABLE runs; --";
  EXPECT_EQ(store_->ListRuns(project_, bad)->runs.size(), 0u);
  EXPECT_EQ(Count("runs"), 7);
}

TEST_F(StoresTest, Series) {
  // Commits 1..4 on main; commit 2 has two runs (pooled); commit 3 only on testbed ci-2;
  // a feature-branch run must not show.
  auto post = [&](int id, int commit, std::vector<double> values, const std::string& testbed,
                  const std::string& branch = "main") {
    wire::RunUpload run = MakeRun(id, branch, commit);
    run.testbed.name = testbed;
    run.results = {{"gb", "BM_A", "real_time", "ns", Direction::kLowerIsBetter, values},
                   {"other", "BM_B", "real_time", "ns", Direction::kLowerIsBetter, {9}}};
    ASSERT_TRUE(store_->IngestRun(project_, run));
  };
  post(1, 1, {10, 11}, "ci-1");
  post(2, 2, {20, 21, 22}, "ci-1");
  post(3, 2, {23}, "ci-1");
  post(4, 3, {30}, "ci-2");
  post(5, 4, {40, 41}, "ci-1");
  post(6, 9, {99}, "ci-1", "feature");

  SeriesQuery query;
  query.benchmark = "BM_A";
  query.metric = "real_time";
  query.branch = "main";
  Result<Series> series = store_->GetSeries(project_, query);
  ASSERT_TRUE(series) << series.error().ToString();
  EXPECT_EQ(series->benchmark.suite, "gb");
  EXPECT_EQ(series->metric.unit, "ns");
  ASSERT_EQ(series->points.size(), 4u);
  EXPECT_EQ(series->points[0].commit_sha, Sha(1));
  EXPECT_EQ(series->points[0].values, (std::vector<double>{10, 11}));
  EXPECT_EQ(series->points[0].subject, "fix things");
  EXPECT_EQ(series->points[0].author, "Ann");
  EXPECT_EQ(series->points[0].author_time, "2024-05-01T10:00:00.000Z");
  EXPECT_EQ(series->points[1].values, (std::vector<double>{20, 21, 22, 23}));
  EXPECT_EQ(series->points[1].run_ids, (std::vector<std::string>{Uuid(2), Uuid(3)}));
  EXPECT_EQ(series->points[3].commit_sha, Sha(4));

  query.limit = 2;
  series = store_->GetSeries(project_, query);
  ASSERT_TRUE(series);
  ASSERT_EQ(series->points.size(), 2u);
  EXPECT_EQ(series->points[0].commit_sha, Sha(3));
  EXPECT_EQ(series->points[1].commit_sha, Sha(4));

  query.limit = 1000;
  query.testbed = "ci-1";
  series = store_->GetSeries(project_, query);
  ASSERT_EQ(series->points.size(), 3u);
  query.until = "2000-01-01T00:00:00Z";
  EXPECT_EQ(store_->GetSeries(project_, query)->points.size(), 0u);

  auto error = [&](auto change) {
    SeriesQuery q;
    q.benchmark = "BM_A";
    q.metric = "real_time";
    q.branch = "main";
    change(q);
    Result<Series> r = store_->GetSeries(project_, q);
    return r ? Error{} : r.error();
  };
  EXPECT_EQ(error([](SeriesQuery& q) { q.benchmark = "nope"; }).code, ErrorCode::kNotFound);
  EXPECT_EQ(error([](SeriesQuery& q) { q.suite = "other"; }).code, ErrorCode::kNotFound);
  EXPECT_EQ(error([](SeriesQuery& q) { q.metric = "nope"; }).field, "metric");
  EXPECT_EQ(error([](SeriesQuery& q) { q.unit = "ms"; }).code, ErrorCode::kNotFound);
  EXPECT_EQ(error([](SeriesQuery& q) { q.branch = "nope"; }).field, "branch");
  EXPECT_EQ(error([](SeriesQuery& q) { q.testbed = "nope"; }).field, "testbed");
  EXPECT_EQ(error([](SeriesQuery& q) { q.limit = 0; }).field, "limit");
  EXPECT_EQ(error([](SeriesQuery& q) { q.since = "x"; }).field, "since");

  // The same benchmark name in two suites, the same metric in two units: ambiguous.
  wire::RunUpload twin = MakeRun(7, "main", 5);
  twin.results = {{"other", "BM_A", "real_time", "ms", Direction::kLowerIsBetter, {1}}};
  ASSERT_TRUE(store_->IngestRun(project_, twin));
  Error ambiguous = error([](SeriesQuery&) {});
  EXPECT_EQ(ambiguous.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ambiguous.field, "suite");
  EXPECT_EQ(error([](SeriesQuery& q) { q.suite = "gb"; }).field, "unit");
  Result<Series> named = store_->GetSeries(project_, [] {
    SeriesQuery q;
    q.benchmark = "BM_A";
    q.suite = "other";
    q.metric = "real_time";
    q.unit = "ms";
    q.branch = "main";
    return q;
  }());
  ASSERT_TRUE(named) << named.error().ToString();
  ASSERT_EQ(named->points.size(), 1u);
  EXPECT_EQ(named->points[0].values, (std::vector<double>{1}));
}

}  // namespace
}  // namespace perfgate::store

namespace perfgate::store {
namespace {

// GetSampleSets reads repetitions in binary: exact doubles (no decimal round trip), pooled
// per series in the order of the run ids asked for, series in (suite, benchmark, metric, unit)
// order; a run of another project is kNotFound.
TEST_F(StoresTest, SampleSetsPoolExactValuesInRunOrder) {
  wire::RunUpload first = MakeRun(1);
  wire::RunUpload second = MakeRun(2, "main", 2);
  second.results[0].values = {0.1 + 0.2, 5e-324, 1.7976931348623157e308, -0.0};
  ASSERT_TRUE(store_->IngestRun(project_, first));
  ASSERT_TRUE(store_->IngestRun(project_, second));
  Result<std::vector<SampleSet>> sets = store_->GetSampleSets(project_, {Uuid(2), Uuid(1)});
  ASSERT_TRUE(sets) << sets.error().ToString();
  ASSERT_EQ(sets->size(), 3u);
  EXPECT_EQ((*sets)[0].suite, "gb");
  EXPECT_EQ((*sets)[0].metric, "items_per_second");
  EXPECT_EQ((*sets)[0].direction, Direction::kHigherIsBetter);
  EXPECT_EQ((*sets)[0].values, (std::vector<double>{5e9, 6e9, 5e9, 6e9}));
  const SampleSet& time = (*sets)[1];
  EXPECT_EQ(time.metric, "real_time");
  const std::vector<double> expected{0.1 + 0.2, 5e-324, 1.7976931348623157e308, -0.0, 1021.5,
                                     1e-7,      3};
  ASSERT_EQ(time.values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::memcmp(&time.values[i], &expected[i], sizeof(double)), 0) << i;
  }
  EXPECT_EQ((*sets)[2].suite, "train");

  Result<Project> other = store_->CreateProject("other", false);
  ASSERT_TRUE(other);
  Result<std::vector<SampleSet>> foreign = store_->GetSampleSets(*other, {Uuid(1)});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace perfgate::store
