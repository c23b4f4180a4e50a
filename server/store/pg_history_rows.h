// SPDX-License-Identifier: Apache-2.0
// What the PgStore files of the history share (pg_history_store.cc: the worker's side;
// pg_alert_store.cc: alerts, bisects and whole series): the columns, joins and row readers of
// series, commits, points and alerts. Internal to server/store.
#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "server/store/history_store.h"

namespace perfwarden::store::pghistory {

std::string Join(const std::vector<std::string>& items);  // "a,b"
std::vector<std::string> Split(const std::string& text);  // the inverse of Join
std::vector<int64_t> ParseInts(const pqxx::field& f);     // a bigint[] / int[]
std::optional<double> OptionalDouble(const pqxx::field& f);

// The series columns of `hs` joined with branches br, benchmarks b, metrics m.
inline constexpr const char* kSeriesColumns =
    "hs.id, br.name, hs.testbed, b.suite, b.name, m.name, m.unit, m.direction";
inline constexpr int kSeriesColumnCount = 8;
inline constexpr const char* kSeriesJoins =
    " JOIN branches br ON br.id = hs.branch_id JOIN benchmarks b ON b.id = hs.benchmark_id "
    "JOIN metrics m ON m.id = hs.metric_id ";
HistorySeriesKey ReadSeriesKey(const pqxx::row& row, int at = 0);

// A commit of a history point `hp` (joined with commits c) as columns, and its reader.
std::string CommitColumns(const std::string& hp, const std::string& c);
inline constexpr int kCommitColumnCount = 5;
CommitRef ReadCommit(const pqxx::row& row, int at);

// The points of a series in [from, to] (positions), oldest first.
std::vector<ExcerptPoint> ReadPoints(pqxx::transaction_base& tx, int64_t series_id, int64_t from,
                                     int64_t to);

// An alert `a` with its project p, series hs, last good point g and first bad point f.
std::string AlertColumns();
extern const char* const kAlertJoins;
AlertRecord ReadAlert(const pqxx::row& row);

// Takes project `project_id`'s history lock for the rest of the transaction
// (pg_advisory_xact_lock): the history worker holds it while it takes a run of the project into
// history, and the group triage takes it so that the two never lock alerts in opposite orders.
void LockProjectHistory(pqxx::transaction_base& tx, int64_t project_id);

// Triage states that re-baseline the series (at the alert's first bad point; went_away at the
// series' end: the level came back, so neither side of the step is the new normal).
bool Rebaselines(const std::string& state);

// Sets an alert's state and/or note, records the event and re-baselines its series when the
// state says so (UpdateAlert and the group triage). kNotFound when not in the project.
Result<AlertRecord> UpdateAlertIn(pqxx::work& tx, const Project& project, int64_t id,
                                  const AlertUpdate& update);

// Puts each new alert (ids in creation order) into the first open group (oldest first) of its
// project and branch whose range overlaps its own, narrowing the group's range to the
// intersection, or into a new group; the ids of the groups created. Runs under the project's
// history lock (server/store/pg_alert_groups.cc).
std::vector<int64_t> AssignGroups(pqxx::work& tx, int64_t project_id,
                                  const std::vector<int64_t>& alert_ids);

// Locks the group of alert `alert_id` (sets *group_id, 0 when the alert has none) and returns
// its newest bisect that is not failed or cancelled, if any: the group's one bisect.
std::optional<int64_t> GroupBisect(pqxx::work& tx, int64_t project_id, int64_t alert_id,
                                   int64_t* group_id);

}  // namespace perfwarden::store::pghistory
