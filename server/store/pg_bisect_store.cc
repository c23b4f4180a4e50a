// SPDX-License-Identifier: Apache-2.0
// PgStore: remote bisects (bisect_store.h) and reading one bisect with its steps. Lock order:
// a transaction that waits for locks takes the job row before its steps (CompleteStep,
// CancelBisect); ClaimStep never waits (SKIP LOCKED on both rows) and HeartbeatStep locks only
// its step, so no two of them can deadlock.
#include <nlohmann/json.hpp>

#include "core/constant_time.h"
#include "server/store/bisect_store.h"
#include "server/store/pg_history_rows.h"
#include "server/store/pg_run_rows.h"
#include "server/store/pg_stores.h"
#include "server/store/pg_util.h"

namespace perfwarden::store {
namespace {

using pgutil::OrNull;
using pgutil::Rfc3339Sql;
using pgutil::Text;

// The join that scopes a step to its project's bisects.
constexpr const char* kStepOfProject =
    " FROM bisect_steps s JOIN bisect_jobs j ON j.id = s.bisect_id WHERE s.id = $1 AND "
    "j.project_id = $2 ";

// The open steps an agent of the project's testbed may take: queued, or claimed by an agent
// whose lease ran out. $1 project, $2 testbed, $3 kMaxStepAttempts.
constexpr const char* kOpenStepsOfTestbed =
    " FROM bisect_steps s JOIN bisect_jobs j ON j.id = s.bisect_id WHERE j.project_id = $1 AND "
    "j.testbed_name = $2 AND j.state IN ('pending', 'running') AND s.state IN ('queued', "
    "'claimed') ";

// The first key of pg_advisory_xact_lock(int, int) for a project's testbed's bisects ("pwbs").
constexpr int kBisectLockClass = 0x70776273;

// kConflict when the project has `max_open` bisects pending or running on `testbed` (0: no
// bound). Counted under the testbed's lock, held to the commit, so that two posts cannot both
// see room for one; a hash collision only makes two testbeds wait for each other.
Result<void> CheckOpenBisects(pqxx::work& tx, const Project& project, const std::string& testbed,
                              int64_t max_open) {
  if (max_open <= 0) return {};
  tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2::bigint::text || '/' || $3))",
                 kBisectLockClass, project.id, testbed);
  const int64_t open = tx.exec_params(
                             "SELECT count(*) FROM bisect_jobs WHERE project_id = $1 AND "
                             "testbed_name = $2 AND state IN ('pending', 'running')",
                             project.id, testbed)[0][0]
                           .as<int64_t>();
  if (open < max_open) return {};
  return MakeError(ErrorCode::kConflict,
                   "testbed " + testbed + " has " + std::to_string(open) +
                       " remote bisects pending or running, the limit (open_bisects_per_testbed " +
                       std::to_string(max_open) + "); cancel one or wait for one to finish",
                   "testbed");
}

bool Active(const std::string& job_state) {
  return job_state == "pending" || job_state == "running";
}

Result<BisectRecord> ReadBisect(pqxx::transaction_base& tx, const Project& project, int64_t id) {
  pqxx::result r = tx.exec_params(
      "SELECT id, alert_id, good_sha, bad_sha, coalesce(culprit_sha, ''), state, created_by, " +
          Rfc3339Sql("created_at") +
          ", coalesce(report::text, ''), coalesce(testbed_name, ''), coalesce(request::text, ''), "
          "coalesce(error, ''), " +
          Rfc3339Sql("finished_at") + " FROM bisect_jobs WHERE id = $1 AND project_id = $2",
      id, project.id);
  if (r.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     "no bisect " + std::to_string(id) + " in project " + project.name, "id");
  }
  BisectRecord out;
  out.id = r[0][0].as<int64_t>();
  if (!r[0][1].is_null()) out.alert_id = r[0][1].as<int64_t>();
  out.good_sha = Text(r[0][2]);
  out.bad_sha = Text(r[0][3]);
  out.culprit_sha = Text(r[0][4]);
  out.state = Text(r[0][5]);
  out.created_by = Text(r[0][6]);
  out.created_at = Text(r[0][7]);
  out.report_json = Text(r[0][8]);
  out.testbed = Text(r[0][9]);
  out.request_json = Text(r[0][10]);
  out.error = Text(r[0][11]);
  out.finished_at = Text(r[0][12]);
  if (out.testbed.empty()) return out;  // a posted local answer has no steps
  pqxx::result steps = tx.exec_params(
      "SELECT id, ordinal, state, coalesce(agent, ''), attempts, request::text, "
      "coalesce(result::text, ''), coalesce(builds, 0), coalesce(runs, 0), " +
          Rfc3339Sql("lease_expires_at") + ", coalesce(last_error, ''), " +
          Rfc3339Sql("created_at") + ", " + Rfc3339Sql("finished_at") +
          ", reused_from FROM bisect_steps WHERE bisect_id = $1 ORDER BY ordinal",
      id);
  for (const pqxx::row& s : steps) {
    BisectStepRecord step;
    step.id = s[0].as<int64_t>();
    step.ordinal = s[1].as<int64_t>();
    step.state = Text(s[2]);
    step.agent = Text(s[3]);
    step.attempts = s[4].as<int64_t>();
    step.request_json = Text(s[5]);
    step.result_json = Text(s[6]);
    step.builds = s[7].as<int64_t>();
    step.runs = s[8].as<int64_t>();
    step.lease_expires_at = Text(s[9]);
    step.last_error = Text(s[10]);
    step.created_at = Text(s[11]);
    step.finished_at = Text(s[12]);
    if (!s[13].is_null()) step.reused_from = s[13].as<int64_t>();
    out.steps.push_back(std::move(step));
  }
  return out;
}

// kConflict unless the step is claimed under `token_hash` (compared in constant time).
Result<void> CheckHeld(int64_t step_id, const std::string& state, const pqxx::field& stored_hash,
                       const std::string& token_hash) {
  const bool held = state == "claimed" && !stored_hash.is_null() &&
                    ConstantTimeEquals(stored_hash.as<std::string>(), token_hash);
  if (held) return {};
  std::string why = state == "claimed" ? "another agent claimed it after this claim's lease ran out"
                                       : "it is " + state;
  return MakeError(ErrorCode::kConflict,
                   "step " + std::to_string(step_id) + " is no longer held by this claim: " + why,
                   "token");
}

// Fails the job of a step that failed: the step keeps its last error, the job says why.
void FailStep(pqxx::work& tx, int64_t bisect_id, int64_t step_id, const std::string& error) {
  tx.exec_params(
      "UPDATE bisect_steps SET state = 'failed', token_hash = NULL, lease_expires_at = NULL, "
      "last_error = $2, finished_at = now() WHERE id = $1",
      step_id, error);
  tx.exec_params(
      "UPDATE bisect_jobs SET state = 'failed', error = $2, updated_at = now(), "
      "finished_at = now() WHERE id = $1",
      bisect_id, error);
}

// A measurement another bisect of the project already made on the same testbed that answers
// `step_request` of this bisect: the same commits (by sha, in the same order) side by side, the
// same repetitions, benchmarks, suite, metric and build. A measurement stands on its own (its
// commits measured interleaved), so it answers the same request of any bisect whatever its
// range. Only original measurements qualify (not reused copies), and none this bisect already
// reused, so that no sample is counted twice. The newest bisect's measurements come first, in the
// order it made them: a bisect that asked the same request twice (a side measured again with the
// repetitions doubled) gets them back in that order, so that its replay decides as it did.
// Returns the step and its result with this bisect's request (positions differ between ranges).
struct Reusable {
  int64_t step_id = 0;
  std::string result_json;
};
std::optional<Reusable> FindReusable(pqxx::work& tx, int64_t bisect_id,
                                     const std::string& job_request_json,
                                     const std::string& step_request_json) {
  using nlohmann::json;
  const json job = json::parse(job_request_json, nullptr, false);
  const json step = json::parse(step_request_json, nullptr, false);
  if (!job.is_object() || !step.is_object() || !job.contains("commits")) return std::nullopt;
  const json& commits = job["commits"];
  std::vector<std::string> shas;
  for (const json& t : step.value("targets", json::array())) {
    if (!t.is_number_unsigned() || t.get<std::size_t>() >= commits.size()) return std::nullopt;
    shas.push_back(commits[t.get<std::size_t>()].value("sha", ""));
  }
  pqxx::result r = tx.exec_params(
      "SELECT s.id, jsonb_set(s.result, '{request}', $6::jsonb)::text "
      "FROM bisect_steps s JOIN bisect_jobs j ON j.id = s.bisect_id "
      "JOIN bisect_jobs me ON me.id = $1 "
      "WHERE j.project_id = me.project_id AND j.testbed_name = me.testbed_name AND j.id <> me.id "
      "AND s.state = 'done' AND s.reused_from IS NULL AND s.result IS NOT NULL "
      "AND s.request -> 'repetitions' = $6::jsonb -> 'repetitions' "
      "AND j.request -> 'benchmarks' = $2::jsonb AND j.request -> 'suite' = $3::jsonb "
      "AND j.request -> 'metric' = $4::jsonb AND j.request -> 'build' = $5::jsonb "
      "AND ARRAY(SELECT j.request -> 'commits' -> (t.v::int) ->> 'sha' "
      "          FROM jsonb_array_elements_text(s.request -> 'targets') WITH ORDINALITY "
      "          AS t(v, i) ORDER BY t.i) = $7::text[] "
      "AND s.id NOT IN (SELECT reused_from FROM bisect_steps WHERE bisect_id = $1 "
      "                 AND reused_from IS NOT NULL) "
      "ORDER BY j.created_at DESC, j.id DESC, s.ordinal, s.id LIMIT 1",
      bisect_id, job.value("benchmarks", json::array()).dump(), job.value("suite", json("")).dump(),
      job.value("metric", json("")).dump(), job.value("build", json("")).dump(), step_request_json,
      pgutil::TextArray(shas));
  if (r.empty()) return std::nullopt;
  return Reusable{r[0][0].as<int64_t>(), Text(r[0][1])};
}

// Finishes the job as the replay's decision says.
Result<void> Finish(pqxx::work& tx, int64_t bisect_id, const BisectDecision& decision) {
  if (decision.state != "succeeded" && decision.state != "failed") {
    return MakeError(ErrorCode::kInternal, "the replay gave state " + decision.state);
  }
  // `steps` mirrors the report's probes, as for a posted local answer.
  tx.exec_params(
      "UPDATE bisect_jobs SET state = $2, report = $3::jsonb, culprit_sha = $4, error = $5, "
      "steps = coalesce($3::jsonb -> 'probes', '[]'), updated_at = now(), finished_at = now() "
      "WHERE id = $1",
      bisect_id, decision.state, OrNull(decision.report_json), OrNull(decision.culprit_sha),
      OrNull(decision.error));
  return {};
}

// Queues the measurement `request_json` as step `ordinal`, unless a measurement made before
// answers it (FindReusable): then the step is done at once from it, the replay decides again,
// and so on until a step must be measured or the bisect is finished. `input` is the log so far.
Result<void> Advance(pqxx::work& tx, int64_t bisect_id, int64_t ordinal, std::string request_json,
                     BisectReplayInput& input, const BisectReplay& replay) {
  for (;; ++ordinal) {
    if (request_json.empty()) {
      return MakeError(ErrorCode::kInternal, "the replay gave no next measurement");
    }
    const std::optional<Reusable> reused =
        FindReusable(tx, bisect_id, input.request_json, request_json);
    if (!reused) {
      tx.exec_params(
          "INSERT INTO bisect_steps (bisect_id, ordinal, request) VALUES ($1, $2, $3::jsonb)",
          bisect_id, ordinal, request_json);
      tx.exec_params("UPDATE bisect_jobs SET updated_at = now() WHERE id = $1", bisect_id);
      return {};
    }
    tx.exec_params(
        "INSERT INTO bisect_steps (bisect_id, ordinal, request, state, result, builds, runs, "
        "reused_from, finished_at) VALUES ($1, $2, $3::jsonb, 'done', $4::jsonb, 0, 0, $5, now())",
        bisect_id, ordinal, request_json, reused->result_json, reused->step_id);
    input.done.push_back({ordinal, request_json, reused->result_json, 0, 0});
    Result<BisectDecision> decision = replay(input);
    if (!decision) return tl::unexpected(decision.error());
    if (decision->state != "running") return Finish(tx, bisect_id, *decision);
    request_json = decision->next_request_json;
  }
}

}  // namespace

Result<BisectRecord> PgStore::GetBisect(const Project& project, int64_t id) {
  // One snapshot: the job and its steps must agree (a step reported in between would not).
  return pool_.WithTransaction<BisectRecord>(
      [&](pqxx::work& tx) -> Result<BisectRecord> { return ReadBisect(tx, project, id); });
}

Result<BisectRecord> PgStore::QueueRemoteBisect(const Project& project,
                                                const NewRemoteBisect& bisect,
                                                const BisectReplay& replay) {
  return pool_.WithTransaction<BisectRecord>([&](pqxx::work& tx) -> Result<BisectRecord> {
    if (bisect.alert_id && tx.exec_params("SELECT 1 FROM alerts WHERE id = $1 AND project_id = $2",
                                          *bisect.alert_id, project.id)
                               .empty()) {
      return MakeError(
          ErrorCode::kNotFound,
          "no alert " + std::to_string(*bisect.alert_id) + " in project " + project.name,
          "alert_id");
    }
    // One bisect per alert group: a group that has one (not failed or cancelled) answers it.
    int64_t group = 0;
    if (bisect.alert_id) {
      if (auto existing = pghistory::GroupBisect(tx, project.id, *bisect.alert_id, &group)) {
        auto out = ReadBisect(tx, project, *existing);
        if (out) out->existing = true;
        return out;
      }
    }
    if (auto room = CheckOpenBisects(tx, project, bisect.testbed, bisect.max_open_on_testbed);
        !room) {
      return tl::unexpected(room.error());
    }
    const std::string alert = bisect.alert_id ? std::to_string(*bisect.alert_id) : "";
    pqxx::result r = tx.exec_params(
        "INSERT INTO bisect_jobs (project_id, alert_id, good_sha, bad_sha, state, created_by, "
        "testbed_name, request, group_id) VALUES ($1, $2::bigint, $3, $4, 'pending', $5, $6, "
        "$7::jsonb, nullif($8, 0)) RETURNING id",
        project.id, OrNull(alert), bisect.good_sha, bisect.bad_sha, bisect.created_by,
        bisect.testbed, bisect.request_json, group);
    const int64_t id = r[0][0].as<int64_t>();
    BisectReplayInput input;
    input.bisect_id = id;
    input.request_json = bisect.request_json;
    if (auto advanced = Advance(tx, id, 0, bisect.first_step_json, input, replay); !advanced) {
      return tl::unexpected(advanced.error());
    }
    return ReadBisect(tx, project, id);
  });
}

Result<std::optional<ClaimedStep>> PgStore::ClaimStep(const Project& project,
                                                      const StepClaimRequest& claim) {
  return pool_.WithTransaction<std::optional<ClaimedStep>>(
      [&](pqxx::work& tx) -> Result<std::optional<ClaimedStep>> {
        // Steps whose agents keep dying fail their job instead of being handed out again.
        tx.exec_params(
            std::string("WITH dead AS (SELECT s.id AS step_id, s.bisect_id, s.ordinal, "
                        "s.attempts, coalesce(s.agent, '') AS agent") +
                kOpenStepsOfTestbed +
                "AND s.state = 'claimed' AND s.lease_expires_at < now() AND s.attempts >= $3 "
                "FOR UPDATE OF s, j SKIP LOCKED), "
                "failed AS (UPDATE bisect_steps s SET state = 'failed', token_hash = NULL, "
                "lease_expires_at = NULL, finished_at = now(), last_error = "
                "coalesce(s.last_error || '; ', '') || 'the lease of agent ' || dead.agent || "
                "' ran out' FROM dead WHERE s.id = dead.step_id RETURNING s.id) "
                "UPDATE bisect_jobs j SET state = 'failed', updated_at = now(), finished_at = "
                "now(), error = format('step %s: the agents'' leases ran out %s times (an agent "
                "died or hung while measuring it)', dead.ordinal, dead.attempts) FROM dead "
                "WHERE j.id = dead.bisect_id",
            project.id, claim.testbed, kMaxStepAttempts);
        pqxx::result candidate = tx.exec_params(
            std::string("SELECT s.id, s.bisect_id") + kOpenStepsOfTestbed +
                "AND (s.state = 'queued' OR (s.lease_expires_at < now() AND s.attempts < $3)) "
                "ORDER BY s.id LIMIT 1 FOR UPDATE OF s, j SKIP LOCKED",
            project.id, claim.testbed, kMaxStepAttempts);
        if (candidate.empty()) return std::nullopt;
        ClaimedStep out;
        out.id = candidate[0][0].as<int64_t>();
        out.bisect_id = candidate[0][1].as<int64_t>();
        pqxx::result step = tx.exec_params(
            "UPDATE bisect_steps SET state = 'claimed', agent = $2, token_hash = $3, "
            "attempts = attempts + 1, lease_seconds = $4, claimed_at = now(), "
            "lease_expires_at = now() + $4::integer * interval '1 second' WHERE id = $1 "
            "RETURNING ordinal, attempts, request::text, " +
                Rfc3339Sql("lease_expires_at"),
            out.id, claim.agent, claim.token_hash, claim.lease_seconds);
        out.ordinal = step[0][0].as<int64_t>();
        out.attempt = step[0][1].as<int64_t>();
        out.request_json = Text(step[0][2]);
        out.lease_expires_at = Text(step[0][3]);
        out.lease_seconds = claim.lease_seconds;
        pqxx::result job = tx.exec_params(
            "UPDATE bisect_jobs SET state = 'running', updated_at = now() WHERE id = $1 "
            "RETURNING good_sha, bad_sha, request::text",
            out.bisect_id);
        out.good_sha = Text(job[0][0]);
        out.bad_sha = Text(job[0][1]);
        out.bisect_request_json = Text(job[0][2]);
        return out;
      });
}

Result<StepLease> PgStore::HeartbeatStep(const Project& project, int64_t step_id,
                                         const std::string& token_hash, int64_t lease_seconds) {
  return pool_.WithTransaction<StepLease>([&](pqxx::work& tx) -> Result<StepLease> {
    pqxx::result r =
        tx.exec_params(std::string("SELECT s.state, s.token_hash, coalesce(s.lease_seconds, 60)") +
                           kStepOfProject + "FOR UPDATE OF s",
                       step_id, project.id);
    if (r.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no bisect step " + std::to_string(step_id) + " in project " + project.name,
                       "id");
    }
    if (auto held = CheckHeld(step_id, Text(r[0][0]), r[0][1], token_hash); !held) {
      return tl::unexpected(held.error());
    }
    StepLease lease;
    lease.id = step_id;
    lease.lease_seconds = lease_seconds > 0 ? lease_seconds : r[0][2].as<int64_t>();
    pqxx::result updated = tx.exec_params(
        "UPDATE bisect_steps SET lease_seconds = $2, lease_expires_at = now() + "
        "$2::integer * interval '1 second' WHERE id = $1 RETURNING " +
            Rfc3339Sql("lease_expires_at"),
        step_id, lease.lease_seconds);
    lease.lease_expires_at = Text(updated[0][0]);
    return lease;
  });
}

Result<BisectRecord> PgStore::CompleteStep(const Project& project, int64_t step_id,
                                           const std::string& token_hash, const StepReport& report,
                                           const BisectReplay& replay) {
  return pool_.WithTransaction<BisectRecord>([&](pqxx::work& tx) -> Result<BisectRecord> {
    pqxx::result owner =
        tx.exec_params(std::string("SELECT s.bisect_id") + kStepOfProject, step_id, project.id);
    if (owner.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no bisect step " + std::to_string(step_id) + " in project " + project.name,
                       "id");
    }
    const int64_t bisect_id = owner[0][0].as<int64_t>();
    pqxx::result job = tx.exec_params(
        "SELECT state, coalesce(request::text, '') FROM bisect_jobs WHERE id = $1 FOR UPDATE",
        bisect_id);
    const std::string job_state = Text(job[0][0]);
    if (!Active(job_state)) {
      return MakeError(ErrorCode::kConflict,
                       "bisect " + std::to_string(bisect_id) + " is " + job_state +
                           ": the step's result is not needed any more",
                       "token");
    }
    pqxx::result step = tx.exec_params(
        "SELECT state, token_hash, attempts, ordinal FROM bisect_steps WHERE id = $1 FOR UPDATE",
        step_id);
    if (auto held = CheckHeld(step_id, Text(step[0][0]), step[0][1], token_hash); !held) {
      return tl::unexpected(held.error());
    }
    const int64_t attempts = step[0][2].as<int64_t>();
    const int64_t ordinal = step[0][3].as<int64_t>();

    if (!report.error.empty()) {
      if (attempts < kMaxStepAttempts) {
        tx.exec_params(
            "UPDATE bisect_steps SET state = 'queued', token_hash = NULL, "
            "lease_expires_at = NULL, last_error = $2 WHERE id = $1",
            step_id, report.error);
      } else {
        FailStep(tx, bisect_id, step_id,
                 "step " + std::to_string(ordinal) + " failed " + std::to_string(attempts) +
                     " times; last: " + report.error);
      }
      return ReadBisect(tx, project, bisect_id);
    }

    tx.exec_params(
        "UPDATE bisect_steps SET state = 'done', result = $2::jsonb, builds = $3, runs = $4, "
        "token_hash = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = $1",
        step_id, report.measurement_json, report.builds, report.runs);
    BisectReplayInput input;
    input.bisect_id = bisect_id;
    input.request_json = Text(job[0][1]);
    for (const pqxx::row& done : tx.exec_params(
             "SELECT ordinal, request::text, result::text, coalesce(builds, 0), "
             "coalesce(runs, 0) FROM bisect_steps WHERE bisect_id = $1 AND state = 'done' "
             "ORDER BY ordinal",
             bisect_id)) {
      input.done.push_back({done[0].as<int64_t>(), Text(done[1]), Text(done[2]),
                            done[3].as<int64_t>(), done[4].as<int64_t>()});
    }
    Result<BisectDecision> decision = replay(input);
    if (!decision) return tl::unexpected(decision.error());
    const Result<void> applied =
        decision->state == "running"
            ? Advance(tx, bisect_id, ordinal + 1, decision->next_request_json, input, replay)
            : Finish(tx, bisect_id, *decision);
    if (!applied) return tl::unexpected(applied.error());
    return ReadBisect(tx, project, bisect_id);
  });
}

Result<BisectRecord> PgStore::CancelBisect(const Project& project, int64_t id) {
  return pool_.WithTransaction<BisectRecord>([&](pqxx::work& tx) -> Result<BisectRecord> {
    pqxx::result r =
        tx.exec_params("SELECT state FROM bisect_jobs WHERE id = $1 AND project_id = $2 FOR UPDATE",
                       id, project.id);
    if (r.empty()) {
      return MakeError(ErrorCode::kNotFound,
                       "no bisect " + std::to_string(id) + " in project " + project.name, "id");
    }
    const std::string state = Text(r[0][0]);
    if (state == "cancelled") return ReadBisect(tx, project, id);
    if (!Active(state)) {
      return MakeError(ErrorCode::kConflict,
                       "bisect " + std::to_string(id) + " already finished (" + state + ")", "id");
    }
    tx.exec_params(
        "UPDATE bisect_jobs SET state = 'cancelled', updated_at = now(), finished_at = now() "
        "WHERE id = $1",
        id);
    tx.exec_params(
        "UPDATE bisect_steps SET state = 'cancelled', token_hash = NULL, lease_expires_at = "
        "NULL, finished_at = now() WHERE bisect_id = $1 AND state IN ('queued', 'claimed')",
        id);
    return ReadBisect(tx, project, id);
  });
}

}  // namespace perfwarden::store
