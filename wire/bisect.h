// SPDX-License-Identifier: Apache-2.0
// The bisect messages (docs/api.md "Bisects", docs/openapi.yaml) as typed values, the one contract
// of both sides: the bodies of POST .../bisects (a local bisect's answer, or a remote bisect to
// queue), the bisect the server answers with, and what `perfwarden agent` exchanges with the queue
// (a claim and its step, a heartbeat and its lease, a step's result). The bisect algorithm's own
// records (search options, a step's request, a measurement, the report) are bisect/'s
// (bisect/driver.h, bisect/report.h), which the wire layer sits below: they travel here as the
// JSON objects bisect/ writes and reads, and their contents are checked by bisect/.
//
// Request bodies decode strictly (an unknown key or a value out of range is kInvalidArgument
// naming the field); the server's answers decode tolerantly (unknown keys ignored, so that a newer
// server does not break an older runner; the keys read must have their documented types).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"

namespace perfwarden::wire {

// --- POST .../bisects -------------------------------------------------------------------------

// The most commits a remote bisect's range may list.
inline constexpr std::size_t kMaxBisectCommits = 100000;

// A commit of a remote bisect's range; subject and author are "" when absent or null.
struct BisectCommit {
  std::string sha = {};  // 40 lowercase hex digits
  std::string subject = {};
  std::string author = {};

  bool operator==(const BisectCommit&) const = default;
};

// "remote": true: a bisect queued for the agents of `testbed`.
struct RemoteBisectRequest {
  std::string testbed = {};                  // a name (wire::IsName)
  std::string good = {}, bad = {};           // 40 lowercase hex digits, different
  std::vector<BisectCommit> commits = {};    // 2..kMaxBisectCommits distinct; good first, bad last
  std::vector<std::string> benchmarks = {};  // at least one, none empty; the first is judged
  // "" (or absent, or null): the agent's perfwarden.yaml decides.
  std::string suite = {}, metric = {}, build = {};
  // bisect::SearchOptionsJson (the decoder checks it is an object; bisect/ checks its keys);
  // absent or null: the defaults.
  std::optional<nlohmann::json> options = {};
  std::optional<int64_t> alert_id = {};  // positive

  bool operator==(const RemoteBisectRequest&) const = default;
};

// Without "remote" (or with false): the answer of a local `perfwarden bisect` to store.
struct BisectReportUpload {
  // `perfwarden bisect --format json`'s object as posted (bisect::ReportJson), every key but
  // alert_id; the decoder checks its good, bad (full shas) and culprits (objects with a full sha).
  nlohmann::json report = nlohmann::json::object();
  std::optional<int64_t> alert_id = {};  // positive

  // What the server keeps beside the report: the ends, and the first culprit's sha ("" when the
  // regression did not reproduce); "" where the report lacks them (a value not decoded).
  std::string good() const;
  std::string bad() const;
  std::string culprit() const;

  bool operator==(const BisectReportUpload&) const = default;
};

using NewBisect = std::variant<BisectReportUpload, RemoteBisectRequest>;

// The body of POST .../bisects, an object: "remote" (true or false when present) picks the kind.
Result<NewBisect> DecodeNewBisect(const nlohmann::json& body);
// Either kind alone. DecodeRemoteBisectRequest accepts "remote" only as true, or absent (the
// server decodes its stored copy, which has none).
Result<RemoteBisectRequest> DecodeRemoteBisectRequest(const nlohmann::json& body);
Result<BisectReportUpload> DecodeBisectReportUpload(const nlohmann::json& body);
// "remote": true and every key; suite, metric and build always, options and alert_id when set.
nlohmann::json EncodeRemoteBisectRequest(const RemoteBisectRequest& request);
// The report with alert_id when set.
nlohmann::json EncodeBisectReportUpload(const BisectReportUpload& upload);

// --- the bisect the server answers with (GET .../bisects/{id}, and every bisect route) --------

// A step of a remote bisect: one measurement queued for the testbed's agents.
struct BisectStep {
  int64_t id = 0;
  int64_t ordinal = 0;
  std::string state = {};                 // queued, claimed, done, failed, cancelled
  std::optional<std::string> agent = {};  // the last agent that claimed it
  int64_t attempts = 0;                   // claims so far
  std::vector<int64_t> targets = {};      // positions: 0 the good end, the last the bad end
  int64_t repetitions = 0;
  std::optional<std::string> lease_expires_at = {};
  std::optional<std::string> last_error = {};
  std::optional<std::string> finished_at = {};
  std::optional<int64_t> reused_from = {};  // another bisect's step whose measurement answered it
  std::optional<int64_t> builds = {}, runs = {};  // written for done steps only

  bool operator==(const BisectStep&) const = default;
};

// What a remote bisect was queued with (beside its testbed in "remote").
struct BisectJob {
  int64_t commits = 0;  // in (good, bad]
  std::vector<std::string> benchmarks = {};
  std::string suite = {}, metric = {}, build = {};
  nlohmann::json options = nlohmann::json::object();  // bisect::SearchOptionsJson

  bool operator==(const BisectJob&) const = default;
};

struct BisectRemote {
  std::string testbed = {};
  std::optional<BisectJob> job = {};  // absent when the stored request cannot be read

  bool operator==(const BisectRemote&) const = default;
};

struct Bisect {
  int64_t id = 0;
  std::optional<int64_t> alert_id = {};
  std::string good = {}, bad = {};
  std::string state = {};                   // pending, running, succeeded, failed, cancelled
  std::optional<std::string> culprit = {};  // the first culprit's sha
  std::string created_by = {};
  std::string created_at = {};
  // bisect::ReportJson: the posted answer, or a finished remote bisect's.
  std::optional<nlohmann::json> report = {};
  // A remote bisect: "remote", and with it error, finished_at (null when unset) and steps.
  std::optional<BisectRemote> remote = {};
  std::optional<std::string> error = {};  // why it failed without an answer
  std::optional<std::string> finished_at = {};
  std::vector<BisectStep> steps = {};  // in ordinal order
  // While pending or running: the report so far plus "pending" (bisect::RequestJson), the
  // measurement queued next.
  std::optional<nlohmann::json> progress = {};

  bool operator==(const Bisect&) const = default;
};

// The answers carry it as {"bisect": {...}}.
inline constexpr std::string_view kBisectEnvelope = "bisect";

// The bisect object: absent optionals as null (alert_id, culprit, and a remote bisect's error,
// finished_at and its steps' optionals), report and progress only when set, the remote part only
// for a remote bisect, a step's builds and runs only when set.
nlohmann::json EncodeBisect(const Bisect& bisect);
// {"bisect": {...}}, or the bare object. Required: id, good, bad, state.
Result<Bisect> DecodeBisect(const nlohmann::json& document);

// --- the agents' steps (POST .../bisect-steps/...) --------------------------------------------

// A claim's lease in seconds: kMinStepLease..kMaxStepLease, kDefaultStepLease when not given.
inline constexpr int64_t kMinStepLease = 5, kMaxStepLease = 3600, kDefaultStepLease = 60;

// A step token: 128 random bits as 32 lowercase hex digits.
bool IsStepToken(std::string_view text);

// POST .../bisect-steps/claim.
struct StepClaimRequest {
  std::string testbed = {};  // 1..200 characters
  std::string agent = {};    // 1..200 characters: the agent's name as the server shows it
  std::optional<int64_t> lease_seconds = {};

  bool operator==(const StepClaimRequest&) const = default;
};
Result<StepClaimRequest> DecodeStepClaimRequest(const nlohmann::json& body);
nlohmann::json EncodeStepClaimRequest(const StepClaimRequest& request);

// A target of a claimed step: its position in the range and its commit.
struct StepCommit {
  int64_t position = 0;
  std::string sha = {};
  std::string subject = {};

  bool operator==(const StepCommit&) const = default;
};

// The claim's answer (200; a 204 has no step): the step with its token, its targets' commits, and
// what to build and measure.
struct ClaimedStep {
  int64_t id = 0;
  int64_t bisect_id = 0;
  int64_t ordinal = 0;
  std::string token = {};
  int64_t lease_seconds = 0;
  std::string lease_expires_at = {};
  int64_t attempt = 0;                                // 1 for the first claim
  nlohmann::json request = nlohmann::json::object();  // bisect::RequestJson
  std::vector<StepCommit> commits = {};               // the targets', in the request's order
  std::string good = {}, bad = {};
  std::vector<std::string> benchmarks = {};
  std::string suite = {}, metric = {}, build = {};

  bool operator==(const ClaimedStep&) const = default;
};

// The answers carry steps and leases as {"step": {...}}.
inline constexpr std::string_view kStepEnvelope = "step";

nlohmann::json EncodeClaimedStep(const ClaimedStep& step);
// {"step": {...}}, or the bare object. Required: id, bisect_id, token, request.
Result<ClaimedStep> DecodeClaimedStep(const nlohmann::json& document);

// POST .../bisect-steps/{id}/heartbeat; lease_seconds absent: the claim's.
struct StepHeartbeat {
  std::string token = {};
  std::optional<int64_t> lease_seconds = {};

  bool operator==(const StepHeartbeat&) const = default;
};
Result<StepHeartbeat> DecodeStepHeartbeat(const nlohmann::json& body);
nlohmann::json EncodeStepHeartbeat(const StepHeartbeat& heartbeat);

// The heartbeat's answer: the renewed lease.
struct StepLease {
  int64_t id = 0;
  int64_t lease_seconds = 0;
  std::string lease_expires_at = {};

  bool operator==(const StepLease&) const = default;
};
nlohmann::json EncodeStepLease(const StepLease& lease);
// {"step": {...}}, or the bare object. Required: id.
Result<StepLease> DecodeStepLease(const nlohmann::json& document);

// POST .../bisect-steps/{id}/result: a measurement, or why the step failed on this host (exactly
// one of them). builds and runs go with a measurement; beside an error they are not read.
struct StepReport {
  std::string token = {};
  std::optional<nlohmann::json> measurement = {};  // bisect::MeasurementJson; bisect/ checks it
  std::optional<int64_t> builds = {}, runs = {};   // 0..INT_MAX
  std::optional<std::string> error = {};           // not empty

  bool operator==(const StepReport&) const = default;
};
Result<StepReport> DecodeStepReport(const nlohmann::json& body);
nlohmann::json EncodeStepReport(const StepReport& report);

}  // namespace perfwarden::wire
