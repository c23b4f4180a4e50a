// SPDX-License-Identifier: Apache-2.0
// PgStore: what verdicts need. A run's place in history, its baseline (the same testbed's runs
// at the nearest measured commit of the candidates the runner's ancestry gives), pooled sample
// sets, and stored verdicts.
#include <set>

#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"
#include "wire/validate.h"

namespace perfwarden::store {
namespace {

using pgutil::Text;

struct Candidate {
  std::string sha;
  std::string selection;
  int distance = 0;
};

// The commits whose results may serve as the baseline, nearest first (docs/api.md).
std::vector<Candidate> Candidates(const RunContext& run, bool pull_request) {
  std::vector<Candidate> out;
  std::set<std::string> seen = {run.summary.commit_sha};
  auto add = [&](const std::string& sha, const char* selection, int distance) {
    if (wire::IsSha(sha, wire::HexCase::kLower) && seen.insert(sha).second)
      out.push_back({sha, selection, distance});
  };
  if (pull_request) {
    add(run.merge_base, "merge_base", 0);
    // The ancestry of a pull-request run starts at its merge-base.
    for (size_t i = 0; i < run.ancestry.size(); ++i) {
      add(run.ancestry[i], "ancestor", static_cast<int>(i));
    }
  } else {
    // The ancestry of a tracked-branch run starts at its commit's first parent.
    for (size_t i = 0; i < run.ancestry.size(); ++i) {
      add(run.ancestry[i], "previous_commit", static_cast<int>(i));
    }
    if (run.ancestry.empty() && !run.parents.empty()) add(run.parents[0], "previous_commit", 0);
  }
  return out;
}

}  // namespace

Result<RunContext> PgStore::GetRunContext(const Project& project, const std::string& run_id) {
  if (!wire::IsUuid(run_id, wire::HexCase::kLower)) {
    return MakeError(ErrorCode::kNotFound, "no run " + run_id + " in project " + project.name,
                     "id");
  }
  return pool_.WithStatements<RunContext>([&](pqxx::transaction_base& tx) -> Result<RunContext> {
    pqxx::result r = tx.exec_params(
        "SELECT " + pgutil::SummaryColumns() +
            ", r.target_branch, r.merge_base_sha, "
            "coalesce(ARRAY(SELECT jsonb_array_elements_text(r.upload -> 'ancestry')), '{}'), "
            "c.parents, r.upload ->> 'runner_version'" +
            pgutil::SummaryJoins() + "WHERE r.id = $1::uuid AND r.project_id = $2",
        run_id, project.id);
    if (r.empty()) {
      return MakeError(ErrorCode::kNotFound, "no run " + run_id + " in project " + project.name,
                       "id");
    }
    const int k = pgutil::kSummaryColumnCount;
    RunContext context;
    context.summary = pgutil::ReadSummary(r[0]);
    context.target_branch = Text(r[0][k]);
    context.merge_base = Text(r[0][k + 1]);
    context.ancestry = pgutil::ParseArray(Text(r[0][k + 2]));
    context.parents = pgutil::ParseArray(Text(r[0][k + 3]));
    context.summary.runner_version = Text(r[0][k + 4]);
    return context;
  });
}

Result<std::optional<BaselineChoice>> PgStore::FindBaseline(const Project& project,
                                                            const RunContext& run,
                                                            std::string* why_none) {
  const bool pull_request = !run.target_branch.empty() && run.target_branch != run.summary.branch;
  const std::string branch = pull_request ? run.target_branch : run.summary.branch;
  const std::vector<Candidate> candidates = Candidates(run, pull_request);
  std::vector<std::string> shas;
  for (const Candidate& c : candidates) shas.push_back(c.sha);

  return pool_.WithStatements<std::optional<BaselineChoice>>(
      [&](pqxx::transaction_base& tx) -> Result<std::optional<BaselineChoice>> {
        std::map<std::string, std::vector<std::string>> runs_at;
        if (!shas.empty()) {
          for (const pqxx::row& row : tx.exec_params(
                   "SELECT c.sha, array_agg(r.id::text ORDER BY r.created_at, r.id) "
                   "FROM runs r JOIN commits c ON c.id = r.commit_id "
                   "JOIN branches b ON b.id = r.branch_id "
                   "WHERE r.project_id = $1 AND b.name = $2 AND r.testbed_id = $3 "
                   "AND c.project_id = $1 AND c.sha = ANY ($4::text[]) AND r.id <> $5::uuid "
                   "AND r.sample_count > 0 GROUP BY c.sha",
                   project.id, branch, run.summary.testbed_id, pgutil::TextArray(shas),
                   run.summary.id)) {
            runs_at[row[0].as<std::string>()] = pgutil::ParseArray(row[1].as<std::string>());
          }
        }
        for (const Candidate& c : candidates) {
          auto it = runs_at.find(c.sha);
          if (it == runs_at.end()) continue;
          return std::optional<BaselineChoice>(BaselineChoice{c.sha, branch, run.summary.testbed,
                                                              c.selection, c.distance, it->second});
        }
        if (!pull_request && run.ancestry.empty()) {
          // No ancestry uploaded: the branch's latest commit measured before this run.
          pqxx::result latest = tx.exec_params(
              "SELECT c.sha, array_agg(r.id::text ORDER BY r.created_at, r.id) FROM runs r "
              "JOIN commits c ON c.id = r.commit_id WHERE r.commit_id = ("
              " SELECT r2.commit_id FROM runs r2 JOIN branches b ON b.id = r2.branch_id"
              " JOIN commits c2 ON c2.id = r2.commit_id"
              " WHERE r2.project_id = $1 AND b.name = $2 AND r2.testbed_id = $3"
              " AND c2.sha <> $4 AND r2.sample_count > 0"
              " AND r2.created_at < (SELECT created_at FROM runs"
              "  WHERE project_id = $1 AND id = $5::uuid)"
              " ORDER BY r2.created_at DESC LIMIT 1) "
              "AND r.testbed_id = $3 AND r.branch_id = (SELECT id FROM branches "
              " WHERE project_id = $1 AND name = $2) AND r.sample_count > 0 "
              "AND r.created_at < (SELECT created_at FROM runs WHERE project_id = $1 "
              " AND id = $5::uuid) GROUP BY c.sha",
              project.id, branch, run.summary.testbed_id, run.summary.commit_sha, run.summary.id);
          if (!latest.empty()) {
            return std::optional<BaselineChoice>(BaselineChoice{
                latest[0][0].as<std::string>(), branch, run.summary.testbed, "latest_before", 0,
                pgutil::ParseArray(latest[0][1].as<std::string>())});
          }
        }
        if (why_none != nullptr) {
          *why_none = "no run of branch " + branch + " on testbed " + run.summary.testbed + " at " +
                      (candidates.empty()
                           ? std::string("any ancestor (the upload named no merge-base or "
                                         "ancestry)")
                           : std::to_string(candidates.size()) + " candidate commit(s) from " +
                                 candidates.front().sha.substr(0, 12));
          if (!shas.empty()) {
            // Results on the same testbed name with another fingerprint are not comparable;
            // say so, since it is the usual reason after a runner image upgrade.
            pqxx::result other = tx.exec_params(
                "SELECT count(*) FROM runs r JOIN commits c ON c.id = r.commit_id "
                "JOIN branches b ON b.id = r.branch_id JOIN testbeds t ON t.id = r.testbed_id "
                "WHERE r.project_id = $1 AND b.name = $2 AND t.name = $3 AND t.id <> $4 "
                "AND c.sha = ANY ($5::text[])",
                project.id, branch, run.summary.testbed, run.summary.testbed_id,
                pgutil::TextArray(shas));
            if (other[0][0].as<int64_t>() > 0) {
              *why_none += "; " + other[0][0].as<std::string>() + " run(s) there are on testbed " +
                           run.summary.testbed +
                           " with a different host fingerprint, which are not compared";
            }
          }
        }
        return std::optional<BaselineChoice>();
      });
}

Result<std::vector<SampleSet>> PgStore::GetSampleSets(const Project& project,
                                                      const std::vector<std::string>& run_ids) {
  for (const std::string& id : run_ids) {
    if (!wire::IsUuid(id, wire::HexCase::kLower))
      return MakeError(ErrorCode::kNotFound, "no run " + id, "run_ids");
  }
  return pool_.WithStatements<std::vector<SampleSet>>(
      [&](pqxx::transaction_base& tx) -> Result<std::vector<SampleSet>> {
        const std::string ids = pgutil::TextArray(run_ids);
        pqxx::result found = tx.exec_params(
            "SELECT count(*) FROM runs WHERE project_id = $1 AND id = ANY ($2::uuid[])", project.id,
            ids);
        const std::set<std::string> distinct(run_ids.begin(), run_ids.end());
        if (found[0][0].as<size_t>() != distinct.size()) {
          return MakeError(ErrorCode::kNotFound,
                           "a run of " + ids + " is not in project " + project.name, "run_ids");
        }
        // One row per run and series, in series order, then in the order of run_ids; the
        // repetitions travel in binary (array_send), exact and without decimal printing and
        // parsing; consecutive rows of one series are pooled here.
        std::vector<SampleSet> out;
        for (const pqxx::row& row : tx.exec_params(
                 "SELECT b.suite, b.name, m.name, m.unit, m.direction, array_send(s.vals) "
                 "FROM sample_sets s JOIN benchmarks b ON b.id = s.benchmark_id "
                 "JOIN metrics m ON m.id = s.metric_id "
                 "WHERE s.project_id = $2 AND s.run_id = ANY ($1::uuid[]) "
                 "ORDER BY 1, 2, 3, 4, array_position($1::uuid[], s.run_id)",
                 ids, project.id)) {
          const std::string_view suite = row[0].c_str(), benchmark = row[1].c_str(),
                                 metric = row[2].c_str(), unit = row[3].c_str();
          // Compared as views: no copies for the rows that pool into the last series.
          if (out.empty() || out.back().key.suite != suite ||
              out.back().key.benchmark != benchmark || out.back().key.metric != metric ||
              out.back().unit != unit) {
            SampleSet set;
            set.key = {std::string(suite), std::string(benchmark), std::string(metric)};
            set.unit = unit;
            set.direction =
                ParseDirection(row[4].as<std::string>()).value_or(Direction::kLowerIsBetter);
            out.push_back(std::move(set));
          }
          if (!pgutil::AppendFloat8ArraySend(row[5].c_str(), out.back().values)) {
            return MakeError(ErrorCode::kInternal, "unreadable repetitions of " +
                                                       out.back().key.benchmark + " " +
                                                       out.back().key.metric);
          }
        }
        return out;
      });
}

namespace {

// The first key of pg_advisory_xact_lock(int, int) for a run's verdicts ("pwvd").
constexpr int kVerdictLockClass = 0x70777664;

const char* kVerdictColumns =
    "v.id, v.run_id::text, v.contender_run_ids::text, v.baseline_run_ids::text, v.outcome, "
    "v.algorithm_version, v.parameters::text, v.baseline::text, v.summary::text, "
    "v.results::text, v.measurement::text, ";

StoredVerdict ReadVerdict(const pqxx::row& row) {
  StoredVerdict out;
  out.id = row[0].as<int64_t>();
  NewVerdict& v = out.verdict;
  v.run_id = row[1].as<std::string>();
  v.contender_run_ids = pgutil::ParseArray(row[2].as<std::string>());
  v.baseline_run_ids = pgutil::ParseArray(row[3].as<std::string>());
  v.outcome = row[4].as<std::string>();
  v.algorithm_version = row[5].as<std::string>();
  v.parameters_json = row[6].as<std::string>();
  v.baseline_json = Text(row[7]);
  v.summary_json = row[8].as<std::string>();
  v.results_json = row[9].as<std::string>();
  v.measurement_json = Text(row[10]);
  out.created_at = row[11].as<std::string>();
  return out;
}

}  // namespace

Result<StoredVerdict> PgStore::SaveVerdict(const Project& project, const NewVerdict& verdict) {
  return pool_.WithTransaction<StoredVerdict>([&](pqxx::work& tx) -> Result<StoredVerdict> {
    // A verdict is derived data: recomputed, identically, from the stored samples by the next
    // POST. Its commit does not wait for the WAL flush (a crash may lose the last few verdicts,
    // never a run); on this project's reference machine the flush was a fifth of the time
    // verdict requests spent waiting with 16 in flight (bench/verdict_bench.cc).
    tx.exec("SET LOCAL synchronous_commit TO OFF");
    // The same question asked at once (two CI retries, through one server or two on this
    // database: docs/operations.md, "Run several servers") is answered by one stored verdict:
    // under the run's lock, a newest verdict with the same algorithm, parameters, contender and
    // baseline runs is the answer, as VerdictService finds it before judging. Verdicts without
    // a baseline and paired ones (measured anew each time) are always stored.
    if (!verdict.baseline_run_ids.empty() && verdict.measurement_json.empty()) {
      tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2))", kVerdictLockClass,
                     verdict.run_id);
      pqxx::result same = tx.exec_params(
          "SELECT " + std::string(kVerdictColumns) + pgutil::Rfc3339Sql("v.created_at") +
              " FROM (SELECT v.* FROM verdicts v"
              " WHERE v.run_id = $1::uuid AND v.project_id = $2"
              " ORDER BY v.created_at DESC, v.id DESC LIMIT 1) v"
              " WHERE v.algorithm_version = $3 AND v.contender_run_ids = $4::uuid[]"
              " AND v.baseline_run_ids = $5::uuid[] AND v.parameters = $6::jsonb"
              " AND v.measurement IS NULL",
          verdict.run_id, project.id, verdict.algorithm_version,
          pgutil::TextArray(verdict.contender_run_ids), pgutil::TextArray(verdict.baseline_run_ids),
          verdict.parameters_json);
      if (!same.empty()) {
        StoredVerdict stored = ReadVerdict(same[0]);
        stored.reused = true;
        return stored;
      }
    }
    pqxx::result r = tx.exec_params(
        "INSERT INTO verdicts AS v (project_id, run_id, contender_run_ids, baseline_run_ids, "
        "outcome, algorithm_version, parameters, baseline, summary, results, measurement) "
        "SELECT $10, $1::uuid, $2::uuid[], $3::uuid[], $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, "
        "$9::json, $11::json "
        "WHERE EXISTS (SELECT 1 FROM runs WHERE id = $1::uuid AND project_id = $10) "
        "RETURNING v.id, " +
            pgutil::Rfc3339Sql("v.created_at"),
        verdict.run_id, pgutil::TextArray(verdict.contender_run_ids),
        pgutil::TextArray(verdict.baseline_run_ids), verdict.outcome, verdict.algorithm_version,
        verdict.parameters_json,
        verdict.baseline_json.empty() ? nullptr : verdict.baseline_json.c_str(),
        verdict.summary_json, verdict.results_json, project.id,
        verdict.measurement_json.empty() ? nullptr : verdict.measurement_json.c_str());
    if (r.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no run " + verdict.run_id + " in project " + project.name, "id");
    }
    // What was stored is what was given (jsonb keeps the values; only key order and spacing
    // may differ), so only the id and the time come back: a verdict of 500 metrics is ~200 KB.
    StoredVerdict stored;
    stored.id = r[0][0].as<int64_t>();
    stored.created_at = r[0][1].as<std::string>();
    stored.verdict = verdict;
    return stored;
  });
}

Result<std::optional<StoredVerdict>> PgStore::LatestVerdict(const Project& project,
                                                            const std::string& run_id) {
  if (!wire::IsUuid(run_id, wire::HexCase::kLower)) return std::optional<StoredVerdict>();
  return pool_.WithStatements<std::optional<StoredVerdict>>(
      [&](pqxx::transaction_base& tx) -> Result<std::optional<StoredVerdict>> {
        pqxx::result r = tx.exec_params(
            "SELECT " + std::string(kVerdictColumns) + pgutil::Rfc3339Sql("v.created_at") +
                " FROM verdicts v WHERE v.run_id = $1::uuid AND v.project_id = $2 "
                "ORDER BY v.created_at DESC, v.id DESC LIMIT 1",
            run_id, project.id);
        if (r.empty()) return std::optional<StoredVerdict>();
        return std::optional<StoredVerdict>(ReadVerdict(r[0]));
      });
}

Result<std::optional<StoredVerdict>> PgStore::GetVerdict(const Project& project,
                                                         const std::string& run_id, int64_t id) {
  if (!wire::IsUuid(run_id, wire::HexCase::kLower)) return std::optional<StoredVerdict>();
  return pool_.WithStatements<std::optional<StoredVerdict>>(
      [&](pqxx::transaction_base& tx) -> Result<std::optional<StoredVerdict>> {
        pqxx::result r = tx.exec_params(
            "SELECT " + std::string(kVerdictColumns) + pgutil::Rfc3339Sql("v.created_at") +
                " FROM verdicts v WHERE v.id = $1 AND v.run_id = $2::uuid "
                "AND v.project_id = $3",
            id, run_id, project.id);
        if (r.empty()) return std::optional<StoredVerdict>();
        return std::optional<StoredVerdict>(ReadVerdict(r[0]));
      });
}

}  // namespace perfwarden::store
