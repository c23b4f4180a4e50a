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

namespace perfgate::store::pghistory {

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

// Triage states that re-baseline the series.
bool Rebaselines(const std::string& state);

}  // namespace perfgate::store::pghistory
