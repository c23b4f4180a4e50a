// The dashboard contract of migration 0010 against a real, migrated PostgreSQL: the views in
// perfgate_views have exactly their documented columns (docs/dashboards.md) and the rows and
// statistics of runs ingested through the store (medians as perfgate computes them), the role
// perfgate_grafana_read reads the views and nothing else (no base table, no tokens, no
// writes), a least-privilege owner without CREATEROLE migrates all the same (the role is then
// made by hand, as documented), and every SQL query of docs/grafana/perfgate-dashboard.json
// runs against the views as that role and returns rows, so the dashboard cannot rot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/pqxx>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "stats/descriptive.h"
#include "tests/testing/store_fixture.h"

namespace perfgate::store {
namespace {

using nlohmann::json;

constexpr const char* kReadRole = "perfgate_grafana_read";

std::string Sha(int n) { return testing::StoreSha(n); }

std::string Uuid(int n) { return testing::TestRunId(n); }

// The contract: every view's columns, in order (docs/dashboards.md has a table per view).
// clang-format off
const std::map<std::string, std::vector<std::string>>& Contract() {
  static const std::map<std::string, std::vector<std::string>> contract = {
      {"projects", {"project", "public_read", "created_at"}},
      {"branches", {"project", "branch", "created_at"}},
      {"testbeds", {"project", "testbed", "fingerprint", "fingerprint_hash", "created_at",
                    "last_seen_at"}},
      {"benchmarks", {"project", "suite", "benchmark", "labels", "created_at"}},
      {"metrics", {"project", "metric", "unit", "direction", "created_at"}},
      {"runs", {"time", "run_id", "project", "branch", "commit_sha", "commit_time",
                "commit_subject", "commit_author", "testbed", "pr", "target_branch",
                "merge_base_sha", "ci_provider", "ci_job_url", "status", "started_at",
                "finished_at", "created_at", "sample_count"}},
      {"series_points", {"time", "run_id", "project", "branch", "testbed", "suite", "benchmark",
                         "metric", "unit", "direction", "commit_sha", "commit_time", "pr",
                         "value", "median", "mean", "min", "max", "stddev", "cv", "n",
                         "repetitions"}},
      {"repetitions", {"time", "run_id", "project", "branch", "testbed", "suite", "benchmark",
                       "metric", "unit", "direction", "commit_sha", "pr", "repetition",
                       "value"}},
      {"history", {"time", "project", "branch", "testbed", "suite", "benchmark", "metric", "unit",
                   "direction", "position", "commit_sha", "commit_time", "commit_subject",
                   "value", "n", "run_count", "first_run_id"}},
      {"change_points", {"time", "project", "branch", "testbed", "suite", "benchmark", "metric",
                         "unit", "direction", "position", "last_good_sha", "first_bad_sha",
                         "magnitude", "p_value", "level_before", "level_after", "detectors",
                         "detected_at"}},
      {"alerts", {"time", "alert_id", "project", "branch", "testbed", "suite", "benchmark",
                  "metric", "unit", "direction", "state", "triaged", "kind", "cause",
                  "magnitude", "ci_low", "ci_high", "p_value", "q_value", "level_before",
                  "level_after", "detectors", "position", "last_good_sha", "first_bad_sha",
                  "first_bad_subject", "last_good_run_id", "first_bad_run_id", "note",
                  "state_changed_by", "state_changed_at", "created_at"}},
      {"verdicts", {"time", "verdict_id", "run_id", "project", "branch", "testbed", "commit_sha",
                    "pr", "target_branch", "outcome", "latest", "regressions", "improvements",
                    "equivalent", "inconclusive", "ignored", "new_series",
                    "baseline_commit_sha", "baseline_branch", "baseline_selection",
                    "algorithm_version", "created_at"}},
  };
  return contract;
}
// clang-format on

// Grafana's interpolation, for the variables and macros the dashboard uses: `${v:sqlstring}`
// quotes each value ('' for '), `$v`/`${v}` is the raw value (quoted and comma-joined for a
// multi-value variable), `$__timeFilter(col)` is `col BETWEEN 'from' AND 'to'`.
std::string Interpolate(std::string sql,
                        const std::map<std::string, std::vector<std::string>>& values,
                        const std::set<std::string>& multi) {
  auto quoted = [](const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& v : list) {
      std::string q = "'";
      for (char c : v) q += c == '\'' ? std::string("''") : std::string(1, c);
      out += (out.empty() ? "" : ",") + q + "'";
    }
    return out;
  };
  auto replace_all = [&](const std::regex& pattern, auto make) {
    std::string out;
    auto begin = std::sregex_iterator(sql.begin(), sql.end(), pattern);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += sql.substr(last, it->position() - last) + make(*it);
      last = it->position() + it->length();
    }
    sql = out + sql.substr(last);
  };
  auto value_of = [&](const std::string& name) -> const std::vector<std::string>& {
    static const std::vector<std::string> none;
    auto it = values.find(name);
    EXPECT_NE(it, values.end()) << "the dashboard uses an unknown variable " << name;
    return it == values.end() ? none : it->second;
  };
  replace_all(std::regex(R"(\$__timeFilter\(([^)]*)\))"), [](const std::smatch& m) {
    return m[1].str() + " BETWEEN '1970-01-01T00:00:00Z' AND '2100-01-01T00:00:00Z'";
  });
  replace_all(std::regex(R"(\$\{(\w+):sqlstring\})"),
              [&](const std::smatch& m) { return quoted(value_of(m[1].str())); });
  replace_all(std::regex(R"(\$\{(\w+)\}|\$(\w+))"), [&](const std::smatch& m) {
    const std::string name = m[1].matched ? m[1].str() : m[2].str();
    const std::vector<std::string>& v = value_of(name);
    return multi.count(name) != 0 ? quoted(v) : (v.empty() ? std::string() : v.front());
  });
  return sql;
}

class GrafanaViewsTest : public testing::PgStoreTest {
 protected:
  void Ingest(const wire::RunUpload& run) {
    auto stored = store_->IngestRun(project_, run);
    ASSERT_TRUE(stored.has_value()) << stored.error().ToString();
  }

  pqxx::result Rows(const std::string& sql) {
    pqxx::connection conn(dsn_);
    pqxx::work tx(conn);
    return tx.exec(sql);
  }
  int64_t Int(const std::string& sql) { return Rows(sql)[0][0].as<int64_t>(); }
  void Exec(const std::string& sql) {
    pqxx::connection conn(dsn_);
    pqxx::work tx(conn);
    tx.exec(sql);
    tx.commit();
  }

  // Runs sql as the read role (SET LOCAL ROLE in a transaction that is rolled back); nullopt
  // with the error in *error when PostgreSQL refuses it.
  std::optional<pqxx::result> AsReader(const std::string& sql, std::string* error = nullptr) {
    pqxx::connection conn(dsn_);
    try {
      pqxx::work tx(conn);
      tx.exec(std::string("SET LOCAL ROLE ") + kReadRole);
      pqxx::result r = tx.exec(sql);
      tx.abort();
      return r;
    } catch (const pqxx::sql_error& e) {
      if (error != nullptr) *error = e.what();
      return std::nullopt;
    }
  }

  // Runs 1-6 on main (commits 1-6, BM_A at 100 then 120), run 7 a rerun of commit 6 with four
  // repetitions, run 8 a pull request on a feature branch; the history analysis of main with a
  // step and an alert at point 3 of BM_A and an improvement alert on BM_B (then resolved); two
  // verdicts of the pull request's run.
  void IngestExample() {
    for (int i = 1; i <= 6; ++i) Ingest(testing::SampleRun(i, i, "main", i <= 3 ? 100 : 120));
    wire::RunUpload rerun = testing::SampleRun(7, 6, "main", 120);
    rerun.results[0].values = {130, 131, 135, 140};
    Ingest(rerun);
    wire::RunUpload pr = testing::SampleRun(8, 100, "feature", 125);
    pr.target_branch = "main";
    pr.merge_base = Sha(6);
    pr.ci.provider = "github";
    pr.ci.job_url = "https://ci.example/job/8";
    pr.ci.pr = 42;
    pr.started_at = "2024-05-02T10:00:00Z";
    pr.finished_at = "2024-05-02T10:05:00Z";
    Ingest(pr);

    const std::vector<std::string> tracked = {"main"};
    // GCC 12 at -O3 warns that the strings below may be used uninitialised (a false positive of
    // its inlined std::string assignment); only here, so the rest of the file keeps the check.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
    auto analyse = [](const HistoryRunWork& work) -> Result<std::vector<HistorySeriesUpdate>> {
      std::vector<HistorySeriesUpdate> updates;
      for (const HistorySeriesData& s : work.series) {
        HistorySeriesUpdate u{};
        u.series_id = s.key.id;
        u.detector_state_json = "{}";
        u.monitor_state_json = "{}";
        NewAlertRecord a;
        a.position = 3;
        a.cause = "code";
        a.p_value = 1e-5;
        a.q_value = 2e-5;
        a.detectors = {"e-divisive", "cusum"};
        if (s.key.benchmark == "BM_A" && s.levels.size() >= 4) {
          u.steps.push_back({3, 0.2, 1e-5, 101, 121, {"e-divisive", "cusum"}});
          a.kind = "regression";
          a.magnitude = 0.2;
          a.ci_low = 0.18;
          a.ci_high = 0.22;
          a.level_before = 101;
          a.level_after = 121;
          u.alerts.push_back(a);  // stored once: later analyses find it there
        }
        if (s.key.benchmark == "BM_B" && s.levels.size() >= 4) {
          a.kind = "improvement";
          a.magnitude = -0.1;
          a.level_before = 200;
          a.level_after = 180;
          u.alerts.push_back(a);
        }
        updates.push_back(u);
      }
      return updates;
    };
#pragma GCC diagnostic pop
    for (;;) {
      auto next = testing::AnalyseNextRun(*store_, tracked, analyse);
      ASSERT_TRUE(next.has_value()) << next.error().ToString();
      if (!*next) break;
    }
    const int64_t improvement =
        Int("SELECT a.id FROM alerts a JOIN history_series hs ON hs.id = a.series_id "
            "JOIN benchmarks b ON b.id = hs.benchmark_id WHERE b.name = 'BM_B'");
    AlertUpdate resolve;
    resolve.state = "resolved";
    resolve.note = "expected";
    resolve.actor = "ann";
    ASSERT_TRUE(store_->UpdateAlert(project_, improvement, resolve).has_value());

    NewVerdict verdict;
    verdict.run_id = Uuid(8);
    verdict.contender_run_ids = {Uuid(8)};
    verdict.baseline_run_ids = {Uuid(6), Uuid(7)};
    verdict.outcome = "regression";
    verdict.algorithm_version = "test-1";
    verdict.baseline_json = R"({"commit":")" + Sha(6) +
                            R"(","branch":"main","testbed":"ci-1","run_ids":[],)"
                            R"("selection":"merge_base","distance":0})";
    verdict.summary_json =
        R"({"commit":")" + Sha(100) +
        R"(","counts":{"regression":1,"improvement":0,"equivalent":1,"inconclusive":0,)"
        R"("ignored":0,"new":0}})";
    ASSERT_TRUE(store_->SaveVerdict(project_, verdict).has_value());
    verdict.outcome = "pass";
    verdict.summary_json =
        R"({"counts":{"regression":0,"improvement":0,"equivalent":2,"inconclusive":0,)"
        R"("ignored":0,"new":0}})";
    ASSERT_TRUE(store_->SaveVerdict(project_, verdict).has_value());
  }
};

TEST_F(GrafanaViewsTest, EveryViewHasItsDocumentedColumns) {
  std::set<std::string> views;
  for (const auto& row : Rows("SELECT table_name FROM information_schema.views "
                              "WHERE table_schema = 'perfgate_views'")) {
    views.insert(row[0].as<std::string>());
  }
  std::set<std::string> documented;
  for (const auto& [view, columns] : Contract()) documented.insert(view);
  EXPECT_EQ(views, documented);
  for (const auto& [view, columns] : Contract()) {
    std::vector<std::string> actual;
    for (const auto& row : Rows("SELECT column_name FROM information_schema.columns WHERE "
                                "table_schema = 'perfgate_views' AND table_name = '" +
                                view + "' ORDER BY ordinal_position")) {
      actual.push_back(row[0].as<std::string>());
    }
    EXPECT_EQ(actual, columns) << view;
  }
  // Nothing else lives in the schema (the read role may SELECT everything in it).
  EXPECT_EQ(Int("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'perfgate_views' AND c.relkind <> 'v'"),
            0);
}

TEST_F(GrafanaViewsTest, RunsSeriesPointsAndRepetitionsShowTheIngestedRuns) {
  IngestExample();
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.runs WHERE project = 'proj'"), 8);
  pqxx::result pr = Rows(
      "SELECT branch, commit_sha, commit_subject, commit_author, testbed, pr, target_branch, "
      "merge_base_sha, ci_provider, ci_job_url, status, started_at = '2024-05-02T10:00:00Z', "
      "commit_time = '2024-05-01T10:00:00Z', time = created_at, sample_count "
      "FROM perfgate_views.runs WHERE run_id = '" +
      Uuid(8) + "'");
  ASSERT_EQ(pr.size(), 1u);
  EXPECT_EQ(pr[0][0].as<std::string>(), "feature");
  EXPECT_EQ(pr[0][1].as<std::string>(), Sha(100));
  EXPECT_EQ(pr[0][2].as<std::string>(), "c100");
  EXPECT_EQ(pr[0][3].as<std::string>(), "Ann");
  EXPECT_EQ(pr[0][4].as<std::string>(), "ci-1");
  EXPECT_EQ(pr[0][5].as<int64_t>(), 42);
  EXPECT_EQ(pr[0][6].as<std::string>(), "main");
  EXPECT_EQ(pr[0][7].as<std::string>(), Sha(6));
  EXPECT_EQ(pr[0][8].as<std::string>(), "github");
  EXPECT_EQ(pr[0][9].as<std::string>(), "https://ci.example/job/8");
  EXPECT_EQ(pr[0][10].as<std::string>(), "completed");
  EXPECT_TRUE(pr[0][11].as<bool>());
  EXPECT_TRUE(pr[0][12].as<bool>());
  EXPECT_TRUE(pr[0][13].as<bool>());
  EXPECT_EQ(pr[0][14].as<int64_t>(), 4);

  // One row per (run, benchmark, metric); its statistics are perfgate's (stats/descriptive).
  pqxx::result points = Rows(
      "SELECT run_id, benchmark, value, median, mean, min, max, stddev, cv, n, "
      "repetitions::text, unit, direction, suite, branch, testbed, commit_sha "
      "FROM perfgate_views.series_points WHERE project = 'proj' ORDER BY time, benchmark");
  ASSERT_EQ(points.size(), 16u);
  for (const auto& row : points) {
    std::string text = row[10].as<std::string>();  // {1,2,3}
    std::replace(text.begin(), text.end(), '{', ' ');
    std::replace(text.begin(), text.end(), '}', ' ');
    std::replace(text.begin(), text.end(), ',', ' ');
    std::istringstream in(text);
    std::vector<double> values;
    for (double v; in >> v;) values.push_back(v);
    ASSERT_EQ(static_cast<int64_t>(values.size()), row[9].as<int64_t>());
    const std::string what = row[0].as<std::string>() + " " + row[1].as<std::string>();
    EXPECT_DOUBLE_EQ(row[2].as<double>(), stats::Median(values)) << what;
    EXPECT_DOUBLE_EQ(row[3].as<double>(), stats::Median(values)) << what;
    EXPECT_DOUBLE_EQ(row[4].as<double>(), stats::Mean(values)) << what;
    EXPECT_DOUBLE_EQ(row[5].as<double>(), *std::min_element(values.begin(), values.end()));
    EXPECT_DOUBLE_EQ(row[6].as<double>(), *std::max_element(values.begin(), values.end()));
    const double cv = stats::Cv(values);
    if (std::isnan(cv)) {
      EXPECT_TRUE(row[8].is_null()) << what;
    } else {
      EXPECT_NEAR(row[8].as<double>(), cv, 1e-12) << what;
      EXPECT_NEAR(row[7].as<double>(), stats::StdDev(values), 1e-9) << what;
    }
    EXPECT_EQ(row[11].as<std::string>(), "ns");
    EXPECT_EQ(row[12].as<std::string>(), "lower");
    EXPECT_EQ(row[13].as<std::string>(), "gb");
  }
  // Run 1 by hand: BM_A {100, 102, 101}, BM_B {200}; the rerun's four repetitions (even: the
  // mean of the two middle values).
  EXPECT_EQ(points[0][3].as<double>(), 101);
  EXPECT_EQ(points[0][7].as<double>(), 1);
  EXPECT_EQ(points[1][3].as<double>(), 200);
  EXPECT_TRUE(points[1][7].is_null());  // one repetition: no spread
  EXPECT_EQ(Rows("SELECT median FROM perfgate_views.series_points WHERE run_id = '" + Uuid(7) +
                 "' AND benchmark = 'BM_A'")[0][0]
                .as<double>(),
            133);

  // One row per repetition, 0-based, in order; as many as series_points counts.
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.repetitions WHERE project = 'proj'"),
            Int("SELECT sum(n) FROM perfgate_views.series_points WHERE project = 'proj'"));
  pqxx::result reps =
      Rows("SELECT repetition, value FROM perfgate_views.repetitions WHERE run_id = '" + Uuid(7) +
           "' AND benchmark = 'BM_A' ORDER BY repetition");
  ASSERT_EQ(reps.size(), 4u);
  const double expected[] = {130, 131, 135, 140};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(reps[i][0].as<int>(), i);
    EXPECT_EQ(reps[i][1].as<double>(), expected[i]);
  }
  // The lookups the dashboard's variables read.
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.projects WHERE project = 'proj'"), 1);
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.branches WHERE project = 'proj'"), 2);
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.testbeds WHERE project = 'proj' AND "
                "testbed = 'ci-1' AND fingerprint ->> 'cpu_model' = 'x'"),
            1);
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.benchmarks WHERE project = 'proj'"), 2);
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.metrics WHERE project = 'proj' AND "
                "metric = 'real_time' AND unit = 'ns' AND direction = 'lower'"),
            1);
}

TEST_F(GrafanaViewsTest, HistoryChangePointsAlertsAndVerdicts) {
  IngestExample();
  // One point per main commit; the rerun pooled into commit 6's point.
  pqxx::result history = Rows(
      "SELECT position, commit_sha, value, n, run_count, first_run_id, commit_subject, "
      "branch, testbed, time IS NOT NULL FROM perfgate_views.history "
      "WHERE project = 'proj' AND benchmark = 'BM_A' AND metric = 'real_time' ORDER BY position");
  ASSERT_EQ(history.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(history[i][0].as<int>(), i);
    EXPECT_EQ(history[i][1].as<std::string>(), Sha(i + 1));
    EXPECT_EQ(history[i][5].as<std::string>(), Uuid(i + 1));
    EXPECT_EQ(history[i][6].as<std::string>(), "c" + std::to_string(i + 1));
    EXPECT_EQ(history[i][7].as<std::string>(), "main");
    EXPECT_EQ(history[i][8].as<std::string>(), "ci-1");
    EXPECT_TRUE(history[i][9].as<bool>());
  }
  EXPECT_EQ(history[0][2].as<double>(), 101);
  EXPECT_EQ(history[3][2].as<double>(), 121);
  // {120, 122, 121} + {130, 131, 135, 140}: 7 values, median 130.
  EXPECT_EQ(history[5][2].as<double>(), 130);
  EXPECT_EQ(history[5][3].as<int>(), 7);
  EXPECT_EQ(history[5][4].as<int>(), 2);
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.history WHERE branch = 'feature'"), 0);
  // The history's level is the pooled median of the repetitions of the commit's runs.
  EXPECT_EQ(Int("SELECT count(*) FROM perfgate_views.history h JOIN ("
                " SELECT commit_sha, benchmark, percentile_cont(0.5) WITHIN GROUP (ORDER BY value)"
                " AS median FROM perfgate_views.repetitions WHERE branch = 'main'"
                " GROUP BY commit_sha, benchmark) r USING (commit_sha, benchmark)"
                " WHERE h.value = r.median"),
            12);

  pqxx::result steps = Rows(
      "SELECT benchmark, position, last_good_sha, first_bad_sha, magnitude, p_value, "
      "level_before, level_after, array_to_string(detectors, ','), "
      "time = (SELECT created_at FROM perfgate_views.runs WHERE run_id = '" +
      Uuid(4) + "') FROM perfgate_views.change_points WHERE project = 'proj'");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0][0].as<std::string>(), "BM_A");
  EXPECT_EQ(steps[0][1].as<int>(), 3);
  EXPECT_EQ(steps[0][2].as<std::string>(), Sha(3));
  EXPECT_EQ(steps[0][3].as<std::string>(), Sha(4));
  EXPECT_EQ(steps[0][4].as<double>(), 0.2);
  EXPECT_EQ(steps[0][6].as<double>(), 101);
  EXPECT_EQ(steps[0][7].as<double>(), 121);
  EXPECT_EQ(steps[0][8].as<std::string>(), "e-divisive,cusum");
  EXPECT_TRUE(steps[0][9].as<bool>());

  pqxx::result alerts = Rows(
      "SELECT benchmark, state, triaged, kind, cause, magnitude, ci_low, ci_high, p_value, "
      "q_value, last_good_sha, first_bad_sha, first_bad_subject, first_bad_run_id, "
      "last_good_run_id, note, state_changed_by, position, branch, testbed, metric, unit, "
      "time = (SELECT created_at FROM perfgate_views.runs WHERE run_id = '" +
      Uuid(4) +
      "'), state_changed_at IS NULL FROM perfgate_views.alerts "
      "WHERE project = 'proj' ORDER BY alert_id");
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0][0].as<std::string>(), "BM_A");
  EXPECT_EQ(alerts[0][1].as<std::string>(), "open");
  EXPECT_FALSE(alerts[0][2].as<bool>());
  EXPECT_EQ(alerts[0][3].as<std::string>(), "regression");
  EXPECT_EQ(alerts[0][4].as<std::string>(), "code");
  EXPECT_EQ(alerts[0][5].as<double>(), 0.2);
  EXPECT_EQ(alerts[0][6].as<double>(), 0.18);
  EXPECT_EQ(alerts[0][7].as<double>(), 0.22);
  EXPECT_EQ(alerts[0][8].as<double>(), 1e-5);
  EXPECT_EQ(alerts[0][9].as<double>(), 2e-5);
  EXPECT_EQ(alerts[0][10].as<std::string>(), Sha(3));
  EXPECT_EQ(alerts[0][11].as<std::string>(), Sha(4));
  EXPECT_EQ(alerts[0][12].as<std::string>(), "c4");
  EXPECT_EQ(alerts[0][13].as<std::string>(), Uuid(4));
  EXPECT_EQ(alerts[0][14].as<std::string>(), Uuid(3));
  EXPECT_EQ(alerts[0][17].as<int>(), 3);
  EXPECT_EQ(alerts[0][18].as<std::string>(), "main");
  EXPECT_EQ(alerts[0][19].as<std::string>(), "ci-1");
  EXPECT_EQ(alerts[0][20].as<std::string>(), "real_time");
  EXPECT_EQ(alerts[0][21].as<std::string>(), "ns");
  EXPECT_TRUE(alerts[0][22].as<bool>());  // at the first bad run, on the series' time axis
  EXPECT_TRUE(alerts[0][23].as<bool>());
  EXPECT_EQ(alerts[1][0].as<std::string>(), "BM_B");
  EXPECT_EQ(alerts[1][1].as<std::string>(), "resolved");
  EXPECT_TRUE(alerts[1][2].as<bool>());
  EXPECT_EQ(alerts[1][3].as<std::string>(), "improvement");
  EXPECT_TRUE(alerts[1][6].is_null());
  EXPECT_EQ(alerts[1][15].as<std::string>(), "expected");
  EXPECT_EQ(alerts[1][16].as<std::string>(), "ann");
  EXPECT_FALSE(alerts[1][23].as<bool>());

  pqxx::result verdicts = Rows(
      "SELECT outcome, latest, regressions, improvements, equivalent, inconclusive, ignored, "
      "new_series, run_id, branch, testbed, commit_sha, pr, target_branch, baseline_commit_sha, "
      "baseline_branch, baseline_selection, algorithm_version, time = created_at "
      "FROM perfgate_views.verdicts WHERE project = 'proj' ORDER BY verdict_id");
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_EQ(verdicts[0][0].as<std::string>(), "regression");
  EXPECT_FALSE(verdicts[0][1].as<bool>());
  EXPECT_EQ(verdicts[0][2].as<int>(), 1);
  EXPECT_EQ(verdicts[0][4].as<int>(), 1);
  EXPECT_EQ(verdicts[1][0].as<std::string>(), "pass");
  EXPECT_TRUE(verdicts[1][1].as<bool>());
  EXPECT_EQ(verdicts[1][2].as<int>(), 0);
  EXPECT_EQ(verdicts[1][3].as<int>(), 0);
  EXPECT_EQ(verdicts[1][4].as<int>(), 2);
  EXPECT_EQ(verdicts[1][5].as<int>(), 0);
  EXPECT_EQ(verdicts[1][6].as<int>(), 0);
  EXPECT_EQ(verdicts[1][7].as<int>(), 0);
  EXPECT_EQ(verdicts[1][8].as<std::string>(), Uuid(8));
  EXPECT_EQ(verdicts[1][9].as<std::string>(), "feature");
  EXPECT_EQ(verdicts[1][10].as<std::string>(), "ci-1");
  EXPECT_EQ(verdicts[1][11].as<std::string>(), Sha(100));
  EXPECT_EQ(verdicts[1][12].as<int>(), 42);
  EXPECT_EQ(verdicts[1][13].as<std::string>(), "main");
  EXPECT_EQ(verdicts[1][14].as<std::string>(), Sha(6));
  EXPECT_EQ(verdicts[1][15].as<std::string>(), "main");
  EXPECT_EQ(verdicts[1][16].as<std::string>(), "merge_base");
  EXPECT_EQ(verdicts[1][17].as<std::string>(), "test-1");
  EXPECT_TRUE(verdicts[1][18].as<bool>());
}

TEST_F(GrafanaViewsTest, TheReadRoleReadsTheViewsAndNothingElse) {
  IngestExample();
  NewToken token;
  token.project_id = project_.id;
  token.name = "ci";
  token.token_hash = std::string(64, 'a');
  token.scopes = {"read"};
  ASSERT_TRUE(store_->CreateToken(token).has_value());

  pqxx::result role =
      Rows(std::string("SELECT rolcanlogin, rolsuper, rolcreaterole, "
                       "rolcreatedb, rolbypassrls FROM pg_roles WHERE rolname = '") +
           kReadRole + "'");
  ASSERT_EQ(role.size(), 1u);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(role[0][i].as<bool>()) << i;

  for (const auto& [view, columns] : Contract()) {
    std::string error;
    auto r = AsReader("SELECT count(*) FROM perfgate_views." + view, &error);
    ASSERT_TRUE(r.has_value()) << view << ": " << error;
    EXPECT_GT((*r)[0][0].as<int64_t>(), 0) << view;
  }
  // Every table and view outside the schema is closed to it, tokens first.
  std::string error;
  EXPECT_FALSE(AsReader("SELECT token_hash FROM tokens", &error).has_value());
  EXPECT_NE(error.find("permission denied"), std::string::npos) << error;
  int relations = 0;
  for (const auto& row :
       Rows("SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
            "AND c.relkind IN ('r', 'v', 'm', 'p', 'f')")) {
    const std::string relation = row[0].as<std::string>();
    EXPECT_FALSE(AsReader("SELECT 1 FROM " + relation + " LIMIT 1").has_value()) << relation;
    ++relations;
  }
  EXPECT_GE(relations, 15);  // projects ... bisect_steps, the samples view, schema_migrations
  EXPECT_EQ(Int(std::string("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON "
                            "n.oid = c.relnamespace WHERE n.nspname = 'public' AND "
                            "has_table_privilege('") +
                kReadRole + "', c.oid, 'SELECT')"),
            0);
  // No writes, through the views or otherwise; no objects of its own.
  for (const std::string& sql : {
           std::string("INSERT INTO perfgate_views.projects (project) VALUES ('x')"),
           std::string("UPDATE perfgate_views.alerts SET state = 'resolved'"),
           std::string("DELETE FROM perfgate_views.runs"),
           std::string("UPDATE projects SET public_read = true"),
           std::string("DELETE FROM tokens"),
           std::string("CREATE TABLE perfgate_views.mine (v integer)"),
           std::string("CREATE TABLE public.mine (v integer)"),
           std::string("CREATE VIEW perfgate_views.mine AS SELECT 1"),
       }) {
    EXPECT_FALSE(AsReader(sql).has_value()) << sql;
  }
  EXPECT_EQ(Int(std::string("SELECT count(*) FROM information_schema.table_privileges WHERE "
                            "grantee = '") +
                kReadRole + "' AND privilege_type <> 'SELECT'"),
            0);

  // The documented login: a user in the role connects and reads (docs/dashboards.md).
  static int logins = 0;
  const std::string user = "grafana_t" + std::to_string(++logins);
  Exec("DROP ROLE IF EXISTS " + user + "; CREATE ROLE " + user + " LOGIN PASSWORD 'secret-" + user +
       "' IN ROLE " + kReadRole);
  const std::string database = Rows("SELECT current_database()")[0][0].as<std::string>();
  pqxx::connection grafana("host=127.0.0.1 port=" + std::to_string(cluster_->server().port()) +
                           " user=" + user + " password=secret-" + user + " dbname=" + database);
  {
    pqxx::work tx(grafana);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM perfgate_views.runs")[0][0].as<int64_t>(), 8);
  }
  EXPECT_THROW(
      {
        pqxx::work tx(grafana);
        tx.exec("SELECT count(*) FROM runs");
      },
      pqxx::sql_error);
}

// A least-privilege owner (docs/operations.md) has no CREATEROLE: the migration still applies,
// creates the views and no role; after the documented commands the role reads them; and a
// database migrated once the role exists gets the grants from the migration itself.
TEST_F(GrafanaViewsTest, AnOwnerWithoutCreateRoleMigratesAndTheRoleIsMadeByHand) {
  static int owners = 0;
  const std::string owner = "owner_t" + std::to_string(++owners);
  auto superuser = [&](const std::string& database, const std::string& sql) {
    pqxx::connection conn(cluster_->server().DsnFor(database));
    pqxx::nontransaction tx(conn);
    tx.exec(sql);
  };
  auto owner_dsn = [&](const std::string& database) {
    return "host=127.0.0.1 port=" + std::to_string(cluster_->server().port()) + " user=" + owner +
           " password=pw dbname=" + database;
  };
  // The role is cluster-wide and this cluster's other databases made it: remove it first.
  if (Int(std::string("SELECT count(*) FROM pg_roles WHERE rolname = '") + kReadRole + "'") > 0) {
    for (const auto& row : Rows("SELECT datname FROM pg_database WHERE datallowconn")) {
      superuser(row[0].as<std::string>(), std::string("DROP OWNED BY ") + kReadRole);
    }
    superuser("postgres", std::string("DROP ROLE ") + kReadRole);
  }
  superuser("postgres", "CREATE ROLE " + owner + " LOGIN PASSWORD 'pw' NOCREATEROLE");
  superuser("postgres", "CREATE DATABASE " + owner + "_a OWNER " + owner);

  Result<MigrationReport> migrated = Migrate(owner_dsn(owner + "_a"));
  ASSERT_TRUE(migrated.has_value()) << migrated.error().ToString();
  EXPECT_NE(
      std::find(migrated->applied.begin(), migrated->applied.end(), "0010_create_grafana_views"),
      migrated->applied.end());
  EXPECT_EQ(Int(std::string("SELECT count(*) FROM pg_roles WHERE rolname = '") + kReadRole + "'"),
            0);
  {
    pqxx::connection conn(owner_dsn(owner + "_a"));
    pqxx::work tx(conn);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM perfgate_views.runs")[0][0].as<int64_t>(), 0);
    EXPECT_EQ(tx.exec("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = "
                      "'perfgate_views'")[0][0]
                  .as<std::string>(),
              owner);
  }

  // docs/dashboards.md, "The read role": a role with CREATEROLE makes it, the owner grants.
  superuser("postgres", std::string("CREATE ROLE ") + kReadRole + " NOLOGIN");
  {
    pqxx::connection conn(owner_dsn(owner + "_a"));
    pqxx::work tx(conn);
    tx.exec(std::string("GRANT USAGE ON SCHEMA perfgate_views TO ") + kReadRole);
    tx.exec(std::string("GRANT SELECT ON ALL TABLES IN SCHEMA perfgate_views TO ") + kReadRole);
    tx.exec(std::string("ALTER DEFAULT PRIVILEGES IN SCHEMA perfgate_views GRANT SELECT ON "
                        "TABLES TO ") +
            kReadRole);
    tx.commit();
  }
  auto reads = [&](const std::string& database) {
    pqxx::connection conn(cluster_->server().DsnFor(database));
    pqxx::work tx(conn);
    tx.exec(std::string("SET LOCAL ROLE ") + kReadRole);
    for (const auto& [view, columns] : Contract()) tx.exec("SELECT * FROM perfgate_views." + view);
    // A view a later migration adds is readable through the default privileges.
    tx.exec("RESET ROLE");
    tx.exec("SET LOCAL ROLE " + owner);
    tx.exec("CREATE VIEW perfgate_views.later AS SELECT 1 AS one");
    tx.exec(std::string("SET LOCAL ROLE ") + kReadRole);
    const bool later = tx.exec("SELECT one FROM perfgate_views.later")[0][0].as<int>() == 1;
    tx.abort();
    return later;
  };
  EXPECT_TRUE(reads(owner + "_a"));

  superuser("postgres", "CREATE DATABASE " + owner + "_b OWNER " + owner);
  migrated = Migrate(owner_dsn(owner + "_b"));
  ASSERT_TRUE(migrated.has_value()) << migrated.error().ToString();
  EXPECT_TRUE(reads(owner + "_b"));
}

TEST_F(GrafanaViewsTest, EveryDashboardQueryRunsAgainstTheViewsAsTheReadRole) {
  IngestExample();
  std::ifstream in(std::string(PERFGATE_FIXTURES_DIR) +
                   "/../../docs/grafana/perfgate-dashboard.json");
  ASSERT_TRUE(in.good());
  const json dashboard = json::parse(in);  // throws (fails the test) on invalid JSON

  // The shape Grafana imports: a PostgreSQL input named DS_PERFGATE that every query uses.
  ASSERT_TRUE(dashboard.contains("__inputs"));
  ASSERT_EQ(dashboard["__inputs"].size(), 1u);
  EXPECT_EQ(dashboard["__inputs"][0]["name"], "DS_PERFGATE");
  EXPECT_EQ(dashboard["__inputs"][0]["pluginId"], "grafana-postgresql-datasource");
  EXPECT_GE(dashboard["schemaVersion"].get<int>(), 39);
  EXPECT_FALSE(dashboard["uid"].get<std::string>().empty());

  std::map<std::string, std::vector<std::string>> values = {
      {"project", {"proj"}},           {"branch", {"main"}},      {"testbed", {"ci-1"}},
      {"benchmark", {"BM_A", "BM_B"}}, {"metric", {"real_time"}},
  };
  std::set<std::string> multi;
  std::vector<std::pair<std::string, std::string>> queries;  // (where, SQL)
  std::set<std::string> variables;
  for (const json& v : dashboard["templating"]["list"]) {
    const std::string name = v["name"];
    variables.insert(name);
    if (v.value("multi", false) || v.value("includeAll", false)) multi.insert(name);
    EXPECT_EQ(v["type"], "query") << name;
    const json& q = v["query"];
    queries.emplace_back("variable " + name, q.is_string()
                                                 ? q.get<std::string>()
                                                 : q.value("rawSql", q.value("query", "")));
  }
  EXPECT_EQ(variables,
            (std::set<std::string>{"project", "branch", "testbed", "benchmark", "metric"}));

  int datasources = 0;
  std::function<void(const json&, const std::string&)> walk = [&](const json& node,
                                                                  const std::string& where) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (it.key() == "rawSql") {
          queries.emplace_back(where, it.value().get<std::string>());
        } else if (it.key() == "datasource" && it.value().is_object() &&
                   it.value().value("type", "") != "grafana") {
          EXPECT_EQ(it.value().value("type", ""), "grafana-postgresql-datasource") << where;
          EXPECT_EQ(it.value().value("uid", ""), "${DS_PERFGATE}") << where;
          ++datasources;
        } else {
          walk(it.value(), node.contains("title") ? node["title"].get<std::string>()
                           : node.contains("name") && node["name"].is_string()
                               ? node["name"].get<std::string>()
                               : where);
        }
      }
    } else if (node.is_array()) {
      for (const json& child : node) walk(child, where);
    }
  };
  walk(dashboard, "dashboard");
  EXPECT_GT(datasources, 10);
  // 5 variables, 2 annotation queries, 5 panels.
  EXPECT_EQ(queries.size(), 12u);

  std::map<std::string, pqxx::result> results;
  for (const auto& [where, sql] : queries) {
    const std::string interpolated = Interpolate(sql, values, multi);
    EXPECT_EQ(interpolated.find('$'), std::string::npos) << where << ": " << interpolated;
    std::string error;
    auto r = AsReader(interpolated, &error);
    ASSERT_TRUE(r.has_value()) << where << ": " << error << "\n" << interpolated;
    EXPECT_GT(r->size(), 0u) << where << ": no rows\n" << interpolated;
    results[where] = *r;
  }
  // The variables offer what was ingested.
  auto column = [&](const std::string& where) {
    std::vector<std::string> out;
    for (const auto& row : results.at(where)) out.push_back(row[0].as<std::string>());
    return out;
  };
  EXPECT_EQ(column("variable project"), std::vector<std::string>{"proj"});
  EXPECT_EQ(column("variable branch"), (std::vector<std::string>{"feature", "main"}));
  EXPECT_EQ(column("variable benchmark"), (std::vector<std::string>{"BM_A", "BM_B"}));

  // The main panel's median per commit is the history's point (both the pooled median).
  const pqxx::result* medians = nullptr;
  for (const auto& [where, r] : results) {
    if (where.rfind("Median per commit", 0) == 0) medians = &r;
  }
  ASSERT_NE(medians, nullptr);
  ASSERT_EQ(medians->size(), 12u);  // 6 commits x BM_A, BM_B
  std::multiset<std::pair<std::string, double>> from_panel, from_history;
  for (const auto& row : *medians) {
    from_panel.emplace(row["metric"].as<std::string>(), row["value"].as<double>());
  }
  for (const auto& row : Rows("SELECT suite || '/' || benchmark || ' (' || unit || ')', value "
                              "FROM perfgate_views.history WHERE branch = 'main'")) {
    from_history.emplace(row[0].as<std::string>(), row[1].as<double>());
  }
  EXPECT_EQ(from_panel, from_history);
}

}  // namespace
}  // namespace perfgate::store
