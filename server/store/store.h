// SPDX-License-Identifier: Apache-2.0
// The store's narrow interfaces: what the use cases and HTTP handlers need from persistence,
// with plain value types and Result<T>. PostgreSQL implementations live beside this file
// (pg_*_store.{h,cc}, libpqxx only there); tests of the API layer may use in-memory fakes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "wire/run_upload.h"

namespace perfwarden::store {

struct Project {
  int64_t id = 0;
  std::string name;
  bool public_read = false;
  std::string created_at;  // RFC 3339 (UTC)
  // Branches (names or shell patterns) that only a token with the ingest scope may write;
  // nullopt: the server's default (the history's tracked branches).
  std::optional<std::vector<std::string>> protected_branches = std::nullopt;
};

// PATCH /api/v1/projects/{project}: what to change (absent: unchanged).
struct ProjectUpdate {
  std::optional<bool> public_read;
  // Set: replace the list; a set nullopt inside: back to the server's default.
  std::optional<std::optional<std::vector<std::string>>> protected_branches;
};

struct TokenRecord {
  int64_t id = 0;
  std::optional<int64_t> project_id;  // nullopt: not bound to a project (admin tokens)
  std::string project;                // project name, "" when unbound
  std::string name;
  std::string prefix;               // first characters of the token, for recognition
  std::vector<std::string> scopes;  // "ingest", "read", "admin", "triage"
  std::string created_at;
  bool revoked = false;
};

struct NewToken {
  std::optional<int64_t> project_id;
  std::string name;
  std::string prefix;
  std::string token_hash;  // lowercase hex SHA-256 of the token (never the token)
  std::vector<std::string> scopes;
};

class ProjectStore {
 public:
  virtual ~ProjectStore() = default;
  // kConflict when the name exists.
  virtual Result<Project> CreateProject(
      const std::string& name, bool public_read,
      const std::optional<std::vector<std::string>>& protected_branches = std::nullopt) = 0;
  // kNotFound when absent; the project as it is after the change.
  virtual Result<Project> UpdateProject(const std::string& name, const ProjectUpdate& update) = 0;
  virtual Result<std::vector<Project>> ListProjects() = 0;
  // kNotFound when absent.
  virtual Result<Project> GetProject(const std::string& name) = 0;
};

class TokenStore {
 public:
  virtual ~TokenStore() = default;
  virtual Result<TokenRecord> CreateToken(const NewToken& token) = 0;
  // The token whose hash matches (revoked ones included: the caller refuses them);
  // kNotFound when none. Updates last_used_at.
  virtual Result<TokenRecord> FindTokenByHash(const std::string& token_hash) = 0;
  // All tokens, or those of one project.
  virtual Result<std::vector<TokenRecord>> ListTokens(std::optional<int64_t> project_id) = 0;
  virtual Result<bool> RevokeToken(int64_t id) = 0;  // false when no such token
  // Whether any unrevoked token has the admin scope (first start creates one when not).
  virtual Result<bool> HasAdminToken() = 0;
};

struct RunSummary {
  std::string id;
  std::string project;
  std::string branch;
  std::string commit_sha;
  std::string testbed;
  int64_t testbed_id = 0;
  std::optional<int64_t> pr;
  std::string started_at;  // "" when unknown
  std::string finished_at;
  std::string created_at;  // when the server stored it
  int64_t sample_count = 0;
  // The upload's runner_version ("" when it had none); read by GetRunContext only (for the
  // verdict), so that run lists need not open each stored upload.
  std::string runner_version;
};

struct IngestOutcome {
  bool created = false;  // false: the same run id was already stored (idempotent re-post)
  RunSummary run;
};

struct RunFilter {
  std::string branch;   // "" = any
  std::string commit;   // full sha, "" = any
  std::string testbed;  // "" = any
  std::string since;    // RFC 3339 on created_at, "" = unbounded
  std::string until;
  int limit = 50;      // 1..1000
  std::string cursor;  // opaque, from the previous page's next_cursor
};

struct RunPage {
  std::vector<RunSummary> runs;  // newest first
  std::string next_cursor;       // "" when this is the last page
};

// The newest verdict of a run, named (the whole verdict: VerdictStore::LatestVerdict).
struct VerdictRef {
  int64_t id = 0;
  std::string outcome;
  std::string created_at;
};

struct StoredRun {
  RunSummary summary;
  wire::RunUpload upload;                    // as stored (canonical), results include every sample
  std::optional<VerdictRef> latest_verdict;  // GetRun fills it; nullopt when it has none
};

class RunStore {
 public:
  virtual ~RunStore() = default;
  // Stores a whole run in one transaction: branch, commit (and parents), testbed (by name and
  // fingerprint), benchmarks, metrics and every sample. The run id makes it idempotent: the
  // same id posted again stores nothing and returns created = false with the stored run;
  // the same id with a different body is kConflict. Concurrent posts of one id store it once.
  virtual Result<IngestOutcome> IngestRun(const Project& project, const wire::RunUpload& run) = 0;
  virtual Result<RunPage> ListRuns(const Project& project, const RunFilter& filter) = 0;
  // kNotFound when the run is not in this project.
  virtual Result<StoredRun> GetRun(const Project& project, const std::string& run_id) = 0;
};

struct MetricInfo {
  std::string name;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
};

struct BenchmarkInfo {
  std::string suite;
  std::string name;
  std::vector<MetricInfo> metrics;  // the metrics stored for it, by name and unit
};

// A branch or a testbed name (all its fingerprints) with its runs.
struct NamedRuns {
  std::string name;
  int64_t runs = 0;
  std::string last_run_at;  // created_at of its newest run; "" when it has none
};

struct SeriesQuery {
  std::string suite;      // "" = the only suite with this benchmark name (kInvalidArgument if
                          // ambiguous)
  std::string benchmark;  // required
  std::string metric;     // required
  std::string unit;       // "" = the only unit of this metric
  std::string branch;     // required
  std::string testbed;    // "" = any testbed (all fingerprints)
  std::string since;      // RFC 3339 on run created_at
  std::string until;
  int limit = 1000;  // most recent commits
};

// All repetitions of one series at one commit (pooled over the runs at that commit).
struct SeriesPoint {
  std::string commit_sha;
  std::string subject;
  std::string author;
  std::string author_time;   // "" when unknown
  std::string first_run_at;  // created_at of the earliest run at this commit
  std::vector<std::string> run_ids;
  std::vector<double> values;
};

struct Series {
  BenchmarkInfo benchmark;
  MetricInfo metric;
  std::string branch;
  std::string testbed;              // "" when any
  std::vector<SeriesPoint> points;  // oldest first, by first run time
};

class SeriesStore {
 public:
  virtual ~SeriesStore() = default;
  virtual Result<std::vector<BenchmarkInfo>> ListBenchmarks(const Project& project) = 0;
  virtual Result<std::vector<MetricInfo>> ListMetrics(const Project& project) = 0;
  // Newest run first (names without runs last, by name).
  virtual Result<std::vector<NamedRuns>> ListBranches(const Project& project) = 0;
  virtual Result<std::vector<NamedRuns>> ListTestbeds(const Project& project) = 0;
  virtual Result<Series> GetSeries(const Project& project, const SeriesQuery& query) = 0;
};

// One series' repetitions, pooled over one or more runs in the order the runs were named.
struct SampleSet {
  SeriesKey key;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<double> values;
};

// Where a run sits in history: what baseline selection needs (from its upload).
struct RunContext {
  RunSummary summary;
  std::string target_branch;          // "" when the upload named none
  std::string merge_base;             // "" when none
  std::vector<std::string> ancestry;  // as uploaded (docs/wire-format.md)
  std::vector<std::string> parents;   // the commit's parents
};

struct BaselineChoice {
  std::string commit_sha;
  std::string branch;
  std::string testbed;
  // "merge_base", "ancestor" (nearest first-parent ancestor of the merge-base with results),
  // "previous_commit" (a tracked-branch run: nearest first-parent ancestor with results),
  // "latest_before" (no ancestry uploaded: the branch's latest earlier commit with results).
  std::string selection;
  int distance = 0;  // first-parent steps from the merge-base (or from the commit's parent)
  std::vector<std::string> run_ids;  // oldest first
};

struct NewVerdict {
  std::string run_id;
  std::vector<std::string> contender_run_ids;
  std::vector<std::string> baseline_run_ids;
  std::string outcome;  // pass, regression, no_baseline, noisy_environment (migration 0009)
  std::string algorithm_version;
  std::string parameters_json = "{}";
  std::string baseline_json;  // "" for none
  std::string summary_json = "{}";
  std::string results_json = "[]";
  // A paired verdict's measurement (wire/paired.h, as EncodePairedMeasurement writes it), which
  // replays it; "" for a verdict judged against stored runs.
  std::string measurement_json;
};

struct StoredVerdict {
  int64_t id = 0;
  std::string created_at;
  NewVerdict verdict;
  // SaveVerdict only: an identical answer to the same question was already stored (a
  // concurrent request's), and this is it; nothing new was stored.
  bool reused = false;
};

class VerdictStore {
 public:
  virtual ~VerdictStore() = default;
  // kNotFound when the run is not in this project.
  virtual Result<RunContext> GetRunContext(const Project& project, const std::string& run_id) = 0;
  // The baseline of a run (docs/api.md, "Verdicts"), on the same testbed (name and
  // fingerprint); nullopt when there is none, with `why_none` saying what was looked for.
  virtual Result<std::optional<BaselineChoice>> FindBaseline(const Project& project,
                                                             const RunContext& run,
                                                             std::string* why_none) = 0;
  // The sample sets of these runs (all in `project`, else kNotFound), pooled per series in the
  // order of `run_ids`.
  virtual Result<std::vector<SampleSet>> GetSampleSets(const Project& project,
                                                       const std::vector<std::string>& run_ids) = 0;
  virtual Result<StoredVerdict> SaveVerdict(const Project& project, const NewVerdict& verdict) = 0;
  // The newest verdict of a run; nullopt when it has none.
  virtual Result<std::optional<StoredVerdict>> LatestVerdict(const Project& project,
                                                             const std::string& run_id) = 0;
  // Verdict `id` of the run; nullopt when the run has no verdict of that id.
  virtual Result<std::optional<StoredVerdict>> GetVerdict(const Project& project,
                                                          const std::string& run_id,
                                                          int64_t id) = 0;
};

}  // namespace perfwarden::store
