// SPDX-License-Identifier: Apache-2.0
// What remote bisects need from persistence: the job queued with its first step, agents
// claiming steps (one atomic claim, leases that run out and are reclaimed), and a step's result
// stored together with what the replay of the bisect decides next, in one transaction. The
// bisect algorithm is not here: CompleteStep hands the log to a BisectReplay and stores its
// decision.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/store/history_store.h"
#include "server/store/store.h"

namespace perfwarden::store {

// Claims of one step before its job fails: an agent's error report requeues the step while it
// has had fewer claims, and a lease that ran out this often is not reclaimed again (a step that
// kills its agents must not cycle through them for ever).
inline constexpr int64_t kMaxStepAttempts = 3;

struct NewRemoteBisect {
  std::optional<int64_t> alert_id;
  std::string good_sha, bad_sha;
  std::string testbed;
  std::string request_json;     // the replay's input: commits, options, benchmarks...
  std::string first_step_json;  // bisect::RequestJson of step 0
  std::string created_by;       // token name
  // Refuse the bisect (kConflict, field "testbed", nothing stored) when the project already has
  // this many pending or running on the testbed; 0: no bound.
  int64_t max_open_on_testbed = 0;
};

struct StepClaimRequest {
  std::string testbed;
  std::string agent;
  std::string token_hash;  // SHA-256 hex of the claim's token (the token is never stored)
  int64_t lease_seconds = 60;
};

struct ClaimedStep {
  int64_t id = 0;
  int64_t bisect_id = 0;
  int64_t ordinal = 0;
  int64_t attempt = 0;  // 1 for the first claim
  int64_t lease_seconds = 0;
  std::string lease_expires_at;
  std::string request_json;  // the step's (bisect::RequestJson)
  std::string good_sha, bad_sha;
  std::string bisect_request_json;  // the job's
};

struct StepLease {
  int64_t id = 0;
  int64_t lease_seconds = 0;
  std::string lease_expires_at;
};

// What an agent reports on a step it holds: a measurement, or an error (empty: none).
struct StepReport {
  std::string measurement_json;  // bisect::MeasurementJson when error is empty
  int64_t builds = 0, runs = 0;
  std::string error;
};

struct DoneStep {
  int64_t ordinal = 0;
  std::string request_json;
  std::string result_json;
  int64_t builds = 0, runs = 0;
};

struct BisectReplayInput {
  int64_t bisect_id = 0;
  std::string request_json;    // the job's
  std::vector<DoneStep> done;  // in ordinal order; the step just reported is the last
};

// What the replay says after a step is done.
struct BisectDecision {
  // "running": measure next_request_json next; "succeeded" or "failed": finished.
  std::string state;
  std::string next_request_json;
  std::string report_json;  // when finished with an answer
  std::string culprit_sha;  // "" when none
  std::string error;        // failed without an answer: why
};

// Called inside CompleteStep's transaction: an error rolls the whole report back (the step
// stays claimed) and is returned to the reporter.
using BisectReplay = std::function<Result<BisectDecision>(const BisectReplayInput& input)>;

class BisectStore {
 public:
  virtual ~BisectStore() = default;

  // Stores the job (state pending) and its step 0 in one transaction; returns it as GetBisect
  // does. kNotFound when the alert is not in the project; kConflict (field "testbed") when the
  // testbed has bisect.max_open_on_testbed open already, counted under a lock of the project's
  // testbed so that concurrent posts cannot pass it. A step that a measurement made
  // before answers (the same commits side by side, the same repetitions, benchmarks, suite,
  // metric and build, by another bisect on the same testbed) is done at once from it
  // (reused_from), and `replay` decides the next, until one must be measured or the bisect is
  // finished.
  virtual Result<BisectRecord> QueueRemoteBisect(const Project& project,
                                                 const NewRemoteBisect& bisect,
                                                 const BisectReplay& replay) = 0;

  // Takes the oldest claimable step of the project's pending or running bisects on the
  // testbed (queued, or claimed with its lease run out and fewer than kMaxStepAttempts claims),
  // skipping rows other transactions hold, so concurrent agents never get the same step. The
  // step becomes claimed by `claim` (attempts + 1), its job running. nullopt when none. Steps
  // whose lease ran out kMaxStepAttempts times fail their job on the way.
  virtual Result<std::optional<ClaimedStep>> ClaimStep(const Project& project,
                                                       const StepClaimRequest& claim) = 0;

  // Extends the lease of a step the token holds by `lease_seconds` (0: the claim's). kNotFound
  // when the step is not in the project; kConflict when it is no longer held by this token
  // (reclaimed, done, failed, cancelled).
  virtual Result<StepLease> HeartbeatStep(const Project& project, int64_t step_id,
                                          const std::string& token_hash, int64_t lease_seconds) = 0;

  // In one transaction, with the job row locked: checks that the token still holds the step
  // (kConflict otherwise, kNotFound when the step is not in the project), then
  // - an error report requeues the step (token cleared, error kept) while it has had fewer than
  //   kMaxStepAttempts claims, and fails the step and its job after that;
  // - a measurement marks the step done and calls `replay` with the log of done steps; its
  //   decision queues step ordinal + 1 (or reuses a measurement, as QueueRemoteBisect does) or
  //   finishes the job (report, culprit, state).
  // Returns the job as GetBisect does.
  virtual Result<BisectRecord> CompleteStep(const Project& project, int64_t step_id,
                                            const std::string& token_hash, const StepReport& report,
                                            const BisectReplay& replay) = 0;

  // Cancels a pending or running bisect and its open steps (an agent still measuring gets
  // kConflict when it reports). Idempotent on a cancelled one; kConflict when it finished,
  // kNotFound when absent.
  virtual Result<BisectRecord> CancelBisect(const Project& project, int64_t id) = 0;
};

}  // namespace perfwarden::store
