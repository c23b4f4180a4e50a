// SPDX-License-Identifier: Apache-2.0
// PgStore: alerts (list, count, one with its points, triage with re-baseline), bisects posted by
// the runner (one per alert group; reading one is pg_bisect_store.cc, with the remote ones), and a
// whole series of a tracked branch for on-demand analysis.
#include <algorithm>

#include "server/store/pg_history_rows.h"
#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"

namespace perfwarden::store {

using pghistory::AlertColumns;
using pghistory::kAlertJoins;
using pghistory::kSeriesColumnCount;
using pghistory::kSeriesColumns;
using pghistory::kSeriesJoins;
using pghistory::ReadAlert;
using pghistory::ReadPoints;
using pghistory::ReadSeriesKey;
using pgutil::OrNull;
using pgutil::Text;

Result<AlertPage> PgStore::ListAlerts(const Project& project, const AlertFilter& filter) {
  int64_t before = 0;
  if (!filter.cursor.empty()) {
    try {
      before = std::stoll(filter.cursor);
    } catch (const std::exception&) {
      before = -1;
    }
    if (before <= 0) return InvalidArgument("not a cursor this server gave", "cursor");
  }
  const std::string state = filter.state == "all" ? "" : filter.state;
  return pool_.WithStatements<AlertPage>([&](pqxx::transaction_base& tx) -> Result<AlertPage> {
    pqxx::result rows = tx.exec_params(
        "SELECT " + AlertColumns() + kAlertJoins +
            "WHERE a.project_id = $1 AND ($2::text IS NULL OR a.state = $2) "
            "AND ($3::text IS NULL OR a.kind = $3) AND ($4::text IS NULL OR br.name = $4) "
            "AND ($5::text IS NULL OR hs.testbed = $5) AND ($6::text IS NULL OR b.suite = $6) "
            "AND ($7::text IS NULL OR b.name = $7) AND ($8::text IS NULL OR m.name = $8) "
            "AND ($9::bigint = 0 OR a.id < $9) ORDER BY a.id DESC LIMIT $10",
        project.id, OrNull(state), OrNull(filter.kind), OrNull(filter.branch),
        OrNull(filter.testbed), OrNull(filter.suite), OrNull(filter.benchmark),
        OrNull(filter.metric), before, filter.limit + 1);
    AlertPage page;
    for (const pqxx::row& r : rows) {
      if (static_cast<int>(page.alerts.size()) == filter.limit) {
        page.next_cursor = std::to_string(page.alerts.back().id);
        break;
      }
      page.alerts.push_back(ReadAlert(r));
    }
    return page;
  });
}

Result<std::vector<AlertCount>> PgStore::CountAlerts(const Project& project,
                                                     const AlertFilter& filter) {
  return pool_.WithStatements<std::vector<AlertCount>>(
      [&](pqxx::transaction_base& tx) -> Result<std::vector<AlertCount>> {
        pqxx::result rows = tx.exec_params(
            "SELECT a.kind, a.cause, a.state, count(*) FROM alerts a "
            "JOIN history_series hs ON hs.id = a.series_id" +
                std::string(kSeriesJoins) +
                "WHERE a.project_id = $1 AND ($2::text IS NULL OR a.kind = $2) "
                "AND ($3::text IS NULL OR br.name = $3) AND ($4::text IS NULL OR hs.testbed = $4) "
                "AND ($5::text IS NULL OR b.suite = $5) AND ($6::text IS NULL OR b.name = $6) "
                "AND ($7::text IS NULL OR m.name = $7) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
            project.id, OrNull(filter.kind), OrNull(filter.branch), OrNull(filter.testbed),
            OrNull(filter.suite), OrNull(filter.benchmark), OrNull(filter.metric));
        std::vector<AlertCount> out;
        for (const pqxx::row& r : rows) {
          out.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(),
                         r[3].as<int64_t>()});
        }
        return out;
      });
}

Result<AlertDetail> PgStore::GetAlert(const Project& project, int64_t id, int excerpt_points) {
  return pool_.WithStatements<AlertDetail>([&](pqxx::transaction_base& tx) -> Result<AlertDetail> {
    pqxx::result rows = tx.exec_params(
        "SELECT " + AlertColumns() + kAlertJoins + "WHERE a.project_id = $1 AND a.id = $2",
        project.id, id);
    if (rows.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no alert " + std::to_string(id) + " in project " + project.name, "id");
    }
    AlertDetail detail;
    detail.alert = ReadAlert(rows[0]);
    detail.excerpt = ReadPoints(tx, detail.alert.series.id, detail.alert.position - excerpt_points,
                                detail.alert.position + excerpt_points - 1);
    pqxx::result events = tx.exec_params("SELECT state, note, actor, " + pgutil::Rfc3339Sql("at") +
                                             " FROM alert_events WHERE alert_id = $1 ORDER BY at",
                                         id);
    for (const pqxx::row& e : events) {
      detail.history.push_back({Text(e[0]), Text(e[1]), Text(e[2]), Text(e[3])});
    }
    pqxx::result bisects = tx.exec_params(
        "SELECT id, good_sha, bad_sha, coalesce(culprit_sha, ''), state, created_by, " +
            pgutil::Rfc3339Sql("created_at") +
            " FROM bisect_jobs WHERE alert_id = $1 ORDER BY id DESC LIMIT 20",
        id);
    for (const pqxx::row& b : bisects) {
      BisectRecord r;
      r.id = b[0].as<int64_t>();
      r.alert_id = id;
      r.good_sha = Text(b[1]);
      r.bad_sha = Text(b[2]);
      r.culprit_sha = Text(b[3]);
      r.state = Text(b[4]);
      r.created_by = Text(b[5]);
      r.created_at = Text(b[6]);
      detail.bisects.push_back(std::move(r));
    }
    return detail;
  });
}

Result<AlertRecord> PgStore::UpdateAlert(const Project& project, int64_t id,
                                         const AlertUpdate& update) {
  return pool_.WithTransaction<AlertRecord>([&](pqxx::work& tx) -> Result<AlertRecord> {
    return pghistory::UpdateAlertIn(tx, project, id, update);
  });
}

Result<BisectRecord> PgStore::SaveBisect(const Project& project, const NewBisect& bisect) {
  return pool_.WithTransaction<BisectRecord>([&](pqxx::work& tx) -> Result<BisectRecord> {
    const std::string alert = bisect.alert_id ? std::to_string(*bisect.alert_id) : "";
    if (bisect.alert_id && tx.exec_params("SELECT 1 FROM alerts WHERE id = $1 AND project_id = $2",
                                          *bisect.alert_id, project.id)
                               .empty()) {
      return MakeError(ErrorCode::kNotFound, "no alert " + alert + " in project " + project.name,
                       "alert_id");
    }
    int64_t group = 0;
    if (bisect.alert_id) {
      if (auto existing = pghistory::GroupBisect(tx, project.id, *bisect.alert_id, &group)) {
        return MakeError(ErrorCode::kConflict,
                         "alert " + alert + " is in alert group " + std::to_string(group) +
                             ", which already has bisect " + std::to_string(*existing) +
                             " (one bisect per group)",
                         "alert_id");
      }
    }
    pqxx::result r = tx.exec_params(
        "INSERT INTO bisect_jobs (project_id, alert_id, good_sha, bad_sha, state, steps, "
        "culprit_sha, created_by, report, finished_at, group_id) VALUES ($1, $2::bigint, $3, $4, "
        "$5, coalesce($6::jsonb -> 'probes', '[]'), $7, $8, $6::jsonb, now(), "
        "nullif($9, 0)) RETURNING id, " +
            pgutil::Rfc3339Sql("created_at"),
        project.id, OrNull(alert), bisect.good_sha, bisect.bad_sha, bisect.state,
        bisect.report_json, OrNull(bisect.culprit_sha), bisect.created_by, group);
    BisectRecord out;
    out.id = r[0][0].as<int64_t>();
    out.alert_id = bisect.alert_id;
    out.good_sha = bisect.good_sha;
    out.bad_sha = bisect.bad_sha;
    out.culprit_sha = bisect.culprit_sha;
    out.state = bisect.state;
    out.created_by = bisect.created_by;
    out.created_at = Text(r[0][1]);
    out.report_json = bisect.report_json;
    return out;
  });
}

Result<HistorySeriesPoints> PgStore::GetHistorySeries(const Project& project,
                                                      const HistorySeriesQuery& query) {
  return pool_.WithStatements<HistorySeriesPoints>(
      [&](pqxx::transaction_base& tx) -> Result<HistorySeriesPoints> {
        pqxx::result series = tx.exec_params(
            "SELECT " + std::string(kSeriesColumns) + ", hs.baseline_from FROM history_series hs" +
                kSeriesJoins +
                "WHERE hs.project_id = $1 AND br.name = $2 AND b.name = $3 AND m.name = $4 "
                "AND ($5::text IS NULL OR hs.testbed = $5) AND ($6::text IS NULL OR b.suite = $6) "
                "AND ($7::text IS NULL OR m.unit = $7) ORDER BY hs.id LIMIT 2",
            project.id, query.branch, query.benchmark, query.metric, OrNull(query.testbed),
            OrNull(query.suite), OrNull(query.unit));
        if (series.empty()) {
          return MakeError(ErrorCode::kNotFound,
                           "no history of " + query.benchmark + " " + query.metric + " on " +
                               query.branch +
                               (query.testbed.empty() ? "" : " (testbed " + query.testbed + ")"),
                           "benchmark");
        }
        if (series.size() > 1) {
          const HistorySeriesKey a = ReadSeriesKey(series[0]);
          const HistorySeriesKey b = ReadSeriesKey(series[1]);
          return InvalidArgument("several series match (testbed " + a.testbed + ", suite " +
                                     a.key.suite + ", unit " + a.unit + "; testbed " + b.testbed +
                                     ", suite " + b.key.suite + ", unit " + b.unit +
                                     "): name the testbed, suite or unit",
                                 a.testbed != b.testbed       ? "testbed"
                                 : a.key.suite != b.key.suite ? "suite"
                                                              : "unit");
        }
        HistorySeriesPoints out;
        out.key = ReadSeriesKey(series[0]);
        out.baseline_from = series[0][kSeriesColumnCount].as<int64_t>();
        out.points = ReadPoints(tx, out.key.id, 0, INT32_MAX);
        return out;
      });
}

}  // namespace perfwarden::store
