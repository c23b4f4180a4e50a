// SPDX-License-Identifier: Apache-2.0
// Fixture of the dashboard contract's tests (tests/pg/grafana_*_pgtest.cc): the views' documented
// columns, a migrated store with a history of runs, alerts and verdicts ingested through it, and
// queries run as the owner or as the read role perfwarden_grafana_read.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "server/store/pg_stores.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store::views_testing {

constexpr const char* kReadRole = "perfwarden_grafana_read";

inline std::string Sha(int n) { return testing::StoreSha(n); }

inline std::string Uuid(int n) { return testing::TestRunId(n); }

// The contract: every view's columns, in order (docs/dashboards.md has a table per view).
// clang-format off
inline const std::map<std::string, std::vector<std::string>>& Contract() {
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
                  "state_changed_by", "state_changed_at", "created_at", "group_id",
                  "range_end", "range_end_sha", "creep_slope", "creep_slope_low",
                  "creep_slope_high"}},
      {"verdicts", {"time", "verdict_id", "run_id", "project", "branch", "testbed", "commit_sha",
                    "pr", "target_branch", "outcome", "latest", "regressions", "improvements",
                    "equivalent", "inconclusive", "ignored", "new_series",
                    "baseline_commit_sha", "baseline_branch", "baseline_selection",
                    "algorithm_version", "created_at"}},
  };
  return contract;
}
// clang-format on

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
        if (s.key.key.benchmark == "BM_A" && s.levels.size() >= 4) {
          u.steps.push_back({3, 0.2, 1e-5, 101, 121, {"e-divisive", "cusum"}});
          a.kind = "regression";
          a.magnitude = 0.2;
          a.ci_low = 0.18;
          a.ci_high = 0.22;
          a.level_before = 101;
          a.level_after = 121;
          u.alerts.push_back(a);  // stored once: later analyses find it there
        }
        if (s.key.key.benchmark == "BM_B" && s.levels.size() >= 4) {
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
    // Asked again with other parameters (the same question would get the stored answer back).
    verdict.outcome = "pass";
    verdict.parameters_json = R"({"threshold_percent":20})";
    verdict.summary_json =
        R"({"counts":{"regression":0,"improvement":0,"equivalent":2,"inconclusive":0,)"
        R"("ignored":0,"new":0}})";
    ASSERT_TRUE(store_->SaveVerdict(project_, verdict).has_value());
  }
};

}  // namespace perfwarden::store::views_testing
