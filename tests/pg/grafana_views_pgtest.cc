// SPDX-License-Identifier: Apache-2.0
// The dashboard contract of migration 0010 against a real, migrated PostgreSQL: the views in
// perfwarden_views have exactly their documented columns (docs/dashboards.md) and the rows and
// statistics of runs ingested through the store (medians as perfwarden computes them). Who reads
// them, and the dashboard's queries, are grafana_read_role_pgtest.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "stats/descriptive.h"
#include "tests/testing/grafana_views_fixture.h"

namespace perfwarden::store {
namespace {

using views_testing::Contract;
using views_testing::GrafanaViewsTest;
using views_testing::Sha;
using views_testing::Uuid;

TEST_F(GrafanaViewsTest, EveryViewHasItsDocumentedColumns) {
  std::set<std::string> views;
  for (const auto& row : Rows("SELECT table_name FROM information_schema.views "
                              "WHERE table_schema = 'perfwarden_views'")) {
    views.insert(row[0].as<std::string>());
  }
  std::set<std::string> documented;
  for (const auto& [view, columns] : Contract()) documented.insert(view);
  EXPECT_EQ(views, documented);
  for (const auto& [view, columns] : Contract()) {
    std::vector<std::string> actual;
    for (const auto& row : Rows("SELECT column_name FROM information_schema.columns WHERE "
                                "table_schema = 'perfwarden_views' AND table_name = '" +
                                view + "' ORDER BY ordinal_position")) {
      actual.push_back(row[0].as<std::string>());
    }
    EXPECT_EQ(actual, columns) << view;
  }
  // Nothing else lives in the schema (the read role may SELECT everything in it).
  EXPECT_EQ(Int("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'perfwarden_views' AND c.relkind <> 'v'"),
            0);
}

TEST_F(GrafanaViewsTest, RunsSeriesPointsAndRepetitionsShowTheIngestedRuns) {
  IngestExample();
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.runs WHERE project = 'proj'"), 8);
  pqxx::result pr = Rows(
      "SELECT branch, commit_sha, commit_subject, commit_author, testbed, pr, target_branch, "
      "merge_base_sha, ci_provider, ci_job_url, status, started_at = '2024-05-02T10:00:00Z', "
      "commit_time = '2024-05-01T10:00:00Z', time = created_at, sample_count "
      "FROM perfwarden_views.runs WHERE run_id = '" +
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

  // One row per (run, benchmark, metric); its statistics are perfwarden's (stats/descriptive).
  pqxx::result points = Rows(
      "SELECT run_id, benchmark, value, median, mean, min, max, stddev, cv, n, "
      "repetitions::text, unit, direction, suite, branch, testbed, commit_sha "
      "FROM perfwarden_views.series_points WHERE project = 'proj' ORDER BY time, benchmark");
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
  EXPECT_EQ(Rows("SELECT median FROM perfwarden_views.series_points WHERE run_id = '" + Uuid(7) +
                 "' AND benchmark = 'BM_A'")[0][0]
                .as<double>(),
            133);

  // One row per repetition, 0-based, in order; as many as series_points counts.
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.repetitions WHERE project = 'proj'"),
            Int("SELECT sum(n) FROM perfwarden_views.series_points WHERE project = 'proj'"));
  pqxx::result reps =
      Rows("SELECT repetition, value FROM perfwarden_views.repetitions WHERE run_id = '" + Uuid(7) +
           "' AND benchmark = 'BM_A' ORDER BY repetition");
  ASSERT_EQ(reps.size(), 4u);
  const double expected[] = {130, 131, 135, 140};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(reps[i][0].as<int>(), i);
    EXPECT_EQ(reps[i][1].as<double>(), expected[i]);
  }
  // The lookups the dashboard's variables read.
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.projects WHERE project = 'proj'"), 1);
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.branches WHERE project = 'proj'"), 2);
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.testbeds WHERE project = 'proj' AND "
                "testbed = 'ci-1' AND fingerprint ->> 'cpu_model' = 'x'"),
            1);
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.benchmarks WHERE project = 'proj'"), 2);
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.metrics WHERE project = 'proj' AND "
                "metric = 'real_time' AND unit = 'ns' AND direction = 'lower'"),
            1);
}

TEST_F(GrafanaViewsTest, HistoryChangePointsAlertsAndVerdicts) {
  IngestExample();
  // One point per main commit; the rerun pooled into commit 6's point.
  pqxx::result history = Rows(
      "SELECT position, commit_sha, value, n, run_count, first_run_id, commit_subject, "
      "branch, testbed, time IS NOT NULL FROM perfwarden_views.history "
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
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.history WHERE branch = 'feature'"), 0);
  // The history's level is the pooled median of the repetitions of the commit's runs.
  EXPECT_EQ(Int("SELECT count(*) FROM perfwarden_views.history h JOIN ("
                " SELECT commit_sha, benchmark, percentile_cont(0.5) WITHIN GROUP (ORDER BY value)"
                " AS median FROM perfwarden_views.repetitions WHERE branch = 'main'"
                " GROUP BY commit_sha, benchmark) r USING (commit_sha, benchmark)"
                " WHERE h.value = r.median"),
            12);

  pqxx::result steps = Rows(
      "SELECT benchmark, position, last_good_sha, first_bad_sha, magnitude, p_value, "
      "level_before, level_after, array_to_string(detectors, ','), "
      "time = (SELECT created_at FROM perfwarden_views.runs WHERE run_id = '" +
      Uuid(4) + "') FROM perfwarden_views.change_points WHERE project = 'proj'");
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
      "time = (SELECT created_at FROM perfwarden_views.runs WHERE run_id = '" +
      Uuid(4) +
      "'), state_changed_at IS NULL FROM perfwarden_views.alerts "
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
      "FROM perfwarden_views.verdicts WHERE project = 'proj' ORDER BY verdict_id");
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

}  // namespace
}  // namespace perfwarden::store
