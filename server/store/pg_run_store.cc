// SPDX-License-Identifier: Apache-2.0
// PgStore: runs. IngestRun writes a whole upload in one transaction, serialised per run id by
// a transaction-scoped advisory lock, so that concurrent posts of one id store it once and
// every caller gets an answer (created, or the stored run). A run id is unique within its
// project (migration 0015): every statement here names the run by (project, id).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"
#include "wire/validate.h"

namespace perfwarden::store {
namespace {

using pgutil::kSummaryColumnCount;
using pgutil::ReadSummary;
using pgutil::Rfc3339Sql;
using pgutil::SummaryColumns;
using pgutil::SummaryJoins;
using pgutil::Text;

// The first key of pg_advisory_xact_lock(int, int) for run ids ("pwrn"); the two-key space
// is apart from the migrator's single bigint key.
constexpr int kRunLockClass = 0x7077726e;

using pgutil::OrNull;

// The run as stored, when it exists: compared with the new canonical upload by its SHA-256
// (rows stored before migration 0003 have no digest: their full upload is compared). Equal:
// the idempotent re-post; different: kConflict. Another project's run of the same id is not
// looked at: it neither conflicts nor tells that it exists.
Result<std::optional<IngestOutcome>> ExistingRun(pqxx::work& tx, const Project& project,
                                                 const std::string& id, const std::string& digest,
                                                 const std::string& upload) {
  pqxx::result r =
      tx.exec_params("SELECT " + SummaryColumns() + ", r.upload_sha256" + SummaryJoins() +
                         "WHERE r.id = $1::uuid AND r.project_id = $2",
                     id, project.id);
  if (r.empty()) return std::optional<IngestOutcome>();
  bool same = false;
  if (r[0][kSummaryColumnCount].is_null()) {
    same = tx.exec_params(
                 "SELECT upload = $3::jsonb FROM runs WHERE id = $1::uuid AND project_id = $2", id,
                 project.id, upload)
               .at(0)[0]
               .as<bool>();
  } else {
    same = r[0][kSummaryColumnCount].as<std::string>() == digest;
  }
  if (!same) {
    return MakeError(ErrorCode::kConflict, "run " + id + " already exists with different content",
                     "id");
  }
  return std::optional<IngestOutcome>(IngestOutcome{false, ReadSummary(r[0])});
}

// INSERT ... ON CONFLICT DO NOTHING RETURNING id, else the existing row's id. Two statements:
// one statement's snapshot would not see a row that a concurrent transaction committed
// while the insert waited for it.
int64_t InsertOrSelect(pqxx::work& tx, const std::string& insert,
                       const std::vector<const char*>& insert_params, const std::string& select,
                       const std::vector<const char*>& select_params) {
  pqxx::result r = tx.exec_params(insert, pqxx::prepare::make_dynamic_params(insert_params));
  if (r.empty()) r = tx.exec_params(select, pqxx::prepare::make_dynamic_params(select_params));
  return r.at(0)[0].as<int64_t>();
}

struct Ids {
  int64_t branch = 0, commit = 0, testbed = 0;
  std::vector<int64_t> benchmark;  // per results[i]
  std::vector<int64_t> metric;     // per results[i]
};

Result<void> UpsertMetadata(pqxx::work& tx, const Project& project, const wire::RunUpload& run,
                            Ids* ids) {
  const std::string pid = std::to_string(project.id);
  ids->branch =
      InsertOrSelect(tx,
                     "INSERT INTO branches (project_id, name) VALUES ($1::bigint, $2) "
                     "ON CONFLICT (project_id, name) DO NOTHING RETURNING id",
                     {pid.c_str(), run.branch.c_str()},
                     "SELECT id FROM branches WHERE project_id = $1::bigint AND name = $2",
                     {pid.c_str(), run.branch.c_str()});

  const wire::Commit& c = run.commit;
  const std::string parents = pgutil::TextArray(c.parents);
  ids->commit =
      InsertOrSelect(tx,
                     "INSERT INTO commits (project_id, sha, parents, author, author_time, subject) "
                     "VALUES ($1::bigint, $2, $3::text[], $4, $5::timestamptz, $6) "
                     "ON CONFLICT (project_id, sha) DO NOTHING RETURNING id",
                     {pid.c_str(), c.sha.c_str(), parents.c_str(), c.author.c_str(), OrNull(c.time),
                      c.subject.c_str()},
                     "SELECT id FROM commits WHERE project_id = $1::bigint AND sha = $2",
                     {pid.c_str(), c.sha.c_str()});
  // A commit first seen without details (e.g. as a parent) gets them from a later upload; the
  // WHERE leaves the row unlocked in the usual case where nothing is missing.
  tx.exec_params(
      "UPDATE commits SET parents = CASE WHEN cardinality(parents) = 0 THEN $2::text[] ELSE "
      "parents END, author = CASE WHEN author = '' THEN $3 ELSE author END, author_time = "
      "coalesce(author_time, $4::timestamptz), subject = CASE WHEN subject = '' THEN $5 ELSE "
      "subject END WHERE id = $1 AND ((cardinality(parents) = 0 AND cardinality($2::text[]) > "
      "0) OR (author = '' AND $3 <> '') OR (author_time IS NULL AND $4::timestamptz IS NOT "
      "NULL) OR (subject = '' AND $5 <> ''))",
      ids->commit, parents, c.author, OrNull(c.time), c.subject);

  ids->testbed = InsertOrSelect(
      tx,
      "INSERT INTO testbeds (project_id, name, fingerprint) VALUES ($1::bigint, $2, $3::jsonb) "
      "ON CONFLICT (project_id, name, fingerprint_hash) DO NOTHING RETURNING id",
      {pid.c_str(), run.testbed.name.c_str(), run.testbed.fingerprint_json.c_str()},
      "SELECT id FROM testbeds WHERE project_id = $1::bigint AND name = $2 AND "
      "fingerprint_hash = md5($3::jsonb::text)",
      {pid.c_str(), run.testbed.name.c_str(), run.testbed.fingerprint_json.c_str()});
  tx.exec_params(
      "UPDATE testbeds SET last_seen_at = now() WHERE id = $1 AND last_seen_at < now() - "
      "interval '1 minute'",
      ids->testbed);

  // Benchmarks and metrics: one statement each for the whole run, in key order so that
  // concurrent ingests lock shared rows in the same order (no deadlock).
  std::set<std::pair<std::string, std::string>> benchmarks;
  std::map<std::pair<std::string, std::string>, std::pair<Direction, size_t>> metrics;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const wire::ResultSeries& s = run.results[i];
    benchmarks.emplace(s.key.suite, s.key.benchmark);
    auto [it, inserted] =
        metrics.emplace(std::pair(s.key.metric, s.unit), std::pair(s.direction, i));
    if (!inserted && it->second.first != s.direction) {
      return InvalidArgument("metric " + s.key.metric + " (" + s.unit + ") is '" +
                                 std::string(DirectionName(it->second.first)) + "' in results[" +
                                 std::to_string(it->second.second) + "]",
                             "results[" + std::to_string(i) + "].direction");
    }
  }
  std::vector<std::string> suites, names;
  for (const auto& [suite, name] : benchmarks) {
    suites.push_back(suite);
    names.push_back(name);
  }
  const std::string suites_array = pgutil::TextArray(suites);
  const std::string names_array = pgutil::TextArray(names);
  tx.exec_params(
      "INSERT INTO benchmarks (project_id, suite, name) SELECT $1::bigint, s, n FROM "
      "unnest($2::text[], $3::text[]) AS k(s, n) ORDER BY s, n ON CONFLICT DO NOTHING",
      project.id, suites_array, names_array);
  std::map<std::pair<std::string, std::string>, int64_t> benchmark_ids;
  for (const pqxx::row& row : tx.exec_params(
           "SELECT b.id, b.suite, b.name FROM benchmarks b JOIN unnest($2::text[], $3::text[]) "
           "AS k(s, n) ON b.suite = k.s AND b.name = k.n WHERE b.project_id = $1",
           project.id, suites_array, names_array)) {
    benchmark_ids[{row[1].as<std::string>(), row[2].as<std::string>()}] = row[0].as<int64_t>();
  }

  std::vector<std::string> metric_names, units, directions;
  for (const auto& [key, value] : metrics) {
    metric_names.push_back(key.first);
    units.push_back(key.second);
    directions.emplace_back(DirectionName(value.first));
  }
  const std::string names_param = pgutil::TextArray(metric_names);
  const std::string units_param = pgutil::TextArray(units);
  tx.exec_params(
      "INSERT INTO metrics (project_id, name, unit, direction) SELECT $1::bigint, n, u, d FROM "
      "unnest($2::text[], $3::text[], $4::text[]) AS k(n, u, d) ORDER BY n, u "
      "ON CONFLICT DO NOTHING",
      project.id, names_param, units_param, pgutil::TextArray(directions));
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, std::string>> metric_ids;
  for (const pqxx::row& row : tx.exec_params(
           "SELECT m.id, m.name, m.unit, m.direction FROM metrics m JOIN unnest($2::text[], "
           "$3::text[]) AS k(n, u) ON m.name = k.n AND m.unit = k.u WHERE m.project_id = $1",
           project.id, names_param, units_param)) {
    metric_ids[{row[1].as<std::string>(), row[2].as<std::string>()}] = {row[0].as<int64_t>(),
                                                                        row[3].as<std::string>()};
  }

  for (size_t i = 0; i < run.results.size(); ++i) {
    const wire::ResultSeries& s = run.results[i];
    const auto& [metric_id, direction] = metric_ids.at({s.key.metric, s.unit});
    if (direction != DirectionName(s.direction)) {
      return InvalidArgument("metric " + s.key.metric + " (" + s.unit + ") is '" + direction +
                                 "' in this project, not '" +
                                 std::string(DirectionName(s.direction)) + "'",
                             "results[" + std::to_string(i) + "].direction");
    }
    ids->metric.push_back(metric_id);
    ids->benchmark.push_back(benchmark_ids.at({s.key.suite, s.key.benchmark}));
  }
  return {};
}

// All of a run's sample sets (migration 0004) in one statement: the values travel as one
// flat array with each set's offset and length, sliced server side.
Result<void> InsertSamples(pqxx::work& tx, const Project& project, const wire::RunUpload& run,
                           const Ids& ids) {
  std::vector<int> offset, length;
  std::vector<double> value;
  value.reserve(run.SampleCount());
  offset.reserve(run.results.size());
  length.reserve(run.results.size());
  for (const wire::ResultSeries& series : run.results) {
    offset.push_back(static_cast<int>(value.size()) + 1);
    length.push_back(static_cast<int>(series.values.size()));
    value.insert(value.end(), series.values.begin(), series.values.end());
  }
  if (run.results.empty()) return {};
  try {
    tx.exec_params(
        "INSERT INTO sample_sets (project_id, run_id, benchmark_id, metric_id, vals) "
        "SELECT $7, $1::uuid, k.b, k.m, ($5::float8[])[k.o : k.o + k.n - 1] "
        "FROM unnest($2::bigint[], $3::bigint[], $4::int[], $6::int[]) AS k(b, m, o, n)",
        run.id, pgutil::IntegerArray(ids.benchmark), pgutil::IntegerArray(ids.metric),
        pgutil::IntegerArray(offset), pgutil::Float8Array(value), pgutil::IntegerArray(length),
        project.id);
  } catch (const pqxx::check_violation&) {
    // Name the first value the schema refuses (non-finite); the decoder normally stops these.
    for (size_t i = 0; i < run.results.size(); ++i) {
      for (size_t j = 0; j < run.results[i].values.size(); ++j) {
        if (!std::isfinite(run.results[i].values[j])) {
          return InvalidArgument("not a finite number", "results[" + std::to_string(i) +
                                                            "].values[" + std::to_string(j) + "]");
        }
      }
    }
    throw;
  }
  return {};
}

// Puts the values of every series back into an upload stored without them (migration 0003),
// from its sample sets.
Result<std::string> FillValues(pqxx::work& tx, const Project& project, const std::string& run_id,
                               const std::string& upload_text) {
  using SeriesOfUnit = std::pair<SeriesKey, std::string>;  // a second unit is another series
  std::map<SeriesOfUnit, std::vector<double>> values;
  for (const pqxx::row& row : tx.exec_params(
           "SELECT b.suite, b.name, m.name, m.unit, s.vals::text FROM sample_sets s "
           "JOIN benchmarks b ON b.id = s.benchmark_id JOIN metrics m ON m.id = s.metric_id "
           "WHERE s.project_id = $2 AND s.run_id = $1::uuid",
           run_id, project.id)) {
    SeriesOfUnit key{{row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>()},
                     row[3].as<std::string>()};
    values[std::move(key)] = pgutil::ParseFloat8Array(row[4].as<std::string>());
  }
  nlohmann::json upload = nlohmann::json::parse(upload_text, nullptr, false);
  if (upload.is_discarded() || !upload.contains("results")) {
    return MakeError(ErrorCode::kInternal, "stored upload of run " + run_id + " is not JSON");
  }
  for (auto& series : upload["results"]) {
    const SeriesOfUnit key{
        {series.value("suite", ""), series.value("benchmark", ""), series.value("metric", "")},
        series.value("unit", "")};
    auto it = values.find(key);
    if (it == values.end()) {
      return MakeError(ErrorCode::kInternal, "run " + run_id + " has no samples for " +
                                                 key.first.benchmark + " " + key.first.metric);
    }
    series["values"] = it->second;
  }
  return upload.dump();
}

}  // namespace

Result<IngestOutcome> PgStore::IngestRun(const Project& project, const wire::RunUpload& run) {
  if (!wire::IsUuid(run.id, wire::HexCase::kLower))
    return InvalidArgument("not a lowercase UUID", "id");
  if (run.branch.empty()) return InvalidArgument("required", "branch");
  const std::string upload = wire::EncodeRunUpload(run);
  const std::string digest = pgutil::Sha256Hex(upload);
  // The stored upload leaves the values out: they are in sample_sets (migrations 0003, 0004).
  wire::RunUpload shell = run;
  for (auto& series : shell.results) series.values.clear();
  const std::string stored_upload = wire::EncodeRunUpload(shell);
  return pool_.WithTransaction<IngestOutcome>([&](pqxx::work& tx) -> Result<IngestOutcome> {
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2))", kRunLockClass, run.id);
    Result<std::optional<IngestOutcome>> existing =
        ExistingRun(tx, project, run.id, digest, upload);
    if (!existing) return tl::unexpected(existing.error());
    if (*existing) return **existing;

    Ids ids;
    if (Result<void> ok = UpsertMetadata(tx, project, run, &ids); !ok) {
      return tl::unexpected(ok.error());
    }
    const std::string pr = run.ci.pr ? std::to_string(*run.ci.pr) : std::string();
    pqxx::result inserted = tx.exec_params(
        "INSERT INTO runs (id, project_id, branch_id, commit_id, testbed_id, merge_base_sha, "
        "target_branch, ci, pr, started_at, finished_at, upload, sample_count, upload_sha256) "
        "VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, ($8::jsonb) -> 'ci', $9::bigint, "
        "$10::timestamptz, $11::timestamptz, $8::jsonb, $12, $13) "
        "ON CONFLICT (project_id, id) DO NOTHING RETURNING id",
        run.id, project.id, ids.branch, ids.commit, ids.testbed,
        run.merge_base ? run.merge_base->c_str() : nullptr, run.target_branch, stored_upload,
        run.ci.pr ? pr.c_str() : nullptr, OrNull(run.started_at), OrNull(run.finished_at),
        static_cast<int64_t>(run.SampleCount()), digest);
    if (inserted.empty()) {
      // Only a writer that skipped the advisory lock can get here; answer as a re-post would.
      existing = ExistingRun(tx, project, run.id, digest, upload);
      if (!existing) return tl::unexpected(existing.error());
      if (*existing) return **existing;
      return MakeError(ErrorCode::kInternal, "run " + run.id + " vanished during ingest");
    }
    if (Result<void> ok = InsertSamples(tx, project, run, ids); !ok) {
      return tl::unexpected(ok.error());
    }

    pqxx::result stored = tx.exec_params("SELECT " + SummaryColumns() + SummaryJoins() +
                                             "WHERE r.id = $1::uuid AND r.project_id = $2",
                                         run.id, project.id);
    return IngestOutcome{true, ReadSummary(stored.at(0))};
  });
}

Result<RunPage> PgStore::ListRuns(const Project& project, const RunFilter& filter) {
  if (filter.limit < 1 || filter.limit > 1000) {
    return InvalidArgument("must be between 1 and 1000", "limit");
  }
  if (!filter.since.empty() && !pgutil::IsStorableRfc3339(filter.since)) {
    return InvalidArgument("not an RFC 3339 timestamp", "since");
  }
  if (!filter.until.empty() && !pgutil::IsStorableRfc3339(filter.until)) {
    return InvalidArgument("not an RFC 3339 timestamp", "until");
  }
  // The cursor is hex("<created_at with microseconds>|<id>") of the last run of a page.
  std::string cursor_time, cursor_id;
  if (!filter.cursor.empty()) {
    std::string decoded;
    const size_t bar =
        pgutil::HexDecode(filter.cursor, &decoded) ? decoded.find('|') : std::string::npos;
    if (bar != std::string::npos) {
      cursor_time = decoded.substr(0, bar);
      cursor_id = decoded.substr(bar + 1);
    }
    if (!pgutil::IsStorableRfc3339(cursor_time) ||
        !wire::IsUuid(cursor_id, wire::HexCase::kLower)) {
      return InvalidArgument("not a cursor from a previous page", "cursor");
    }
  }
  return pool_.WithTransaction<RunPage>([&](pqxx::work& tx) -> Result<RunPage> {
    pqxx::result rows = tx.exec_params(
        "SELECT " + SummaryColumns() +
            ", to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')" +
            SummaryJoins() +
            "WHERE r.project_id = $1 AND ($2::text IS NULL OR b.name = $2) "
            "AND ($3::text IS NULL OR c.sha = $3) AND ($4::text IS NULL OR t.name = $4) "
            "AND ($5::timestamptz IS NULL OR r.created_at >= $5::timestamptz) "
            "AND ($6::timestamptz IS NULL OR r.created_at <= $6::timestamptz) "
            "AND ($7::timestamptz IS NULL OR (r.created_at, r.id) < ($7::timestamptz, $8::uuid)) "
            "ORDER BY r.created_at DESC, r.id DESC LIMIT $9",
        project.id, OrNull(filter.branch), OrNull(filter.commit), OrNull(filter.testbed),
        OrNull(filter.since), OrNull(filter.until), OrNull(cursor_time), OrNull(cursor_id),
        filter.limit + 1);
    RunPage page;
    const size_t shown = std::min(rows.size(), static_cast<size_t>(filter.limit));
    for (size_t i = 0; i < shown; ++i) page.runs.push_back(ReadSummary(rows[i]));
    if (rows.size() > shown) {
      const pqxx::row& last = rows[shown - 1];
      page.next_cursor = pgutil::HexEncode(last[kSummaryColumnCount].as<std::string>() + "|" +
                                           last[0].as<std::string>());
    }
    return page;
  });
}

Result<StoredRun> PgStore::GetRun(const Project& project, const std::string& run_id) {
  if (!wire::IsUuid(run_id, wire::HexCase::kLower)) {
    return MakeError(ErrorCode::kNotFound, "no run " + run_id + " in project " + project.name,
                     "id");
  }
  struct Row {
    RunSummary summary;
    std::string upload;
    std::optional<VerdictRef> verdict;
  };
  Result<Row> row = pool_.WithTransaction<Row>([&](pqxx::work& tx) -> Result<Row> {
    // The newest verdict (as LatestVerdict orders them) rides along: the dashboard's run page
    // asks for the verdict only when there is one.
    pqxx::result r = tx.exec_params(
        "SELECT " + SummaryColumns() + ", r.upload::text, r.upload_sha256 IS NOT NULL, lv.id, " +
            "lv.outcome, " + pgutil::Rfc3339Sql("lv.created_at") + SummaryJoins() +
            "LEFT JOIN LATERAL (SELECT v.id, v.outcome, v.created_at FROM verdicts v"
            " WHERE v.project_id = r.project_id AND v.run_id = r.id ORDER BY v.created_at DESC, "
            "v.id DESC LIMIT 1) lv ON true "
            "WHERE r.id = $1::uuid AND r.project_id = $2",
        run_id, project.id);
    if (r.empty()) {
      return MakeError(ErrorCode::kNotFound, "no run " + run_id + " in project " + project.name,
                       "id");
    }
    Row out{ReadSummary(r[0]), r[0][kSummaryColumnCount].as<std::string>(), std::nullopt};
    if (r[0][kSummaryColumnCount + 1].as<bool>()) {
      Result<std::string> filled = FillValues(tx, project, run_id, out.upload);
      if (!filled) return tl::unexpected(filled.error());
      out.upload = std::move(*filled);
    }
    if (!r[0][kSummaryColumnCount + 2].is_null()) {
      out.verdict = VerdictRef{r[0][kSummaryColumnCount + 2].as<int64_t>(),
                               r[0][kSummaryColumnCount + 3].as<std::string>(),
                               r[0][kSummaryColumnCount + 4].as<std::string>()};
    }
    return out;
  });
  if (!row) return tl::unexpected(row.error());
  // What was stored passed the decoder with the server's limits, whatever they were then.
  wire::DecodeLimits limits;
  limits.max_results = SIZE_MAX;
  limits.max_values = SIZE_MAX;
  limits.max_string = SIZE_MAX;
  limits.max_depth = 10000;
  Result<wire::RunUpload> upload = wire::DecodeRunUpload(row->upload, limits);
  if (!upload) {
    return MakeError(ErrorCode::kInternal, "stored upload of run " + run_id +
                                               " does not decode: " + upload.error().ToString());
  }
  return StoredRun{std::move(row->summary), std::move(*upload), std::move(row->verdict)};
}

}  // namespace perfwarden::store
