// SPDX-License-Identifier: Apache-2.0
// PgStore's reads against a real, migrated PostgreSQL: run listing with keyset pagination,
// series, and sample sets read back exactly (stores_pgtest.cc writes).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

using ::perfwarden::testing::stores::MakeRun;
using ::perfwarden::testing::stores::Sha;
using ::perfwarden::testing::stores::StoresTest;
using ::perfwarden::testing::stores::Uuid;

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
  EXPECT_EQ((*sets)[0].key.suite, "gb");
  EXPECT_EQ((*sets)[0].key.metric, "items_per_second");
  EXPECT_EQ((*sets)[0].direction, Direction::kHigherIsBetter);
  EXPECT_EQ((*sets)[0].values, (std::vector<double>{5e9, 6e9, 5e9, 6e9}));
  const SampleSet& time = (*sets)[1];
  EXPECT_EQ(time.key.metric, "real_time");
  const std::vector<double> expected{0.1 + 0.2, 5e-324, 1.7976931348623157e308, -0.0, 1021.5,
                                     1e-7,      3};
  ASSERT_EQ(time.values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::memcmp(&time.values[i], &expected[i], sizeof(double)), 0) << i;
  }
  EXPECT_EQ((*sets)[2].key.suite, "train");

  Result<Project> other = store_->CreateProject("other", false);
  ASSERT_TRUE(other);
  Result<std::vector<SampleSet>> foreign = store_->GetSampleSets(*other, {Uuid(1)});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace perfwarden::store
