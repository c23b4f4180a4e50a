// SPDX-License-Identifier: Apache-2.0
// PgStore: the history of tracked branches, the worker's side. A worker begins a transaction
// that takes a project's lock, claims its oldest run not yet in history, appends one point per
// series it measured and loads the touched series (BeginNextRun); the analysis (server/history)
// judges them and the transaction stores what it returns and commits (Commit). Alerts, bisects and
// whole series are pg_alert_store.cc.
#include <algorithm>
#include <map>
#include <memory>

#include "server/store/pg_history_rows.h"
#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"

namespace perfwarden::store {
namespace {

using pghistory::Join;
using pghistory::kSeriesColumnCount;
using pghistory::kSeriesColumns;
using pghistory::kSeriesJoins;
using pghistory::ParseInts;
using pghistory::ReadSeriesKey;
using pgutil::OrNull;
using pgutil::Text;

void AppendPoints(pqxx::work& tx, const std::string& run_id, int64_t project_id, int64_t branch_id,
                  const std::string& testbed, int64_t commit_id, int64_t testbed_id) {
  tx.exec_params(
      "INSERT INTO history_series (project_id, branch_id, testbed, benchmark_id, metric_id) "
      "SELECT $2, $3, $4, ss.benchmark_id, ss.metric_id FROM sample_sets ss "
      "WHERE ss.project_id = $2 AND ss.run_id = $1::uuid ORDER BY ss.benchmark_id, ss.metric_id "
      "ON CONFLICT (project_id, branch_id, testbed, benchmark_id, metric_id) DO NOTHING",
      run_id, project_id, branch_id, testbed);
  const std::string series_of_run =
      "FROM sample_sets ss JOIN history_series hs ON hs.project_id = $2 AND hs.branch_id = $3 "
      "AND hs.testbed = $4 AND hs.benchmark_id = ss.benchmark_id AND hs.metric_id = ss.metric_id "
      "WHERE ss.project_id = $2 AND ss.run_id = $1::uuid ";
  tx.exec_params(
      "WITH pooled AS (UPDATE history_points hp SET vals = hp.vals || ss.vals, "
      "run_ids = hp.run_ids || $1::uuid, level = (SELECT percentile_cont(0.5) WITHIN GROUP "
      "(ORDER BY v) FROM unnest(hp.vals || ss.vals) v) " +
          series_of_run +
          "AND hp.series_id = hs.id AND hp.commit_id = $5 AND NOT ($1::uuid = ANY (hp.run_ids)) "
          "RETURNING hp.series_id) "
          "UPDATE history_series SET detector_state = NULL, updated_at = now() "
          "WHERE id IN (SELECT series_id FROM pooled)",
      run_id, project_id, branch_id, testbed, commit_id);
  tx.exec_params(
      "WITH appended AS (INSERT INTO history_points (series_id, position, commit_id, "
      "testbed_id, run_ids, vals, level) SELECT hs.id, hs.length, $5, $6, ARRAY[$1::uuid], "
      "ss.vals, (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM unnest(ss.vals) v) " +
          series_of_run +
          "AND NOT EXISTS (SELECT 1 FROM history_points hp WHERE hp.series_id = hs.id "
          "AND hp.commit_id = $5) RETURNING series_id) "
          "UPDATE history_series SET length = length + 1, updated_at = now() "
          "WHERE id IN (SELECT series_id FROM appended)",
      run_id, project_id, branch_id, testbed, commit_id, testbed_id);
}

std::vector<HistorySeriesData> LoadSeries(pqxx::work& tx, const std::string& run_id,
                                          int64_t project_id, int64_t branch_id,
                                          const std::string& testbed) {
  pqxx::result rows = tx.exec_params(
      "SELECT " + std::string(kSeriesColumns) +
          ", hs.length, hs.baseline_from, coalesce(hs.detector_state::text, ''), "
          "hs.monitor_state::text, "
          "array_send(coalesce((SELECT array_agg(hp.level ORDER BY hp.position) FROM "
          "history_points hp WHERE hp.series_id = hs.id AND hp.position >= hs.baseline_from), "
          "'{}'::float8[])), "
          "(SELECT coalesce(array_agg(hp.testbed_id ORDER BY hp.position), '{}') FROM "
          "history_points hp WHERE hp.series_id = hs.id AND hp.position >= hs.baseline_from), "
          "(SELECT coalesce(array_agg(a.position ORDER BY a.position), '{}') FROM alerts a "
          "WHERE a.series_id = hs.id), "
          "o.positions, array_send(o.p_values), array_send(o.q_values), "
          "array_send(o.befores), array_send(o.afters) "
          "FROM sample_sets ss JOIN history_series hs ON hs.project_id = $2 AND hs.branch_id = $3 "
          "AND hs.testbed = $4 AND hs.benchmark_id = ss.benchmark_id "
          "AND hs.metric_id = ss.metric_id" +
          kSeriesJoins +
          "CROSS JOIN LATERAL (SELECT coalesce(array_agg(a.position ORDER BY a.position), '{}') "
          "positions, coalesce(array_agg(a.p_value ORDER BY a.position), '{}') p_values, "
          "coalesce(array_agg(a.q_value ORDER BY a.position), '{}') q_values, "
          "coalesce(array_agg(a.level_before ORDER BY a.position), '{}') befores, "
          "coalesce(array_agg(a.level_after ORDER BY a.position), '{}') afters FROM alerts a "
          "WHERE a.series_id = hs.id AND a.state = 'open') o "
          "WHERE ss.project_id = $2 AND ss.run_id = $1::uuid ORDER BY hs.id",
      run_id, project_id, branch_id, testbed);
  std::vector<HistorySeriesData> out;
  out.reserve(rows.size());
  for (const pqxx::row& row : rows) {
    HistorySeriesData s;
    s.key = ReadSeriesKey(row);
    int at = kSeriesColumnCount;
    s.length = row[at++].as<int64_t>();
    s.baseline_from = row[at++].as<int64_t>();
    s.detector_state_json = Text(row[at++]);
    s.monitor_state_json = Text(row[at++]);
    pgutil::AppendFloat8ArraySend(Text(row[at++]), s.levels);
    s.testbed_ids = ParseInts(row[at++]);
    s.alerted_positions = ParseInts(row[at++]);
    const std::vector<int64_t> open_positions = ParseInts(row[at++]);
    std::vector<double> p_values, q_values, befores, afters;
    pgutil::AppendFloat8ArraySend(Text(row[at++]), p_values);
    pgutil::AppendFloat8ArraySend(Text(row[at++]), q_values);
    pgutil::AppendFloat8ArraySend(Text(row[at++]), befores);
    pgutil::AppendFloat8ArraySend(Text(row[at++]), afters);
    for (std::size_t i = 0; i < open_positions.size(); ++i) {
      s.open_alerts.push_back({open_positions[i], p_values[i], q_values[i], befores[i], afters[i]});
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The fingerprints of the testbeds on either side of each testbed change in `series`.
std::map<int64_t, std::string> LoadFingerprints(pqxx::work& tx,
                                                const std::vector<HistorySeriesData>& series) {
  std::vector<int64_t> ids;
  for (const HistorySeriesData& s : series) {
    for (std::size_t i = 1; i < s.testbed_ids.size(); ++i) {
      if (s.testbed_ids[i] == s.testbed_ids[i - 1]) continue;
      ids.push_back(s.testbed_ids[i - 1]);
      ids.push_back(s.testbed_ids[i]);
    }
  }
  std::map<int64_t, std::string> out;
  if (ids.empty()) return out;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (const pqxx::row& row :
       tx.exec_params("SELECT id, fingerprint::text FROM testbeds WHERE id = ANY ($1::bigint[])",
                      pgutil::IntegerArray(ids))) {
    out.emplace(row[0].as<int64_t>(), row[1].as<std::string>());
  }
  return out;
}

// Stores the analysis of one run; the ids of the alerts it created.
std::vector<int64_t> StoreUpdates(pqxx::work& tx, int64_t project_id,
                                  const std::vector<HistorySeriesUpdate>& updates) {
  std::vector<int64_t> ids;
  std::vector<std::string> detector_states;
  std::vector<std::string> monitor_states;
  std::vector<int64_t> step_series, step_positions;
  std::vector<double> magnitudes, p_values, befores, afters;
  std::vector<std::string> step_detectors;
  for (const HistorySeriesUpdate& u : updates) {
    ids.push_back(u.series_id);
    detector_states.push_back(u.detector_state_json);
    monitor_states.push_back(u.monitor_state_json);
    for (const HistoryStepRecord& s : u.steps) {
      step_series.push_back(u.series_id);
      step_positions.push_back(s.position);
      magnitudes.push_back(s.magnitude);
      p_values.push_back(s.p_value);
      befores.push_back(s.level_before);
      afters.push_back(s.level_after);
      step_detectors.push_back(Join(s.detectors));
    }
  }
  const std::string series_ids = pgutil::IntegerArray(ids);
  tx.exec_params(
      "UPDATE history_series hs SET detector_state = u.d::jsonb, monitor_state = u.m::jsonb, "
      "updated_at = now() FROM unnest($1::bigint[], $2::text[], $3::text[]) u(id, d, m) "
      "WHERE hs.id = u.id",
      series_ids, pgutil::TextArray(detector_states), pgutil::TextArray(monitor_states));
  tx.exec_params("DELETE FROM change_points WHERE series_id = ANY ($1::bigint[])", series_ids);
  tx.exec_params(
      "INSERT INTO change_points (series_id, position, magnitude, p_value, level_before, "
      "level_after, detectors) SELECT u.s, u.p, u.m, u.pv, u.b, u.a, string_to_array(u.d, ',') "
      "FROM unnest($1::bigint[], $2::int[], $3::float8[], $4::float8[], $5::float8[], "
      "$6::float8[], $7::text[]) u(s, p, m, pv, b, a, d)",
      pgutil::IntegerArray(step_series), pgutil::IntegerArray(step_positions),
      pgutil::Float8Array(magnitudes), pgutil::Float8Array(p_values), pgutil::Float8Array(befores),
      pgutil::Float8Array(afters), pgutil::TextArray(step_detectors));

  for (const HistorySeriesUpdate& u : updates) {
    for (const auto& [old_position, a] : u.refreshed) {
      // The range follows the step when it moved (unless another alert holds that position).
      tx.exec_params(
          "UPDATE alerts a SET position = $3, last_good_commit_id = g.commit_id, "
          "first_bad_commit_id = f.commit_id, last_good_run_id = g.run_ids[1], "
          "first_bad_run_id = f.run_ids[1], kind = $4, cause = $5, magnitude = $6, "
          "ci_low = ($7::float8[])[1], ci_high = ($8::float8[])[1], p_value = $9, "
          "q_value = $10, level_before = $11, level_after = $12, "
          "detectors = string_to_array($13, ','), "
          "range_end = coalesce(($14::float8[])[1]::integer, a.range_end), "
          "creep_slope = coalesce(($15::float8[])[1], a.creep_slope), "
          "creep_slope_low = coalesce(($15::float8[])[2], a.creep_slope_low), "
          "creep_slope_high = coalesce(($15::float8[])[3], a.creep_slope_high) "
          "FROM history_points g JOIN history_points f ON f.series_id = g.series_id "
          "AND f.position = g.position + 1 "
          // A step refreshes a step's alert, a creep a creep's: never one into the other.
          "WHERE a.series_id = $1 AND a.position = $2 AND a.state = 'open' "
          "AND (a.kind = 'creep') = $16 "
          "AND g.series_id = $1 AND g.position = $3 - 1 AND ($3 = $2 OR NOT EXISTS "
          "(SELECT 1 FROM alerts o WHERE o.series_id = $1 AND o.position = $3))",
          u.series_id, old_position, a.position, a.kind, a.cause, a.magnitude,
          a.ci_low ? pgutil::Float8Array({*a.ci_low}) : "{NULL}",
          a.ci_high ? pgutil::Float8Array({*a.ci_high}) : "{NULL}", a.p_value, a.q_value,
          a.level_before, a.level_after, Join(a.detectors),
          a.creep ? pgutil::Float8Array({static_cast<double>(a.creep->range_end)}) : "{NULL}",
          a.creep ? pgutil::Float8Array({a.creep->slope, a.creep->slope_low, a.creep->slope_high})
                  : "{NULL,NULL,NULL}",
          a.creep.has_value());
    }
  }
  std::vector<int64_t> alert_ids;
  for (const HistorySeriesUpdate& u : updates) {
    for (const NewAlertRecord& a : u.alerts) {
      const std::string ci_low = a.ci_low ? pgutil::Float8Array({*a.ci_low}) : "";
      const std::string ci_high = a.ci_high ? pgutil::Float8Array({*a.ci_high}) : "";
      pqxx::result r = tx.exec_params(
          "INSERT INTO alerts (project_id, series_id, position, last_good_commit_id, "
          "first_bad_commit_id, last_good_run_id, first_bad_run_id, kind, cause, magnitude, "
          "ci_low, ci_high, p_value, q_value, level_before, level_after, detectors, "
          "environment_change, parameters, range_end, creep_slope, creep_slope_low, "
          "creep_slope_high) "
          "SELECT $1, $2, $3, g.commit_id, f.commit_id, g.run_ids[1], f.run_ids[1], $4, $5, $6, "
          "($7::float8[])[1], ($8::float8[])[1], $9, $10, $11, $12, string_to_array($13, ','), "
          "NULLIF($14, '')::jsonb, $15::jsonb, ($16::float8[])[1]::integer, "
          "($17::float8[])[1], ($17::float8[])[2], ($17::float8[])[3] "
          "FROM history_points g JOIN history_points f ON f.series_id = g.series_id "
          "AND f.position = g.position + 1 "
          "WHERE g.series_id = $2 AND g.position = $3 - 1 "
          "ON CONFLICT (series_id, position) DO NOTHING RETURNING id",
          project_id, u.series_id, a.position, a.kind, a.cause, a.magnitude,
          ci_low.empty() ? "{NULL}" : ci_low, ci_high.empty() ? "{NULL}" : ci_high, a.p_value,
          a.q_value, a.level_before, a.level_after, Join(a.detectors), a.environment_change_json,
          a.parameters_json,
          a.creep ? pgutil::Float8Array({static_cast<double>(a.creep->range_end)}) : "{NULL}",
          a.creep ? pgutil::Float8Array({a.creep->slope, a.creep->slope_low, a.creep->slope_high})
                  : "{NULL,NULL,NULL}");
      if (r.empty()) continue;
      const int64_t id = r[0][0].as<int64_t>();
      tx.exec_params(
          "INSERT INTO alert_events (alert_id, actor, state, note) VALUES ($1, 'perfwarden', "
          "'open', $2)",
          id, "raised by " + Join(a.detectors));
      alert_ids.push_back(id);
    }
  }
  for (const HistorySeriesUpdate& u : updates) {
    for (const WentAwayRecord& w : u.went_away) {
      pqxx::result gone = tx.exec_params(
          "UPDATE alerts SET state = 'went_away', state_changed_by = 'perfwarden', "
          "state_changed_at = clock_timestamp() WHERE series_id = $1 AND position = $2 "
          "AND state = 'open' RETURNING id",
          u.series_id, w.position);
      for (const pqxx::row& g : gone) {
        tx.exec_params(
            "INSERT INTO alert_events (alert_id, actor, state, note) VALUES ($1, 'perfwarden', "
            "'went_away', $2)",
            g[0].as<int64_t>(), w.note);
      }
    }
    if (u.rebaseline_from) {
      tx.exec_params(
          "UPDATE history_series SET baseline_from = greatest(baseline_from, $2), "
          "detector_state = NULL, monitor_state = '{}', updated_at = now() WHERE id = $1",
          u.series_id, *u.rebaseline_from);
    }
  }
  return alert_ids;
}

}  // namespace

namespace {

// Marks runs of untracked branches done, then claims the run to analyse next: the oldest
// pending run of the project with the oldest pending run, under that project's advisory lock
// (`FOR UPDATE ... SKIP LOCKED`). Columns: id, project_id, branch_id, commit_id, testbed_id,
// testbed name, project name, public_read, project created_at. nullopt when none is pending.
std::optional<pqxx::row> ClaimNextRun(pqxx::work& tx, const std::string& tracked) {
  tx.exec_params(
      "UPDATE runs r SET history_analysed_at = now() FROM branches b "
      "WHERE r.history_analysed_at IS NULL AND b.id = r.branch_id "
      "AND NOT (b.name = ANY ($1::text[]))",
      tracked);
  // The project's lock comes before the claim: a worker holding it is the only one
  // appending to the project's series, so its oldest pending run is taken first even
  // when two workers look at once.
  std::vector<int64_t> tried;
  std::optional<pqxx::row> claimed;
  for (int attempt = 0; attempt < 8 && !claimed; ++attempt) {
    pqxx::result candidate = tx.exec_params(
        "SELECT r.project_id FROM runs r JOIN branches b ON b.id = r.branch_id "
        "WHERE r.history_analysed_at IS NULL AND b.name = ANY ($1::text[]) "
        "AND NOT (r.project_id = ANY ($2::bigint[])) ORDER BY r.created_at, r.id LIMIT 1",
        tracked, pgutil::IntegerArray(tried));
    if (candidate.empty()) return std::nullopt;
    const int64_t project = candidate[0][0].as<int64_t>();
    pghistory::LockProjectHistory(tx, project);
    pqxx::result claim = tx.exec_params(
        "SELECT r.id::text, r.project_id, r.branch_id, r.commit_id, r.testbed_id, t.name, "
        "p.name, p.public_read, " +
            pgutil::Rfc3339Sql("p.created_at") +
            " FROM runs r JOIN branches b ON b.id = r.branch_id "
            "JOIN testbeds t ON t.id = r.testbed_id JOIN projects p ON p.id = r.project_id "
            "WHERE r.history_analysed_at IS NULL AND b.name = ANY ($1::text[]) "
            "AND r.project_id = $2 ORDER BY r.created_at, r.id LIMIT 1 "
            "FOR UPDATE OF r SKIP LOCKED",
        tracked, project);
    if (claim.empty()) {
      tried.push_back(project);  // another worker finished them meanwhile
    } else {
      claimed = claim[0];
    }
  }
  return claimed;
}

}  // namespace

namespace {

// The claimed run's transaction: the lease outlives the pqxx::work on its connection (members
// are destroyed in reverse order), and the work rolls back when destroyed uncommitted.
class PgHistoryRunTransaction final : public HistoryRunTransaction {
 public:
  PgHistoryRunTransaction(Lease lease, std::unique_ptr<pqxx::work> tx, HistoryRunWork work)
      : lease_(std::move(lease)), tx_(std::move(tx)), work_(std::move(work)) {}

  const HistoryRunWork& Work() const override { return work_; }

  Result<HistoryRunResult> Commit(const std::vector<HistorySeriesUpdate>& updates) override {
    if (tx_ == nullptr) return MakeError(ErrorCode::kInternal, "the run's transaction has ended");
    try {
      HistoryRunResult result;
      result.run_id = work_.run_id;
      result.project = work_.project;
      result.series = work_.series.size();
      result.new_alert_ids = StoreUpdates(*tx_, work_.project.id, updates);
      result.new_group_ids = pghistory::AssignGroups(*tx_, work_.project.id, result.new_alert_ids);
      tx_->exec_params(
          "UPDATE runs SET history_analysed_at = now() WHERE project_id = $2 AND id = $1::uuid",
          work_.run_id, work_.project.id);
      tx_->commit();
      tx_.reset();
      return result;
    } catch (const std::exception& e) {
      PgFailure failure = MapPgException(e);
      if (failure.connection_lost) lease_.MarkBroken();
      tx_.reset();
      return tl::unexpected(std::move(failure.error));
    }
  }

 private:
  Lease lease_;
  std::unique_ptr<pqxx::work> tx_;
  HistoryRunWork work_;
};

// Claims the next run in `tx`, appends its points and loads its series; nullopt when none is
// pending.
std::optional<HistoryRunWork> ClaimAndLoad(pqxx::work& tx, const std::string& tracked,
                                           const HistoryWindow& window) {
  std::optional<pqxx::row> claimed = ClaimNextRun(tx, tracked);
  if (!claimed) return std::nullopt;
  const pqxx::row& row = *claimed;
  const std::string run_id = row[0].as<std::string>();
  const int64_t project_id = row[1].as<int64_t>();
  const int64_t branch_id = row[2].as<int64_t>();
  const int64_t commit_id = row[3].as<int64_t>();
  const int64_t testbed_id = row[4].as<int64_t>();
  const std::string testbed = row[5].as<std::string>();

  AppendPoints(tx, run_id, project_id, branch_id, testbed, commit_id, testbed_id);
  // Series that outgrew the analysis window move their baseline forward.
  tx.exec_params(
      "UPDATE history_series hs SET baseline_from = hs.length - $5, detector_state = NULL "
      "FROM sample_sets ss WHERE ss.project_id = $2 AND ss.run_id = $1::uuid "
      "AND hs.project_id = $2 "
      "AND hs.branch_id = $3 AND hs.testbed = $4 AND hs.benchmark_id = ss.benchmark_id "
      "AND hs.metric_id = ss.metric_id AND hs.length - hs.baseline_from > $6",
      run_id, project_id, branch_id, testbed, window.keep_points, window.max_points);
  HistoryRunWork work;
  work.run_id = run_id;
  work.project = {project_id, row[6].as<std::string>(), row[7].as<bool>(), Text(row[8])};
  work.series = LoadSeries(tx, run_id, project_id, branch_id, testbed);
  work.testbed_fingerprints = LoadFingerprints(tx, work.series);
  return work;
}

}  // namespace

Result<std::unique_ptr<HistoryRunTransaction>> PgStore::BeginNextRun(
    const std::vector<std::string>& tracked_branches) {
  const std::string tracked = pgutil::TextArray(tracked_branches);
  // As ConnectionPool::WithTransaction: a connection that sat idle and turns out broken
  // (PostgreSQL restarted since) is replaced once, nothing having been done in it.
  for (int attempt = 0;; ++attempt) {
    Result<Lease> lease = pool_.Acquire();
    if (!lease) return tl::unexpected(lease.error());
    try {
      auto tx = std::make_unique<pqxx::work>(lease->conn());
      std::optional<HistoryRunWork> work = ClaimAndLoad(*tx, tracked, history_window_);
      if (!work) {
        tx->commit();  // the runs of untracked branches stay marked
        return std::unique_ptr<HistoryRunTransaction>();
      }
      return std::unique_ptr<HistoryRunTransaction>(std::make_unique<PgHistoryRunTransaction>(
          std::move(*lease), std::move(tx), std::move(*work)));
    } catch (const std::exception& e) {
      PgFailure failure = MapPgException(e);
      if (failure.connection_lost) lease->MarkBroken();
      const bool retry = failure.connection_lost && lease->reused() && attempt == 0 &&
                         dynamic_cast<const pqxx::in_doubt_error*>(&e) == nullptr;
      if (!retry) return tl::unexpected(std::move(failure.error));
    }
  }
}

Result<std::optional<std::string>> PgStore::SkipNextRun(
    const std::vector<std::string>& tracked_branches, const std::string& error) {
  const std::string tracked = pgutil::TextArray(tracked_branches);
  return pool_.WithTransaction<std::optional<std::string>>(
      [&](pqxx::work& tx) -> Result<std::optional<std::string>> {
        std::optional<pqxx::row> claimed = ClaimNextRun(tx, tracked);
        if (!claimed) return std::optional<std::string>();
        const std::string run_id = (*claimed)[0].as<std::string>();
        tx.exec_params(
            "UPDATE runs SET history_analysed_at = now(), history_error = $2 "
            "WHERE project_id = $3 AND id = $1::uuid",
            run_id, error, (*claimed)[1].as<int64_t>());
        return std::optional<std::string>(run_id);
      });
}

Result<int64_t> PgStore::PendingHistoryRuns() {
  return pool_.WithStatements<int64_t>([&](pqxx::transaction_base& tx) -> Result<int64_t> {
    return tx.exec("SELECT count(*) FROM runs WHERE history_analysed_at IS NULL")[0][0]
        .as<int64_t>();
  });
}

}  // namespace perfwarden::store
