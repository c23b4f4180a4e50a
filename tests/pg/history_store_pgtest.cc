// SPDX-License-Identifier: Apache-2.0
// PgStore's history against a real, migrated PostgreSQL: runs of tracked branches become one
// point per series in arrival order (even with two workers claiming at once), a rerun of a
// commit pools into its point and forces a full analysis, runs of other branches are only
// marked, a failed analysis leaves the run pending with nothing appended (and one that always
// fails is set aside by the worker), a testbed change brings both fingerprints and stores the
// environment change, triage moves the series' baseline and drops its states, and alerts of
// overlapping commit ranges share a group.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "server/history/analysis.h"
#include "server/history/service.h"
#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

std::string Sha(int n) { return testing::StoreSha(n); }

std::string Uuid(int n) { return testing::TestRunId(n); }

// What the worker's analysis would write, without any detection: fixed states, no alerts.
testing::RunAnalysis Recording(std::vector<HistoryRunWork>* seen, std::mutex* mutex) {
  return [seen, mutex](const HistoryRunWork& work) -> Result<std::vector<HistorySeriesUpdate>> {
    std::vector<HistorySeriesUpdate> updates;
    for (const HistorySeriesData& s : work.series) {
      HistorySeriesUpdate u;
      u.series_id = s.key.id;
      u.detector_state_json = R"({"seen":)" + std::to_string(s.length) + "}";
      u.monitor_state_json = "{}";
      updates.push_back(u);
    }
    std::lock_guard lock(*mutex);
    seen->push_back(work);
    return updates;
  };
}

// An analysis that writes empty states for every series and lets `bm_a` fill in BM_A's update.
testing::RunAnalysis ForBmA(
    std::function<void(const HistorySeriesData&, HistorySeriesUpdate&)> bm_a) {
  return [bm_a](const HistoryRunWork& work) -> Result<std::vector<HistorySeriesUpdate>> {
    std::vector<HistorySeriesUpdate> updates;
    for (const HistorySeriesData& s : work.series) {
      HistorySeriesUpdate& u = updates.emplace_back();
      u.series_id = s.key.id;
      u.detector_state_json = "{}";
      u.monitor_state_json = "{}";
      if (s.key.key.benchmark == "BM_A") bm_a(s, u);
    }
    return updates;
  };
}

class HistoryStoreTest : public testing::PgStoreTest {
 protected:
  void Ingest(const wire::RunUpload& run) {
    auto stored = store_->IngestRun(project_, run);
    ASSERT_TRUE(stored.has_value()) << stored.error().ToString();
  }

  int64_t Query(const std::string& sql) {
    return *pool_->WithTransaction<int64_t>(
        [&](pqxx::work& tx) -> Result<int64_t> { return tx.exec(sql)[0][0].as<int64_t>(); });
  }

  const std::vector<std::string> tracked_ = {"main"};
};

TEST_F(HistoryStoreTest, TwoWorkersAppendEveryRunOnceInArrivalOrder) {
  for (int i = 1; i <= 24; ++i) Ingest(testing::SampleRun(i, i, "main", 100 + i));
  Ingest(testing::SampleRun(100, 500, "feature"));  // not tracked: marked, no points
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  std::atomic<int> analysed{0};
  auto work = [&] {
    while (true) {
      auto next = testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex));
      ASSERT_TRUE(next.has_value()) << next.error().ToString();
      if (!*next) return;
      EXPECT_EQ((*next)->series, 2u);
      ++analysed;
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(analysed.load(), 24);
  EXPECT_EQ(*store_->PendingHistoryRuns(), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM history_series"), 2);
  EXPECT_EQ(Query("SELECT count(*) FROM history_points"), 48);
  // Point k of each series is the k-th run: commit k + 1, its median as the level.
  EXPECT_EQ(Query("SELECT count(*) FROM history_points hp JOIN commits c ON c.id = hp.commit_id "
                  "WHERE c.sha <> lpad(to_hex(hp.position + 1 + 90), 40, '0')"),
            0);
  EXPECT_EQ(Query("SELECT count(*) FROM history_points hp JOIN history_series hs ON "
                  "hs.id = hp.series_id JOIN benchmarks b ON b.id = hs.benchmark_id "
                  "WHERE b.name = 'BM_A' AND hp.level <> 100 + hp.position + 1 + 1"),
            0);
  EXPECT_EQ(Query("SELECT max(length) FROM history_series"), 24);
  // The analysis saw each series grow one point at a time, levels from the baseline on.
  ASSERT_EQ(seen.size(), 24u);
  for (const HistoryRunWork& w : seen) {
    for (const HistorySeriesData& s : w.series) {
      EXPECT_EQ(static_cast<int64_t>(s.levels.size()), s.length);
      EXPECT_EQ(s.testbed_ids.size(), s.levels.size());
    }
  }
  EXPECT_EQ(Query("SELECT count(*) FROM history_series WHERE detector_state->>'seen' = '24'"), 2);
}

TEST_F(HistoryStoreTest, ALongSeriesKeepsABoundedAnalysisWindow) {
  store_->SetHistoryWindow({10, 5});
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  for (int i = 1; i <= 14; ++i) {
    Ingest(testing::SampleRun(i, i));
    auto next = testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex));
    ASSERT_TRUE(next.has_value() && next->has_value());
    const HistorySeriesData& s = seen.back().series.front();
    // Up to 10 points from the baseline; at 11 the baseline moves to the last 5 and the state
    // is rebuilt from there.
    EXPECT_EQ(s.baseline_from, i <= 10 ? 0 : 6) << i;
    EXPECT_EQ(static_cast<int64_t>(s.levels.size()), s.length - s.baseline_from) << i;
    EXPECT_EQ(s.detector_state_json.empty(), i == 1 || i == 11) << i;
  }
}

TEST_F(HistoryStoreTest, ARerunPoolsIntoItsPointAndForcesAFullAnalysis) {
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  Ingest(testing::SampleRun(1, 1));
  Ingest(testing::SampleRun(2, 2));
  ASSERT_TRUE(testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex)).has_value());
  ASSERT_TRUE(testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex)).has_value());
  Ingest(testing::SampleRun(3, 1, "main", 200));  // commit 1 again
  bool state_dropped = false;
  auto next = testing::AnalyseNextRun(
      *store_, tracked_,
      [&](const HistoryRunWork& work) -> Result<std::vector<HistorySeriesUpdate>> {
        for (const HistorySeriesData& s : work.series) {
          state_dropped = s.detector_state_json.empty();
          EXPECT_EQ(s.length, 2);
        }
        return std::vector<HistorySeriesUpdate>{};
      });
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(state_dropped);
  EXPECT_EQ(Query("SELECT count(*) FROM history_points"), 4);
  // BM_A at commit 1: {100, 102, 101} and {200, 202, 201} pooled: median 151.
  EXPECT_EQ(Query("SELECT level FROM history_points hp JOIN history_series hs ON "
                  "hs.id = hp.series_id JOIN benchmarks b ON b.id = hs.benchmark_id "
                  "WHERE b.name = 'BM_A' AND hp.position = 0"),
            151);
  EXPECT_EQ(Query("SELECT cardinality(run_ids) FROM history_points WHERE position = 0 LIMIT 1"), 2);
}

TEST_F(HistoryStoreTest, AFailedAnalysisLeavesTheRunPendingAndNothingAppended) {
  Ingest(testing::SampleRun(1, 1));
  auto failed = testing::AnalyseNextRun(
      *store_, tracked_, [](const HistoryRunWork&) -> Result<std::vector<HistorySeriesUpdate>> {
        return MakeError(ErrorCode::kInternal, "boom");
      });
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().message, "boom");
  EXPECT_EQ(*store_->PendingHistoryRuns(), 1);
  EXPECT_EQ(Query("SELECT count(*) FROM history_points"), 0);
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  auto retried = testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex));
  ASSERT_TRUE(retried.has_value() && retried->has_value());
  EXPECT_EQ(Query("SELECT count(*) FROM history_points"), 2);
}

TEST_F(HistoryStoreTest, ARunSetAsideIsMarkedWithItsErrorAndTheNextIsAnalysed) {
  Ingest(testing::SampleRun(1, 1));
  Ingest(testing::SampleRun(2, 2));
  auto skipped = store_->SkipNextRun(tracked_, "value out of range: underflow");
  ASSERT_TRUE(skipped.has_value()) << skipped.error().ToString();
  EXPECT_EQ(*skipped, std::optional<std::string>(Uuid(1)));
  EXPECT_EQ(Query("SELECT count(*) FROM runs WHERE history_error = "
                  "'value out of range: underflow' AND history_analysed_at IS NOT NULL"),
            1);
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  auto next = testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex));
  ASSERT_TRUE(next.has_value() && next->has_value());
  EXPECT_EQ((*next)->run_id, Uuid(2));
  EXPECT_EQ(Query("SELECT count(*) FROM history_points"), 2);    // run 2's two series, not run 1's
  EXPECT_EQ(*store_->SkipNextRun(tracked_, "x"), std::nullopt);  // nothing pending
}

// The worker itself: a run whose analysis the database refuses every time (a trigger stands in
// for a bug such data exposes) is set aside after max_attempts, and the runs behind it are
// analysed; without that the project's history would stop there for ever.
TEST_F(HistoryStoreTest, TheWorkerSetsAsideARunThatAlwaysFailsAndGoesOn) {
  *pool_->WithTransaction<int64_t>([&](pqxx::work& tx) -> Result<int64_t> {
    tx.exec(
        "CREATE FUNCTION refuse_commit_3() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF (SELECT sha FROM commits WHERE id = NEW.commit_id) = '" +
        Sha(3) +
        "' THEN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '22003'; END IF; "
        "RETURN NEW; END $$");
    tx.exec(
        "CREATE TRIGGER refuse_commit_3 BEFORE INSERT ON history_points FOR EACH ROW "
        "EXECUTE FUNCTION refuse_commit_3()");
    return 0;
  });
  server::history::HistoryServiceOptions options;
  options.tracked_branches = tracked_;
  options.max_attempts = 3;
  options.first_backoff = std::chrono::milliseconds(1);
  options.poll = std::chrono::milliseconds(20);
  server::history::HistoryService service(*store_, options);
  for (int i = 1; i <= 5; ++i) Ingest(testing::SampleRun(i, i, "main", 100 + i));
  service.Start();
  for (int i = 0; i < 600 && *store_->PendingHistoryRuns() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  service.Stop();
  EXPECT_EQ(*store_->PendingHistoryRuns(), 0);
  EXPECT_EQ(service.stats().skipped, 1);
  EXPECT_EQ(service.stats().runs, 4);
  EXPECT_GE(service.stats().errors, 3);
  // The reason stored for operators is the store's own wording; the database's text (the
  // trigger's "refused for the test") goes to the server log only, as for every store error.
  EXPECT_EQ(Query("SELECT count(*) FROM runs WHERE history_error LIKE "
                  "'%the database refused the request%' AND id = '" +
                  Uuid(3) + "'"),
            1);
  // Four points per series: commits 1, 2, 4 and 5.
  EXPECT_EQ(Query("SELECT max(length) FROM history_series"), 4);
}

// Where a series' testbed changes, the unit of work carries the two fingerprints, and a new
// alert stores the environment change the analysis made of them.
TEST_F(HistoryStoreTest, AnEnvironmentChangeIsLoadedAndStored) {
  for (int i = 1; i <= 3; ++i) {
    wire::RunUpload run = testing::SampleRun(i, i);
    if (i == 3) run.testbed.fingerprint_json = R"({"cpu_model":"y","cores":8})";
    Ingest(run);
  }
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  for (int i = 1; i < 3; ++i) {
    ASSERT_TRUE(testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex)).has_value());
    EXPECT_TRUE(seen.back().testbed_fingerprints.empty());  // one testbed so far
  }
  auto with_alert = testing::AnalyseNextRun(
      *store_, tracked_,
      [&](const HistoryRunWork& work) -> Result<std::vector<HistorySeriesUpdate>> {
        const HistorySeriesData& a = work.series.front();
        EXPECT_NE(a.testbed_ids[1], a.testbed_ids[2]);
        EXPECT_EQ(work.testbed_fingerprints.size(), 2u);
        const std::string& before = work.testbed_fingerprints.at(a.testbed_ids[1]);
        const std::string& after = work.testbed_fingerprints.at(a.testbed_ids[2]);
        EXPECT_EQ(before, R"({"cpu_model": "x"})");
        EXPECT_EQ(after, R"({"cores": 8, "cpu_model": "y"})");
        std::vector<HistorySeriesUpdate> updates;
        for (const HistorySeriesData& s : work.series) {
          HistorySeriesUpdate& u = updates.emplace_back();
          u.series_id = s.key.id;
          u.detector_state_json = u.monitor_state_json = "{}";
          if (s.key.key.benchmark != "BM_A") continue;
          NewAlertRecord alert;
          alert.position = 2;
          alert.kind = "regression";
          alert.cause = "environment";
          alert.detectors = {"e-divisive"};
          alert.environment_change_json = *server::history::EnvironmentChangeJson(before, after);
          u.alerts.push_back(alert);
        }
        return updates;
      });
  ASSERT_TRUE(with_alert.has_value() && with_alert->has_value()) << with_alert.error().ToString();
  auto page = store_->ListAlerts(project_, AlertFilter{});
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(page->alerts.size(), 1u);
  EXPECT_EQ(page->alerts[0].environment_change_json,
            R"({"after": {"cores": 8, "cpu_model": "y"}, "before": {"cpu_model": "x"}, )"
            R"("changed": ["cores", "cpu_model"]})");
}

TEST_F(HistoryStoreTest, AlertsAreStoredListedAndTriageRebaselines) {
  for (int i = 1; i <= 6; ++i) Ingest(testing::SampleRun(i, i, "main", i <= 3 ? 100 : 120));
  std::vector<HistoryRunWork> seen;
  std::mutex mutex;
  for (int i = 1; i < 6; ++i) {
    ASSERT_TRUE(testing::AnalyseNextRun(*store_, tracked_, Recording(&seen, &mutex)).has_value());
  }
  // The sixth run: an alert at position 3 on BM_A, and a step for the change points.
  auto last = testing::AnalyseNextRun(
      *store_, tracked_, ForBmA([](const HistorySeriesData&, HistorySeriesUpdate& u) {
        u.steps.push_back({3, 0.2, 1e-5, 101, 121, {"e-divisive", "cusum"}});
        NewAlertRecord a;
        a.position = 3;
        a.kind = "regression";
        a.cause = "code";
        a.magnitude = 0.2;
        a.ci_low = 0.18;
        a.ci_high = 0.22;
        a.p_value = 1e-5;
        a.q_value = 2e-5;
        a.level_before = 101;
        a.level_after = 121;
        a.detectors = {"e-divisive", "cusum"};
        u.alerts.push_back(a);
        u.alerts.push_back(a);  // the same position twice: stored once
      }));
  ASSERT_TRUE(last.has_value() && last->has_value()) << last.error().ToString();
  ASSERT_EQ((*last)->new_alert_ids.size(), 1u);
  const int64_t id = (*last)->new_alert_ids[0];
  EXPECT_EQ(Query("SELECT count(*) FROM change_points"), 1);

  auto page = store_->ListAlerts(project_, AlertFilter{});
  ASSERT_TRUE(page.has_value()) << page.error().ToString();
  ASSERT_EQ(page->alerts.size(), 1u);
  const AlertRecord& a = page->alerts[0];
  EXPECT_EQ(a.series.key.benchmark, "BM_A");
  EXPECT_EQ(a.last_good.sha, Sha(3));
  EXPECT_EQ(a.first_bad.sha, Sha(4));
  EXPECT_EQ(a.first_bad.run_id, Uuid(4));
  EXPECT_EQ(a.first_bad.subject, "c4");
  EXPECT_EQ(a.detectors, (std::vector<std::string>{"e-divisive", "cusum"}));
  EXPECT_EQ(*a.ci_low, 0.18);
  EXPECT_TRUE(a.environment_change_json.empty());

  // A later run measures the open alert again: new figures, the same BH factor (q / p = 2).
  auto remeasure = [&](int run, double p_value) {
    Ingest(testing::SampleRun(run, run, "main", 120));
    auto again = testing::AnalyseNextRun(
        *store_, tracked_, ForBmA([&](const HistorySeriesData& s, HistorySeriesUpdate& u) {
          ASSERT_EQ(s.open_alerts.size(), 1u);
          EXPECT_EQ(s.open_alerts[0].position, 3);
          NewAlertRecord measured;
          measured.position = 3;
          measured.kind = "regression";
          measured.cause = "code";
          measured.magnitude = 0.21;
          measured.p_value = p_value;
          measured.level_before = 100;
          measured.level_after = 121;
          measured.detectors = {"e-divisive"};
          // As the worker's analysis does, from the figures the store loaded.
          measured.q_value = server::history::RefreshedQValue(s.open_alerts[0], p_value);
          u.refreshed.emplace_back(3, measured);
        }));
    ASSERT_TRUE(again.has_value() && again->has_value()) << again.error().ToString();
    EXPECT_TRUE((*again)->new_alert_ids.empty());
  };
  remeasure(7, 1e-6);
  auto refreshed = store_->ListAlerts(project_, AlertFilter{});
  ASSERT_TRUE(refreshed.has_value());
  ASSERT_EQ(refreshed->alerts.size(), 1u);
  EXPECT_EQ(refreshed->alerts[0].magnitude, 0.21);
  EXPECT_DOUBLE_EQ(refreshed->alerts[0].q_value, 2e-6);
  EXPECT_FALSE(refreshed->alerts[0].ci_low.has_value());
  // A long series with a large step has p-values far below 1e-154, whose product with the old
  // q-value is below the smallest double: the factor is taken first, so nothing underflows (a
  // 10,000-point series once stopped the history here, retrying for ever).
  remeasure(8, 1e-200);
  remeasure(9, 1e-250);
  refreshed = store_->ListAlerts(project_, AlertFilter{});
  ASSERT_TRUE(refreshed.has_value());
  EXPECT_DOUBLE_EQ(refreshed->alerts[0].q_value, 2e-250);

  auto detail = store_->GetAlert(project_, id, 2);
  ASSERT_TRUE(detail.has_value());
  ASSERT_EQ(detail->excerpt.size(), 4u);  // positions 1..4
  EXPECT_EQ(detail->excerpt[2].position, 3);
  EXPECT_EQ(detail->excerpt[2].values, (std::vector<double>{120, 122, 121}));
  ASSERT_EQ(detail->history.size(), 1u);

  AlertUpdate ack;
  ack.state = "acknowledged";
  ack.note = "looking";
  ack.actor = "ann";
  auto updated = store_->UpdateAlert(project_, id, ack);
  ASSERT_TRUE(updated.has_value()) << updated.error().ToString();
  EXPECT_EQ(updated->state, "acknowledged");
  EXPECT_EQ(updated->state_changed_by, "ann");
  EXPECT_EQ(Query("SELECT baseline_from FROM history_series hs JOIN benchmarks b ON "
                  "b.id = hs.benchmark_id WHERE b.name = 'BM_A'"),
            3);
  EXPECT_EQ(Query("SELECT count(*) FROM history_series WHERE detector_state IS NULL"), 1);
  AlertUpdate note_only;
  note_only.note = "bisect started";
  note_only.actor = "bob";
  auto noted = store_->UpdateAlert(project_, id, note_only);
  ASSERT_TRUE(noted.has_value());
  EXPECT_EQ(noted->state, "acknowledged");
  EXPECT_EQ(noted->note, "bisect started");
  EXPECT_EQ(Query("SELECT count(*) FROM alert_events"), 3);
  EXPECT_EQ(store_->UpdateAlert(project_, id + 100, ack).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(store_->GetAlert(project_, id + 100, 2).error().code, ErrorCode::kNotFound);
  AlertFilter bad;
  bad.cursor = "x";
  EXPECT_EQ(store_->ListAlerts(project_, bad).error().field, "cursor");
}

// Alert groups: testbed ci-1 skips commit 5 (its step's range is 4..6), ci-2 skips commit 4
// (3..5); both alerts form one group whose range narrows to 4..5, the next disjoint range starts
// another, a group triage closes every member, and a closed group takes no new member.
TEST_F(HistoryStoreTest, OverlappingAlertsShareAGroupWhoseRangeNarrows) {
  // (testbed, commit) -> the benchmark whose new point is alerted.
  const std::map<std::pair<std::string, int>, std::string> plan = {
      {{"ci-1", 6}, "BM_A"}, {{"ci-2", 5}, "BM_A"}, {{"ci-2", 9}, "BM_B"}, {{"ci-3", 10}, "BM_A"}};
  std::map<std::string, std::pair<std::string, int>> runs;  // run id -> (testbed, commit)
  auto analyse = [&](const HistoryRunWork& work) -> Result<std::vector<HistorySeriesUpdate>> {
    std::vector<HistorySeriesUpdate> updates;
    const auto where = runs.at(work.run_id);
    for (const HistorySeriesData& series : work.series) {
      HistorySeriesUpdate& u = updates.emplace_back();
      u.series_id = series.key.id;
      u.detector_state_json = "{}";
      u.monitor_state_json = "{}";
      const auto alerted = plan.find(where);
      if (alerted == plan.end() || alerted->second != series.key.key.benchmark) continue;
      NewAlertRecord a;
      a.position = series.length - 1;
      a.kind = "regression";
      a.cause = "code";
      a.magnitude = where.second == 5 ? 0.2 : 0.1;
      a.p_value = a.q_value = where.second == 5 ? 1e-9 : 1e-6;
      a.level_before = 100;
      a.level_after = 110;
      a.detectors = {"e-divisive"};
      u.alerts.push_back(a);
    }
    return updates;
  };
  int n = 0;
  auto step = [&](const std::string& testbed, int commit) {
    wire::RunUpload run = testing::SampleRun(++n, commit);
    run.testbed.name = testbed;
    runs[run.id] = {testbed, commit};
    Ingest(run);
    auto next = testing::AnalyseNextRun(*store_, tracked_, analyse);
    ASSERT_TRUE(next.has_value() && next->has_value());
  };
  for (int commit = 1; commit <= 9; ++commit) {
    if (commit != 5) {
      ASSERT_NO_FATAL_FAILURE(step("ci-1", commit));
    }
    if (commit != 4) {
      ASSERT_NO_FATAL_FAILURE(step("ci-2", commit));
    }
  }
  AlertGroupFilter all;
  all.state = "all";
  auto page = store_->ListAlertGroups(project_, all);
  ASSERT_TRUE(page.has_value()) << page.error().ToString();
  ASSERT_EQ(page->groups.size(), 2u);  // newest first
  const AlertGroupRecord& first = page->groups[1];
  EXPECT_EQ(first.last_good.sha, Sha(4));
  EXPECT_EQ(first.first_bad.sha, Sha(5));
  EXPECT_EQ(first.members, 2);
  EXPECT_EQ(first.state, "open");
  EXPECT_EQ(page->groups[0].members, 1);  // ci-2's BM_B at 8..9
  auto detail = store_->GetAlertGroup(project_, first.id);
  ASSERT_TRUE(detail.has_value());
  ASSERT_EQ(detail->members.size(), 2u);
  EXPECT_EQ(detail->members[0].series.testbed, "ci-2");  // q 1e-9: the most significant
  EXPECT_EQ(first.most_significant, detail->members[0].id);
  EXPECT_EQ(detail->members[1].last_good.sha, Sha(4));  // ci-1's own range is 4..6
  EXPECT_EQ(detail->members[1].first_bad.sha, Sha(6));

  AlertUpdate fixed;
  fixed.state = "resolved";
  fixed.note = "reverted";
  fixed.actor = "ann";
  auto closed = store_->UpdateAlertGroup(project_, first.id, fixed);
  ASSERT_TRUE(closed.has_value()) << closed.error().ToString();
  EXPECT_EQ(closed->group.state, "closed");
  EXPECT_EQ(closed->group.states.at("resolved"), 2);
  EXPECT_EQ(Query("SELECT count(*) FROM alert_events WHERE state = 'resolved' AND actor = 'ann' "
                  "AND note = 'reverted'"),
            2);
  EXPECT_EQ(store_->UpdateAlertGroup(project_, first.id + 100, fixed).error().code,
            ErrorCode::kNotFound);
  AlertGroupFilter open;
  auto open_groups = store_->ListAlertGroups(project_, open);
  ASSERT_TRUE(open_groups.has_value());
  EXPECT_EQ(open_groups->groups.size(), 1u);

  // ci-3 measured commit 3, then 10: its range 3..10 overlaps the closed group (4..5) and the
  // open one (8..9), and joins the open one, whose range stays 8..9.
  ASSERT_NO_FATAL_FAILURE(step("ci-2", 10));
  ASSERT_NO_FATAL_FAILURE(step("ci-3", 3));
  ASSERT_NO_FATAL_FAILURE(step("ci-3", 10));
  EXPECT_EQ(Query("SELECT count(*) FROM alert_groups"), 2);
  auto joined = store_->GetAlertGroup(project_, page->groups[0].id);
  ASSERT_TRUE(joined.has_value());
  EXPECT_EQ(joined->group.members, 2);
  EXPECT_EQ(joined->group.last_good.sha, Sha(8));
  EXPECT_EQ(joined->group.first_bad.sha, Sha(9));
}

}  // namespace
}  // namespace perfwarden::store
