// PgStore: the history of tracked branches. A worker claims the oldest run not yet in history,
// appends one point per series it measured, lets the analysis (server/history) judge the touched
// series and stores what it returns, in one transaction under a per-project advisory lock.
#include <algorithm>

#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"

namespace perfgate::store {
namespace {

using pgutil::OrNull;
using pgutil::ReadDirection;
using pgutil::Text;

// The first key of pg_advisory_xact_lock(int, int) for a project's history ("pghs").
constexpr int kHistoryLockClass = 0x70676873;

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    out.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::vector<int64_t> ParseInts(const pqxx::field& f) {
  std::vector<int64_t> out;
  for (const std::string& item : pgutil::ParseArray(Text(f))) out.push_back(std::stoll(item));
  return out;
}

std::optional<double> OptionalDouble(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<double>();
}

// The series columns of `hs` joined with branches br, benchmarks b, metrics m.
constexpr const char* kSeriesColumns =
    "hs.id, br.name, hs.testbed, b.suite, b.name, m.name, m.unit, m.direction";
constexpr int kSeriesColumnCount = 8;
constexpr const char* kSeriesJoins =
    " JOIN branches br ON br.id = hs.branch_id JOIN benchmarks b ON b.id = hs.benchmark_id "
    "JOIN metrics m ON m.id = hs.metric_id ";

HistorySeriesKey ReadSeriesKey(const pqxx::row& row, int at = 0) {
  HistorySeriesKey key;
  key.id = row[at].as<int64_t>();
  key.branch = row[at + 1].as<std::string>();
  key.testbed = row[at + 2].as<std::string>();
  key.suite = row[at + 3].as<std::string>();
  key.benchmark = row[at + 4].as<std::string>();
  key.metric = row[at + 5].as<std::string>();
  key.unit = row[at + 6].as<std::string>();
  key.direction = ReadDirection(row[at + 7]);
  return key;
}

// A commit of a history point `hp` (joined with commits c) as columns.
std::string CommitColumns(const std::string& hp, const std::string& c) {
  return c + ".sha, " + c + ".subject, " + c + ".author, " +
         pgutil::Rfc3339Sql(c + ".author_time") + ", " + hp + ".run_ids[1]::text";
}
constexpr int kCommitColumnCount = 5;

CommitRef ReadCommit(const pqxx::row& row, int at) {
  return {Text(row[at]), Text(row[at + 1]), Text(row[at + 2]), Text(row[at + 3]),
          Text(row[at + 4])};
}

// The points of a series in [from, to] (positions), oldest first.
std::vector<ExcerptPoint> ReadPoints(pqxx::transaction_base& tx, int64_t series_id, int64_t from,
                                     int64_t to) {
  pqxx::result rows =
      tx.exec_params("SELECT hp.position, " + CommitColumns("hp", "c") +
                         ", hp.level, array_send(hp.vals), hp.testbed_id FROM history_points hp "
                         "JOIN commits c ON c.id = hp.commit_id WHERE hp.series_id = $1 "
                         "AND hp.position BETWEEN $2 AND $3 ORDER BY hp.position",
                     series_id, from, to);
  std::vector<ExcerptPoint> out;
  out.reserve(rows.size());
  for (const pqxx::row& p : rows) {
    ExcerptPoint point;
    point.position = p[0].as<int64_t>();
    point.commit = ReadCommit(p, 1);
    point.level = p[1 + kCommitColumnCount].as<double>();
    pgutil::AppendFloat8ArraySend(Text(p[2 + kCommitColumnCount]), point.values);
    point.testbed_id = p[3 + kCommitColumnCount].as<int64_t>();
    out.push_back(std::move(point));
  }
  return out;
}

// An alert `a` with its series hs (kSeriesJoins) and the points g (last good) and f (first bad).
std::string AlertColumns() {
  return "a.id, p.name, " + std::string(kSeriesColumns) +
         ", a.position, a.kind, a.cause, a.state, " + CommitColumns("g", "gc") + ", " +
         CommitColumns("f", "fc") +
         ", a.magnitude, a.ci_low, a.ci_high, a.p_value, a.q_value, a.level_before, "
         "a.level_after, array_to_string(a.detectors, ','), coalesce(a.environment_change::text, "
         "''), a.parameters::text, a.note, a.state_changed_by, " +
         pgutil::Rfc3339Sql("a.state_changed_at") + ", " + pgutil::Rfc3339Sql("a.created_at");
}

constexpr const char* kAlertJoins =
    " FROM alerts a JOIN projects p ON p.id = a.project_id "
    "JOIN history_series hs ON hs.id = a.series_id"
    " JOIN branches br ON br.id = hs.branch_id JOIN benchmarks b ON b.id = hs.benchmark_id "
    "JOIN metrics m ON m.id = hs.metric_id "
    "JOIN history_points g ON g.series_id = a.series_id AND g.position = a.position - 1 "
    "JOIN commits gc ON gc.id = g.commit_id "
    "JOIN history_points f ON f.series_id = a.series_id AND f.position = a.position "
    "JOIN commits fc ON fc.id = f.commit_id ";

AlertRecord ReadAlert(const pqxx::row& row) {
  AlertRecord a;
  int at = 0;
  a.id = row[at++].as<int64_t>();
  a.project = row[at++].as<std::string>();
  a.series = ReadSeriesKey(row, at);
  at += kSeriesColumnCount;
  a.position = row[at++].as<int64_t>();
  a.kind = row[at++].as<std::string>();
  a.cause = row[at++].as<std::string>();
  a.state = row[at++].as<std::string>();
  a.last_good = ReadCommit(row, at);
  at += kCommitColumnCount;
  a.first_bad = ReadCommit(row, at);
  at += kCommitColumnCount;
  a.magnitude = row[at++].as<double>();
  a.ci_low = OptionalDouble(row[at++]);
  a.ci_high = OptionalDouble(row[at++]);
  a.p_value = row[at++].as<double>();
  a.q_value = row[at++].as<double>();
  a.level_before = row[at++].as<double>();
  a.level_after = row[at++].as<double>();
  a.detectors = Split(Text(row[at++]));
  a.environment_change_json = Text(row[at++]);
  a.parameters_json = Text(row[at++]);
  a.note = Text(row[at++]);
  a.state_changed_by = Text(row[at++]);
  a.state_changed_at = Text(row[at++]);
  a.created_at = Text(row[at++]);
  return a;
}

bool Rebaselines(const std::string& state) {
  return state == "acknowledged" || state == "false_positive" || state == "resolved";
}

// Appends the run's points: a new point per series at its end, or the values pooled into the
// point of the same commit (whose series must then be analysed from scratch).
void AppendPoints(pqxx::work& tx, const std::string& run_id, int64_t project_id, int64_t branch_id,
                  const std::string& testbed, int64_t commit_id, int64_t testbed_id) {
  tx.exec_params(
      "INSERT INTO history_series (project_id, branch_id, testbed, benchmark_id, metric_id) "
      "SELECT $2, $3, $4, ss.benchmark_id, ss.metric_id FROM sample_sets ss "
      "WHERE ss.run_id = $1::uuid ORDER BY ss.benchmark_id, ss.metric_id "
      "ON CONFLICT (project_id, branch_id, testbed, benchmark_id, metric_id) DO NOTHING",
      run_id, project_id, branch_id, testbed);
  const std::string series_of_run =
      "FROM sample_sets ss JOIN history_series hs ON hs.project_id = $2 AND hs.branch_id = $3 "
      "AND hs.testbed = $4 AND hs.benchmark_id = ss.benchmark_id AND hs.metric_id = ss.metric_id "
      "WHERE ss.run_id = $1::uuid ";
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
          "(SELECT coalesce(array_agg(a.position ORDER BY a.position), '{}') FROM alerts a "
          "WHERE a.series_id = hs.id AND a.state = 'open') "
          "FROM sample_sets ss JOIN history_series hs ON hs.project_id = $2 AND hs.branch_id = $3 "
          "AND hs.testbed = $4 AND hs.benchmark_id = ss.benchmark_id "
          "AND hs.metric_id = ss.metric_id" +
          kSeriesJoins + "WHERE ss.run_id = $1::uuid ORDER BY hs.id",
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
    s.open_alert_positions = ParseInts(row[at++]);
    out.push_back(std::move(s));
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
          // The Benjamini-Hochberg factor of the ingest that raised it, on the new p-value.
          "q_value = CASE WHEN a.p_value > 0 THEN least(1, $9 * a.q_value / a.p_value) "
          "ELSE a.q_value END, "
          "level_before = $10, level_after = $11, detectors = string_to_array($12, ',') "
          "FROM history_points g JOIN history_points f ON f.series_id = g.series_id "
          "AND f.position = g.position + 1 "
          "WHERE a.series_id = $1 AND a.position = $2 AND a.state = 'open' "
          "AND g.series_id = $1 AND g.position = $3 - 1 AND ($3 = $2 OR NOT EXISTS "
          "(SELECT 1 FROM alerts o WHERE o.series_id = $1 AND o.position = $3))",
          u.series_id, old_position, a.position, a.kind, a.cause, a.magnitude,
          a.ci_low ? pgutil::Float8Array({*a.ci_low}) : "{NULL}",
          a.ci_high ? pgutil::Float8Array({*a.ci_high}) : "{NULL}", a.p_value, a.level_before,
          a.level_after, Join(a.detectors));
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
          "environment_change, parameters) "
          "SELECT $1, $2, $3, g.commit_id, f.commit_id, g.run_ids[1], f.run_ids[1], $4, $5, $6, "
          "($7::float8[])[1], ($8::float8[])[1], $9, $10, $11, $12, string_to_array($13, ','), "
          "CASE WHEN $5 = 'environment' THEN jsonb_build_object('before', tg.fingerprint, "
          "'after', tf.fingerprint, 'changed', (SELECT coalesce(jsonb_agg(k ORDER BY k), '[]') "
          "FROM (SELECT jsonb_object_keys(tg.fingerprint) UNION SELECT "
          "jsonb_object_keys(tf.fingerprint)) keys(k) WHERE tg.fingerprint -> k IS DISTINCT "
          "FROM tf.fingerprint -> k)) END, $14::jsonb "
          "FROM history_points g JOIN history_points f ON f.series_id = g.series_id "
          "AND f.position = g.position + 1 JOIN testbeds tg ON tg.id = g.testbed_id "
          "JOIN testbeds tf ON tf.id = f.testbed_id "
          "WHERE g.series_id = $2 AND g.position = $3 - 1 "
          "ON CONFLICT (series_id, position) DO NOTHING RETURNING id",
          project_id, u.series_id, a.position, a.kind, a.cause, a.magnitude,
          ci_low.empty() ? "{NULL}" : ci_low, ci_high.empty() ? "{NULL}" : ci_high, a.p_value,
          a.q_value, a.level_before, a.level_after, Join(a.detectors), a.parameters_json);
      if (r.empty()) continue;
      const int64_t id = r[0][0].as<int64_t>();
      tx.exec_params(
          "INSERT INTO alert_events (alert_id, actor, state, note) VALUES ($1, 'perfgate', "
          "'open', $2)",
          id, "raised by " + Join(a.detectors));
      alert_ids.push_back(id);
    }
  }
  return alert_ids;
}

}  // namespace

Result<std::optional<HistoryRunResult>> PgStore::AnalyseNextRun(
    const std::vector<std::string>& tracked_branches, const HistoryAnalyse& analyse) {
  const std::string tracked = pgutil::TextArray(tracked_branches);
  return pool_.WithTransaction<std::optional<HistoryRunResult>>(
      [&](pqxx::work& tx) -> Result<std::optional<HistoryRunResult>> {
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
          if (candidate.empty()) return std::optional<HistoryRunResult>();
          const int64_t project = candidate[0][0].as<int64_t>();
          tx.exec_params("SELECT pg_advisory_xact_lock($1, $2::int)", kHistoryLockClass,
                         project % 2147483647);
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
        if (!claimed) return std::optional<HistoryRunResult>();
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
            "FROM sample_sets ss WHERE ss.run_id = $1::uuid AND hs.project_id = $2 "
            "AND hs.branch_id = $3 AND hs.testbed = $4 AND hs.benchmark_id = ss.benchmark_id "
            "AND hs.metric_id = ss.metric_id AND hs.length - hs.baseline_from > $6",
            run_id, project_id, branch_id, testbed, history_window_.keep_points,
            history_window_.max_points);
        HistoryRunWork work;
        work.run_id = run_id;
        work.project = {project_id, row[6].as<std::string>(), row[7].as<bool>(), Text(row[8])};
        work.series = LoadSeries(tx, run_id, project_id, branch_id, testbed);
        auto updates = analyse(work);
        if (!updates) return tl::unexpected(updates.error());
        HistoryRunResult result;
        result.run_id = run_id;
        result.project = work.project;
        result.series = work.series.size();
        result.new_alert_ids = StoreUpdates(tx, project_id, *updates);
        tx.exec_params("UPDATE runs SET history_analysed_at = now() WHERE id = $1::uuid", run_id);
        return std::optional<HistoryRunResult>(std::move(result));
      });
}

Result<int64_t> PgStore::PendingHistoryRuns() {
  return pool_.WithStatements<int64_t>([&](pqxx::transaction_base& tx) -> Result<int64_t> {
    return tx.exec("SELECT count(*) FROM runs WHERE history_analysed_at IS NULL")[0][0]
        .as<int64_t>();
  });
}

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
    return detail;
  });
}

Result<AlertRecord> PgStore::UpdateAlert(const Project& project, int64_t id,
                                         const AlertUpdate& update) {
  return pool_.WithTransaction<AlertRecord>([&](pqxx::work& tx) -> Result<AlertRecord> {
    pqxx::result current = tx.exec_params(
        "SELECT state, series_id, position, note FROM alerts WHERE project_id = $1 AND id = $2 "
        "FOR UPDATE",
        project.id, id);
    if (current.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no alert " + std::to_string(id) + " in project " + project.name, "id");
    }
    const std::string old_state = current[0][0].as<std::string>();
    const std::string state = update.state.value_or(old_state);
    const std::string note = update.note.value_or(current[0][3].as<std::string>());
    tx.exec_params(
        "UPDATE alerts SET state = $2, note = $3, state_changed_by = $4, "
        "state_changed_at = clock_timestamp() WHERE id = $1",
        id, state, note, update.actor);
    tx.exec_params(
        "INSERT INTO alert_events (alert_id, actor, state, note) VALUES ($1, $2, $3, $4)", id,
        update.actor, state, update.note.value_or(""));
    if (state != old_state && Rebaselines(state)) {
      tx.exec_params(
          "UPDATE history_series SET baseline_from = greatest(baseline_from, $2), "
          "detector_state = NULL, monitor_state = '{}', updated_at = now() WHERE id = $1",
          current[0][1].as<int64_t>(), current[0][2].as<int64_t>());
    }
    pqxx::result rows =
        tx.exec_params("SELECT " + AlertColumns() + kAlertJoins + "WHERE a.id = $1", id);
    return ReadAlert(rows[0]);
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
                                     a.suite + ", unit " + a.unit + "; testbed " + b.testbed +
                                     ", suite " + b.suite + ", unit " + b.unit +
                                     "): name the testbed, suite or unit",
                                 a.testbed != b.testbed ? "testbed"
                                 : a.suite != b.suite   ? "suite"
                                                        : "unit");
        }
        HistorySeriesPoints out;
        out.key = ReadSeriesKey(series[0]);
        out.baseline_from = series[0][kSeriesColumnCount].as<int64_t>();
        out.points = ReadPoints(tx, out.key.id, 0, INT32_MAX);
        return out;
      });
}

}  // namespace perfgate::store
