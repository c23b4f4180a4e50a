// SPDX-License-Identifier: Apache-2.0
// PgStore: benchmarks, metrics and series. GetSeries resolves names to ids with small lookups,
// then reads a series with one query that walks the sample_sets_series index; the sample sets
// of each commit's runs are pooled here.
#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"

namespace perfwarden::store {
namespace {

using pgutil::OrNull;
using pgutil::ReadDirection;
using pgutil::Text;

}  // namespace

Result<std::vector<BenchmarkInfo>> PgStore::ListBenchmarks(const Project& project) {
  return pool_.WithTransaction<std::vector<BenchmarkInfo>>(
      [&](pqxx::work& tx) -> Result<std::vector<BenchmarkInfo>> {
        std::vector<BenchmarkInfo> out;
        // A benchmark's metrics: one probe of the sample_sets_series index per pair.
        for (const pqxx::row& row :
             tx.exec_params("SELECT b.suite, b.name, m.name, m.unit, m.direction FROM benchmarks b"
                            " LEFT JOIN metrics m ON m.project_id = b.project_id AND EXISTS ("
                            "  SELECT 1 FROM sample_sets s WHERE s.benchmark_id = b.id"
                            "  AND s.metric_id = m.id)"
                            " WHERE b.project_id = $1 ORDER BY b.suite, b.name, m.name, m.unit",
                            project.id)) {
          std::string suite = row[0].as<std::string>(), name = row[1].as<std::string>();
          if (out.empty() || out.back().suite != suite || out.back().name != name) {
            out.push_back({std::move(suite), std::move(name), {}});
          }
          if (!row[2].is_null()) {
            out.back().metrics.push_back(
                {row[2].as<std::string>(), row[3].as<std::string>(), ReadDirection(row[4])});
          }
        }
        return out;
      });
}

Result<std::vector<MetricInfo>> PgStore::ListMetrics(const Project& project) {
  return pool_.WithTransaction<std::vector<MetricInfo>>([&](pqxx::work& tx)
                                                            -> Result<std::vector<MetricInfo>> {
    std::vector<MetricInfo> out;
    for (const pqxx::row& row :
         tx.exec_params("SELECT name, unit, direction FROM metrics WHERE project_id = $1 "
                        "ORDER BY name, unit",
                        project.id)) {
      out.push_back({row[0].as<std::string>(), row[1].as<std::string>(), ReadDirection(row[2])});
    }
    return out;
  });
}

namespace {

Result<std::vector<NamedRuns>> ListNamed(ConnectionPool& pool, const Project& project,
                                         const std::string& table, const std::string& column) {
  return pool.WithTransaction<std::vector<NamedRuns>>(
      [&](pqxx::work& tx) -> Result<std::vector<NamedRuns>> {
        std::vector<NamedRuns> out;
        // `table` and `column` are one of two fixed pairs below, never user input.
        for (const pqxx::row& row : tx.exec_params(
                 "SELECT t.name, count(r.id), " + pgutil::Rfc3339Sql("max(r.created_at)") +
                     " FROM " + table + " t LEFT JOIN runs r ON r." + column +
                     " = t.id WHERE t.project_id = $1 GROUP BY t.name"
                     " ORDER BY max(r.created_at) DESC NULLS LAST, t.name",
                 project.id)) {
          out.push_back({row[0].as<std::string>(), row[1].as<int64_t>(), Text(row[2])});
        }
        return out;
      });
}

}  // namespace

Result<std::vector<NamedRuns>> PgStore::ListBranches(const Project& project) {
  return ListNamed(pool_, project, "branches", "branch_id");
}

Result<std::vector<NamedRuns>> PgStore::ListTestbeds(const Project& project) {
  return ListNamed(pool_, project, "testbeds", "testbed_id");
}

Result<Series> PgStore::GetSeries(const Project& project, const SeriesQuery& query) {
  if (query.benchmark.empty()) return InvalidArgument("required", "benchmark");
  if (query.metric.empty()) return InvalidArgument("required", "metric");
  if (query.branch.empty()) return InvalidArgument("required", "branch");
  if (query.limit < 1 || query.limit > 10000) {
    return InvalidArgument("must be between 1 and 10000", "limit");
  }
  if (!query.since.empty() && !pgutil::IsStorableRfc3339(query.since)) {
    return InvalidArgument("not an RFC 3339 timestamp", "since");
  }
  if (!query.until.empty() && !pgutil::IsStorableRfc3339(query.until)) {
    return InvalidArgument("not an RFC 3339 timestamp", "until");
  }
  return pool_.WithTransaction<Series>([&](pqxx::work& tx) -> Result<Series> {
    Series series;
    series.branch = query.branch;
    series.testbed = query.testbed;

    pqxx::result benchmarks = tx.exec_params(
        "SELECT id, suite, name FROM benchmarks WHERE project_id = $1 AND name = $2 "
        "AND ($3::text IS NULL OR suite = $3) ORDER BY suite LIMIT 2",
        project.id, query.benchmark, OrNull(query.suite));
    if (benchmarks.empty()) {
      return MakeError(ErrorCode::kNotFound, "no benchmark " + query.benchmark, "benchmark");
    }
    if (benchmarks.size() > 1) {
      return InvalidArgument("benchmark " + query.benchmark + " is in several suites (" +
                                 benchmarks[0][1].as<std::string>() + ", " +
                                 benchmarks[1][1].as<std::string>() + "): name one",
                             "suite");
    }
    const int64_t benchmark_id = benchmarks[0][0].as<int64_t>();
    series.benchmark = {benchmarks[0][1].as<std::string>(), benchmarks[0][2].as<std::string>(), {}};

    pqxx::result metrics = tx.exec_params(
        "SELECT id, name, unit, direction FROM metrics WHERE project_id = $1 AND name = $2 "
        "AND ($3::text IS NULL OR unit = $3) ORDER BY unit LIMIT 2",
        project.id, query.metric, OrNull(query.unit));
    if (metrics.empty()) {
      return MakeError(ErrorCode::kNotFound, "no metric " + query.metric, "metric");
    }
    if (metrics.size() > 1) {
      return InvalidArgument("metric " + query.metric + " has several units (" +
                                 metrics[0][2].as<std::string>() + ", " +
                                 metrics[1][2].as<std::string>() + "): name one",
                             "unit");
    }
    const int64_t metric_id = metrics[0][0].as<int64_t>();
    series.metric = {metrics[0][1].as<std::string>(), metrics[0][2].as<std::string>(),
                     ReadDirection(metrics[0][3])};

    pqxx::result branch = tx.exec_params(
        "SELECT id FROM branches WHERE project_id = $1 AND name = $2", project.id, query.branch);
    if (branch.empty())
      return MakeError(ErrorCode::kNotFound, "no branch " + query.branch, "branch");
    const int64_t branch_id = branch[0][0].as<int64_t>();

    // A testbed name covers all its fingerprints.
    std::string testbed_ids;
    if (!query.testbed.empty()) {
      pqxx::result testbeds = tx.exec_params(
          "SELECT coalesce(array_agg(id), '{}') FROM testbeds WHERE project_id = $1 "
          "AND name = $2",
          project.id, query.testbed);
      testbed_ids = testbeds[0][0].as<std::string>();
      if (testbed_ids == "{}") {
        return MakeError(ErrorCode::kNotFound, "no testbed " + query.testbed, "testbed");
      }
    }

    // Values of a commit are pooled over its runs in run order, each run's in repetition
    // order. `sets` walks the sample_sets_series index once; window functions give each set its
    // commit's first run time and the commit's rank among the newest, so the `limit` newest
    // commits are chosen without joining the sets to themselves (a join the planner turned into
    // a nested loop over 10,000 x 10,000 rows, 6.7 s, on tables not yet analysed after a bulk
    // load; this shape does not depend on the estimates: 76 ms there, 66 ms analysed). One row
    // per sample set, in point order then run order, grouped into points here: aggregating in
    // SQL and printing the values as text took longer than the rest of the request. The
    // repetitions travel in binary (array_send), exact and without decimal printing and parsing.
    pqxx::result rows = tx.exec_params(
        "WITH sets AS ("
        " SELECT r.commit_id, r.created_at, r.id, s.vals,"
        "  min(r.created_at) OVER (PARTITION BY r.commit_id) AS first_at"
        " FROM sample_sets s JOIN runs r ON r.project_id = s.project_id AND r.id = s.run_id"
        " WHERE s.benchmark_id = $1 AND s.metric_id = $2 AND r.branch_id = $3"
        "  AND ($4::bigint[] IS NULL OR r.testbed_id = ANY ($4::bigint[]))"
        "  AND ($5::timestamptz IS NULL OR r.created_at >= $5::timestamptz)"
        "  AND ($6::timestamptz IS NULL OR r.created_at <= $6::timestamptz)), "
        "ranked AS ("
        " SELECT *, dense_rank() OVER (ORDER BY first_at DESC, commit_id DESC) AS k FROM sets) "
        "SELECT p.commit_id, c.sha, c.subject, c.author, " +
            pgutil::Rfc3339Sql("c.author_time") + ", " + pgutil::Rfc3339Sql("p.first_at") +
            ", p.id, array_send(p.vals) FROM ranked p JOIN commits c ON c.id = p.commit_id"
            " WHERE p.k <= $7 ORDER BY p.first_at, p.commit_id, p.created_at, p.id",
        benchmark_id, metric_id, branch_id, OrNull(testbed_ids), OrNull(query.since),
        OrNull(query.until), query.limit);
    series.points.reserve(rows.size());
    int64_t last_commit = 0;
    for (const pqxx::row& row : rows) {
      const int64_t commit_id = row[0].as<int64_t>();
      if (series.points.empty() || commit_id != last_commit) {
        last_commit = commit_id;
        SeriesPoint& point = series.points.emplace_back();
        point.commit_sha = row[1].as<std::string>();
        point.subject = row[2].as<std::string>();
        point.author = row[3].as<std::string>();
        point.author_time = Text(row[4]);
        point.first_run_at = row[5].as<std::string>();
      }
      SeriesPoint& point = series.points.back();
      point.run_ids.push_back(row[6].as<std::string>());
      if (!pgutil::AppendFloat8ArraySend(std::string_view(row[7].c_str(), row[7].size()),
                                         point.values)) {
        return MakeError(ErrorCode::kInternal,
                         "unreadable repetitions of " + query.benchmark + " " + query.metric);
      }
    }
    return series;
  });
}

}  // namespace perfwarden::store
