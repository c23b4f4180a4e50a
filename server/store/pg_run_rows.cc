// SPDX-License-Identifier: Apache-2.0
#include "server/store/pg_run_rows.h"

#include "server/store/pg_util.h"

namespace perfwarden::store::pgutil {

std::string Text(const pqxx::field& f) { return f.is_null() ? std::string() : f.as<std::string>(); }

std::string SummaryColumns() {
  return "r.id::text, p.name, b.name, c.sha, t.name, t.id, r.pr, " + Rfc3339Sql("r.started_at") +
         ", " + Rfc3339Sql("r.finished_at") + ", " + Rfc3339Sql("r.created_at") +
         ", r.sample_count";
}

const char* SummaryJoins() {
  return " FROM runs r JOIN projects p ON p.id = r.project_id JOIN branches b ON b.id = "
         "r.branch_id JOIN commits c ON c.id = r.commit_id JOIN testbeds t ON t.id = "
         "r.testbed_id ";
}

RunSummary ReadSummary(const pqxx::row& row) {
  RunSummary s;
  s.id = row[0].as<std::string>();
  s.project = row[1].as<std::string>();
  s.branch = row[2].as<std::string>();
  s.commit_sha = row[3].as<std::string>();
  s.testbed = row[4].as<std::string>();
  s.testbed_id = row[5].as<int64_t>();
  if (!row[6].is_null()) s.pr = row[6].as<int64_t>();
  s.started_at = Text(row[7]);
  s.finished_at = Text(row[8]);
  s.created_at = row[9].as<std::string>();
  s.sample_count = row[10].as<int64_t>();
  return s;
}

Direction ReadDirection(const pqxx::field& f) {
  return ParseDirection(f.as<std::string>()).value_or(Direction::kLowerIsBetter);
}

}  // namespace perfwarden::store::pgutil
