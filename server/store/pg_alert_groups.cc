// SPDX-License-Identifier: Apache-2.0
// PgStore: alert groups. The history worker puts each new alert into the oldest open group of its
// branch whose range overlaps its own (AssignGroups, under the project's history lock, in the
// run's transaction); the API lists groups, shows one with its members and bisects, and triages
// every member at once (under the same lock, so that it and the worker never wait on each other's
// alerts). The one bisect of a group: GroupBisect locks the group and names it.
#include <algorithm>

#include "core/commit_range.h"
#include "server/store/pg_history_rows.h"
#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"

namespace perfwarden::store {

using pghistory::AlertColumns;
using pghistory::kAlertJoins;
using pghistory::ReadAlert;
using pghistory::ReadCommit;
using pghistory::Split;
using pgutil::OrNull;
using pgutil::Text;

namespace pghistory {
namespace {

// Where commit `commit` (an SQL expression) sits on branch `branch` of project `project`:
// its first run's time in microseconds (the commit's own creation when no run is left).
std::string FirstRunUs(const std::string& project, const std::string& branch,
                       const std::string& commit) {
  return "(SELECT (extract(epoch FROM coalesce(min(r.created_at), min(c.created_at))) * 1e6)"
         "::bigint FROM commits c LEFT JOIN runs r ON r.project_id = " +
         project + " AND r.branch_id = " + branch +
         " AND r.commit_id = c.id WHERE c.id = " + commit + ")";
}

CommitRange RangeOf(const pqxx::row& row, int at) {
  return {{row[at + 1].as<int64_t>(), row[at].as<int64_t>()},
          {row[at + 3].as<int64_t>(), row[at + 2].as<int64_t>()}};
}

}  // namespace

std::vector<int64_t> AssignGroups(pqxx::work& tx, int64_t project_id,
                                  const std::vector<int64_t>& alert_ids) {
  std::vector<int64_t> created;
  if (alert_ids.empty()) return created;
  pqxx::result alerts =
      tx.exec_params("SELECT a.id, hs.branch_id, a.last_good_commit_id, " +
                         FirstRunUs("a.project_id", "hs.branch_id", "a.last_good_commit_id") +
                         ", a.first_bad_commit_id, " +
                         FirstRunUs("a.project_id", "hs.branch_id", "a.first_bad_commit_id") +
                         " FROM alerts a JOIN history_series hs ON hs.id = a.series_id "
                         "WHERE a.project_id = $1 AND a.id = ANY ($2::bigint[]) ORDER BY a.id",
                     project_id, pgutil::IntegerArray(alert_ids));
  // The open groups of each branch, oldest first, as they narrow and grow in this run.
  struct Groups {
    std::vector<int64_t> ids;
    std::vector<CommitRange> ranges;
  };
  std::map<int64_t, Groups> by_branch;
  for (const pqxx::row& a : alerts) {
    const int64_t branch = a[1].as<int64_t>();
    auto [it, fresh] = by_branch.try_emplace(branch);
    Groups& groups = it->second;
    if (fresh) {
      pqxx::result open = tx.exec_params(
          "SELECT g.id, g.last_good_commit_id, " +
              FirstRunUs("g.project_id", "g.branch_id", "g.last_good_commit_id") +
              ", g.first_bad_commit_id, " +
              FirstRunUs("g.project_id", "g.branch_id", "g.first_bad_commit_id") +
              " FROM alert_groups g WHERE g.project_id = $1 AND g.branch_id = $2 "
              "AND EXISTS (SELECT 1 FROM alerts m WHERE m.group_id = g.id AND m.state = 'open') "
              "ORDER BY g.id",
          project_id, branch);
      for (const pqxx::row& g : open) {
        groups.ids.push_back(g[0].as<int64_t>());
        groups.ranges.push_back(RangeOf(g, 1));
      }
    }
    const CommitRange range = RangeOf(a, 2);
    int64_t group = 0;
    if (auto join = GroupToJoin(range, groups.ranges)) {
      const CommitRange narrowed = *Intersect(range, groups.ranges[*join]);
      group = groups.ids[*join];
      if (!(narrowed == groups.ranges[*join])) {
        groups.ranges[*join] = narrowed;
        tx.exec_params(
            "UPDATE alert_groups SET last_good_commit_id = $2, first_bad_commit_id = $3 "
            "WHERE id = $1",
            group, narrowed.last_good.commit_id, narrowed.first_bad.commit_id);
      }
    } else {
      group = tx.exec_params(
                    "INSERT INTO alert_groups (project_id, branch_id, last_good_commit_id, "
                    "first_bad_commit_id) VALUES ($1, $2, $3, $4) RETURNING id",
                    project_id, branch, range.last_good.commit_id, range.first_bad.commit_id)[0][0]
                  .as<int64_t>();
      groups.ids.push_back(group);
      groups.ranges.push_back(range);
      created.push_back(group);
    }
    tx.exec_params("UPDATE alerts SET group_id = $2 WHERE id = $1", a[0].as<int64_t>(), group);
  }
  return created;
}

std::optional<int64_t> GroupBisect(pqxx::work& tx, int64_t project_id, int64_t alert_id,
                                   int64_t* group_id) {
  *group_id = 0;
  pqxx::result group = tx.exec_params(
      "SELECT g.id FROM alert_groups g JOIN alerts a ON a.group_id = g.id "
      "WHERE a.project_id = $1 AND a.id = $2 FOR UPDATE OF g",
      project_id, alert_id);
  if (group.empty()) return std::nullopt;
  *group_id = group[0][0].as<int64_t>();
  pqxx::result bisect = tx.exec_params(
      "SELECT id FROM bisect_jobs WHERE project_id = $1 AND group_id = $2 "
      "AND state NOT IN ('failed', 'cancelled') ORDER BY id DESC LIMIT 1",
      project_id, *group_id);
  if (bisect.empty()) return std::nullopt;
  return bisect[0][0].as<int64_t>();
}

}  // namespace pghistory

namespace {

// A group `g` with its project p, branch br, range commits lc and fc, and members' figures.
std::string GroupColumns() {
  return "g.id, p.name, br.name, lc.sha, lc.subject, lc.author, " +
         pgutil::Rfc3339Sql("lc.author_time") + ", '', fc.sha, fc.subject, fc.author, " +
         pgutil::Rfc3339Sql("fc.author_time") +
         ", '', array_to_string(st.states, ','), array_to_string(st.counts, ','), "
         "(SELECT m.id FROM alerts m WHERE m.group_id = g.id "
         "ORDER BY m.q_value, abs(m.magnitude) DESC, m.id LIMIT 1), "
         "(SELECT j.id FROM bisect_jobs j WHERE j.group_id = g.id "
         "AND j.state NOT IN ('failed', 'cancelled') ORDER BY j.id DESC LIMIT 1), " +
         pgutil::Rfc3339Sql("g.created_at");
}

constexpr const char* kGroupJoins =
    " FROM alert_groups g JOIN projects p ON p.id = g.project_id "
    "JOIN branches br ON br.id = g.branch_id "
    "JOIN commits lc ON lc.id = g.last_good_commit_id "
    "JOIN commits fc ON fc.id = g.first_bad_commit_id "
    "CROSS JOIN LATERAL (SELECT coalesce(array_agg(s.state ORDER BY s.state), '{}') states, "
    "coalesce(array_agg(s.n ORDER BY s.state), '{}') counts FROM (SELECT state, count(*) n "
    "FROM alerts WHERE group_id = g.id GROUP BY state) s) st ";

AlertGroupRecord ReadGroup(const pqxx::row& row) {
  AlertGroupRecord g;
  g.id = row[0].as<int64_t>();
  g.project = Text(row[1]);
  g.branch = Text(row[2]);
  g.last_good = ReadCommit(row, 3);
  g.first_bad = ReadCommit(row, 8);
  const std::vector<std::string> states = Split(Text(row[13]));
  const std::vector<std::string> counts = Split(Text(row[14]));
  for (std::size_t i = 0; i < states.size() && i < counts.size(); ++i) {
    const int64_t n = std::stoll(counts[i]);
    g.states[states[i]] = n;
    g.members += n;
  }
  g.state = g.states.count("open") > 0 ? "open" : "closed";
  g.most_significant = row[15].is_null() ? 0 : row[15].as<int64_t>();
  if (!row[16].is_null()) g.bisect_id = row[16].as<int64_t>();
  g.created_at = Text(row[17]);
  return g;
}

Result<AlertGroupDetail> ReadGroupDetail(pqxx::transaction_base& tx, const Project& project,
                                         int64_t id) {
  pqxx::result rows = tx.exec_params(
      "SELECT " + GroupColumns() + kGroupJoins + "WHERE g.project_id = $1 AND g.id = $2",
      project.id, id);
  if (rows.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     "no alert group " + std::to_string(id) + " in project " + project.name, "id");
  }
  AlertGroupDetail detail;
  detail.group = ReadGroup(rows[0]);
  for (const pqxx::row& r :
       tx.exec_params("SELECT " + AlertColumns() + kAlertJoins +
                          "WHERE a.group_id = $1 ORDER BY a.q_value, abs(a.magnitude) DESC, a.id",
                      id)) {
    detail.members.push_back(ReadAlert(r));
  }
  for (const pqxx::row& b :
       tx.exec_params("SELECT id, alert_id, good_sha, bad_sha, coalesce(culprit_sha, ''), state, "
                      "created_by, " +
                          pgutil::Rfc3339Sql("created_at") +
                          " FROM bisect_jobs WHERE group_id = $1 ORDER BY id DESC LIMIT 20",
                      id)) {
    BisectRecord r;
    r.id = b[0].as<int64_t>();
    if (!b[1].is_null()) r.alert_id = b[1].as<int64_t>();
    r.good_sha = Text(b[2]);
    r.bad_sha = Text(b[3]);
    r.culprit_sha = Text(b[4]);
    r.state = Text(b[5]);
    r.created_by = Text(b[6]);
    r.created_at = Text(b[7]);
    detail.bisects.push_back(std::move(r));
  }
  return detail;
}

}  // namespace

Result<AlertGroupPage> PgStore::ListAlertGroups(const Project& project,
                                                const AlertGroupFilter& filter) {
  int64_t before = 0;
  if (!filter.cursor.empty()) {
    try {
      before = std::stoll(filter.cursor);
    } catch (const std::exception&) {
      before = -1;
    }
    if (before <= 0) return InvalidArgument("not a cursor this server gave", "cursor");
  }
  return pool_.WithStatements<AlertGroupPage>(
      [&](pqxx::transaction_base& tx) -> Result<AlertGroupPage> {
        pqxx::result rows = tx.exec_params(
            "SELECT " + GroupColumns() + kGroupJoins +
                "WHERE g.project_id = $1 AND ($2::text = 'all' OR ($2 = 'open') = "
                "('open' = ANY (st.states))) AND ($3::text IS NULL OR br.name = $3) "
                "AND ($4::bigint = 0 OR g.id < $4) ORDER BY g.id DESC LIMIT $5",
            project.id, filter.state, OrNull(filter.branch), before, filter.limit + 1);
        AlertGroupPage page;
        for (const pqxx::row& r : rows) {
          if (static_cast<int>(page.groups.size()) == filter.limit) {
            page.next_cursor = std::to_string(page.groups.back().id);
            break;
          }
          page.groups.push_back(ReadGroup(r));
        }
        return page;
      });
}

Result<AlertGroupDetail> PgStore::GetAlertGroup(const Project& project, int64_t id) {
  return pool_.WithStatements<AlertGroupDetail>(
      [&](pqxx::transaction_base& tx) -> Result<AlertGroupDetail> {
        return ReadGroupDetail(tx, project, id);
      });
}

Result<AlertGroupDetail> PgStore::UpdateAlertGroup(const Project& project, int64_t id,
                                                   const AlertUpdate& update) {
  return pool_.WithTransaction<AlertGroupDetail>([&](pqxx::work& tx) -> Result<AlertGroupDetail> {
    pghistory::LockProjectHistory(tx, project.id);
    pqxx::result group = tx.exec_params(
        "SELECT id FROM alert_groups WHERE project_id = $1 AND id = $2 FOR UPDATE", project.id, id);
    if (group.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no alert group " + std::to_string(id) + " in project " + project.name,
                       "id");
    }
    for (const pqxx::row& m :
         tx.exec_params("SELECT id FROM alerts WHERE group_id = $1 ORDER BY id", id)) {
      auto updated = pghistory::UpdateAlertIn(tx, project, m[0].as<int64_t>(), update);
      if (!updated) return tl::unexpected(updated.error());
    }
    return ReadGroupDetail(tx, project, id);
  });
}

}  // namespace perfwarden::store
