// SPDX-License-Identifier: Apache-2.0
// The columns, joins and row reader of a run summary, shared by the PgStore files that return
// runs (pg_run_store.cc, pg_verdict_store.cc). Internal to server/store.
#pragma once

#include <pqxx/pqxx>
#include <string>

#include "server/store/store.h"

namespace perfwarden::store::pgutil {

// Columns of a run `r` with its project p, branch b, commit c and testbed t (SummaryJoins).
std::string SummaryColumns();
inline constexpr int kSummaryColumnCount = 11;
// " FROM runs r JOIN projects p ... JOIN testbeds t ... ".
const char* SummaryJoins();
RunSummary ReadSummary(const pqxx::row& row);
// The field as text; "" when NULL.
std::string Text(const pqxx::field& f);
// A text parameter that is NULL when empty.
inline const char* OrNull(const std::string& s) { return s.empty() ? nullptr : s.c_str(); }
// A metrics.direction column.
Direction ReadDirection(const pqxx::field& f);

}  // namespace perfwarden::store::pgutil
