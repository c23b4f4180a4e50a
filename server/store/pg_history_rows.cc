// SPDX-License-Identifier: Apache-2.0
#include "server/store/pg_history_rows.h"

#include <algorithm>
#include <cmath>

#include "server/store/pg_run_rows.h"
#include "server/store/pg_util.h"

namespace perfwarden::store::pghistory {

using pgutil::ReadDirection;
using pgutil::Text;

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

HistorySeriesKey ReadSeriesKey(const pqxx::row& row, int at) {
  HistorySeriesKey out;
  out.id = row[at].as<int64_t>();
  out.branch = row[at + 1].as<std::string>();
  out.testbed = row[at + 2].as<std::string>();
  out.key = {row[at + 3].as<std::string>(), row[at + 4].as<std::string>(),
             row[at + 5].as<std::string>()};
  out.unit = row[at + 6].as<std::string>();
  out.direction = ReadDirection(row[at + 7]);
  return out;
}

// A commit of a history point `hp` (joined with commits c) as columns.
std::string CommitColumns(const std::string& hp, const std::string& c) {
  return c + ".sha, " + c + ".subject, " + c + ".author, " +
         pgutil::Rfc3339Sql(c + ".author_time") + ", " + hp + ".run_ids[1]::text";
}

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
         pgutil::Rfc3339Sql("a.state_changed_at") + ", " + pgutil::Rfc3339Sql("a.created_at") +
         ", a.range_end, a.creep_slope, a.creep_slope_low, a.creep_slope_high, "
         "coalesce(a.group_id, 0)";
}

const char* const kAlertJoins =
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
  if (!row[at].is_null()) {
    a.creep = CreepFigures{row[at].as<int64_t>(), row[at + 1].as<double>(),
                           OptionalDouble(row[at + 2]).value_or(NAN),
                           OptionalDouble(row[at + 3]).value_or(NAN)};
  }
  at += 4;
  a.group_id = row[at++].as<int64_t>();
  return a;
}

void LockProjectHistory(pqxx::transaction_base& tx, int64_t project_id) {
  // The first key of pg_advisory_xact_lock(int, int) for a project's history ("pwhs").
  constexpr int kHistoryLockClass = 0x70776873;
  tx.exec_params("SELECT pg_advisory_xact_lock($1, $2::int)", kHistoryLockClass,
                 project_id % 2147483647);
}

bool Rebaselines(const std::string& state) {
  return state == "acknowledged" || state == "false_positive" || state == "resolved" ||
         state == "went_away";
}

Result<AlertRecord> UpdateAlertIn(pqxx::work& tx, const Project& project, int64_t id,
                                  const AlertUpdate& update) {
  pqxx::result current = tx.exec_params(
      "SELECT a.state, a.series_id, a.position, a.note, hs.length FROM alerts a "
      "JOIN history_series hs ON hs.id = a.series_id WHERE a.project_id = $1 AND a.id = $2 "
      "FOR UPDATE OF a",
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
  tx.exec_params("INSERT INTO alert_events (alert_id, actor, state, note) VALUES ($1, $2, $3, $4)",
                 id, update.actor, state, update.note.value_or(""));
  if (state != old_state && Rebaselines(state)) {
    const int64_t from =
        state == "went_away" ? current[0][4].as<int64_t>() : current[0][2].as<int64_t>();
    tx.exec_params(
        "UPDATE history_series SET baseline_from = greatest(baseline_from, $2), "
        "detector_state = NULL, monitor_state = '{}', updated_at = now() WHERE id = $1",
        current[0][1].as<int64_t>(), from);
  }
  pqxx::result rows =
      tx.exec_params("SELECT " + AlertColumns() + kAlertJoins + "WHERE a.id = $1", id);
  return ReadAlert(rows[0]);
}

}  // namespace perfwarden::store::pghistory
