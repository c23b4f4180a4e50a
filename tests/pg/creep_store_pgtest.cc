// SPDX-License-Identifier: Apache-2.0
// Creep alerts in PgStore against a real, migrated PostgreSQL (migration 0017): a creep alert is
// stored with its range end and slope and read back; measured again, its figures and range follow
// the drift; a step's refresh never turns it into a step (nor a creep's a step's alert into a
// creep); kind=creep filters; the schema refuses a creep without its figures.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/history/analysis.h"
#include "server/store/pg_stores.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

// What the worker's analysis would write: empty states, and `bm_a` fills in BM_A's update.
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

NewAlertRecord Creep(int64_t position, int64_t end, double slope) {
  NewAlertRecord a;
  a.position = position;
  a.kind = "creep";
  a.cause = "code";
  a.magnitude = slope * static_cast<double>(end - position);
  a.p_value = 1e-8;
  a.q_value = 2e-8;
  a.level_before = 100;
  a.level_after = 100 * (1 + a.magnitude);
  a.detectors = {"mann-kendall", "theil-sen"};
  a.creep = CreepFigures{end, slope, slope * 0.9, slope * 1.1};
  return a;
}

class CreepStoreTest : public testing::PgStoreTest {
 protected:
  void Ingest(int n) {
    auto stored = store_->IngestRun(project_, testing::SampleRun(n, n, "main", 100 + n));
    ASSERT_TRUE(stored.has_value()) << stored.error().ToString();
  }
  Result<std::optional<HistoryRunResult>> Analyse(
      std::function<void(const HistorySeriesData&, HistorySeriesUpdate&)> bm_a) {
    return testing::AnalyseNextRun(*store_, {"main"}, ForBmA(std::move(bm_a)));
  }
  AlertRecord Only(const std::string& kind = "") {
    AlertFilter filter;
    filter.state = "all";
    filter.kind = kind;
    auto page = store_->ListAlerts(project_, filter);
    EXPECT_TRUE(page.has_value()) << page.error().ToString();
    EXPECT_EQ(page->alerts.size(), 1u);
    return page->alerts.empty() ? AlertRecord{} : page->alerts[0];
  }
};

TEST_F(CreepStoreTest, StoredReadRefreshedAndNeverTurnedIntoAStep) {
  for (int i = 1; i <= 12; ++i) Ingest(i);
  for (int i = 1; i < 10; ++i) {
    ASSERT_TRUE(Analyse([](const HistorySeriesData&, HistorySeriesUpdate&) {}).has_value());
  }
  auto raised = Analyse([](const HistorySeriesData&, HistorySeriesUpdate& u) {
    u.alerts.push_back(Creep(3, 8, 0.01));
  });
  ASSERT_TRUE(raised.has_value() && raised->has_value()) << raised.error().ToString();
  ASSERT_EQ((*raised)->new_alert_ids.size(), 1u);
  AlertRecord a = Only("creep");
  EXPECT_EQ(a.kind, "creep");
  EXPECT_EQ(a.position, 3);
  EXPECT_EQ(a.last_good.sha, testing::StoreSha(3));
  EXPECT_EQ(a.first_bad.sha, testing::StoreSha(4));
  ASSERT_TRUE(a.creep.has_value());
  EXPECT_EQ(a.creep->range_end, 8);
  EXPECT_DOUBLE_EQ(a.creep->slope, 0.01);
  EXPECT_DOUBLE_EQ(a.creep->slope_low, 0.009);
  EXPECT_DOUBLE_EQ(a.creep->slope_high, 0.011);
  EXPECT_DOUBLE_EQ(a.magnitude, 0.05);
  EXPECT_FALSE(a.ci_low.has_value());
  AlertFilter regressions;
  regressions.state = "all";
  regressions.kind = "regression";
  EXPECT_TRUE(store_->ListAlerts(project_, regressions)->alerts.empty());

  // A step measured near it refreshes nothing of it: the kinds never cross.
  auto step = Analyse([](const HistorySeriesData& s, HistorySeriesUpdate& u) {
    ASSERT_EQ(s.open_alerts.size(), 1u);
    NewAlertRecord measured;
    measured.position = 3;
    measured.kind = "regression";
    measured.cause = "code";
    measured.magnitude = 0.3;
    measured.p_value = 1e-3;
    measured.q_value = 1e-3;
    measured.level_before = 100;
    measured.level_after = 130;
    measured.detectors = {"e-divisive"};
    u.refreshed.emplace_back(3, measured);
  });
  ASSERT_TRUE(step.has_value() && step->has_value()) << step.error().ToString();
  a = Only();
  EXPECT_EQ(a.kind, "creep");
  EXPECT_DOUBLE_EQ(a.magnitude, 0.05);
  ASSERT_TRUE(a.creep.has_value());
  EXPECT_EQ(a.creep->range_end, 8);

  // The creep measured again as the drift goes on: its range and figures follow.
  auto later = Analyse([](const HistorySeriesData& s, HistorySeriesUpdate& u) {
    ASSERT_EQ(s.open_alerts.size(), 1u);
    NewAlertRecord measured = Creep(3, 10, 0.012);
    measured.q_value = server::history::RefreshedQValue(s.open_alerts[0], measured.p_value);
    u.refreshed.emplace_back(3, measured);
  });
  ASSERT_TRUE(later.has_value() && later->has_value()) << later.error().ToString();
  a = Only();
  EXPECT_EQ(a.kind, "creep");
  ASSERT_TRUE(a.creep.has_value());
  EXPECT_EQ(a.creep->range_end, 10);
  EXPECT_DOUBLE_EQ(a.creep->slope, 0.012);
  EXPECT_NEAR(a.magnitude, 0.084, 1e-12);

  // The Grafana alerts view (migration 0019) shows the range's end, its commit, the slope and the
  // group.
  auto view = pool_->WithTransaction<pqxx::result>([&](pqxx::work& tx) -> Result<pqxx::result> {
    return tx.exec(
        "SELECT kind, range_end, range_end_sha, creep_slope, creep_slope_low, creep_slope_high, "
        "group_id IS NOT NULL FROM perfwarden_views.alerts");
  });
  ASSERT_TRUE(view.has_value()) << view.error().ToString();
  ASSERT_EQ(view->size(), 1u);
  const pqxx::row row = (*view)[0];
  EXPECT_EQ(row[0].as<std::string>(), "creep");
  EXPECT_EQ(row[1].as<int>(), 10);
  EXPECT_EQ(row[2].as<std::string>(), testing::StoreSha(11));
  EXPECT_DOUBLE_EQ(row[3].as<double>(), 0.012);
  EXPECT_DOUBLE_EQ(row[4].as<double>(), 0.012 * 0.9);
  EXPECT_DOUBLE_EQ(row[5].as<double>(), 0.012 * 1.1);
  EXPECT_TRUE(row[6].as<bool>());

  // The schema itself: a creep without its figures, or a step with them, is refused.
  auto refused = [&](const std::string& sql) {
    auto r = pool_->WithTransaction<int>([&](pqxx::work& tx) -> Result<int> {
      tx.exec(sql);
      return 0;
    });
    return !r.has_value();
  };
  EXPECT_TRUE(refused("UPDATE alerts SET range_end = NULL"));
  EXPECT_TRUE(refused("UPDATE alerts SET kind = 'regression'"));
  EXPECT_TRUE(refused("UPDATE alerts SET range_end = position - 1"));
  EXPECT_FALSE(refused("UPDATE alerts SET note = 'checked'"));
}

}  // namespace
}  // namespace perfwarden::store
