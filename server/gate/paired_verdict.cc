// SPDX-License-Identifier: Apache-2.0
// The paired verdict's life cycle (VerdictService::ComputePaired and its replay): a measurement
// of the baseline commit and the pull request interleaved on one host, judged (and an amendment
// merged) by judge/paired_verdict.h, written by wire/verdict_text.h and stored as the run's
// newest verdict with the measurement itself, which is all a replay needs. The baseline side's
// values live only in that measurement, never as runs or samples. docs/api.md, "Paired verdicts".
#include "stats/paired_verdict.h"

#include <nlohmann/json.hpp>

#include "judge/paired.h"
#include "judge/paired_verdict.h"
#include "server/gate/verdict.h"

namespace perfwarden::server::gate {
namespace {

using nlohmann::json;

bool IsPaired(const store::NewVerdict& verdict) { return !verdict.measurement_json.empty(); }

// The measurement's parameters as a verdict stores them (EncodeParameters), with the numbers the
// paired judgement used.
Result<json> PairedParameters(const wire::PairedMeasurement& m) {
  auto request = DecodeParameters(wire::EncodeVerdictRequest(m.parameters));
  if (!request) {
    const Error& e = request.error();
    return InvalidArgument(e.message, "parameters" + (e.field.empty() ? "" : "." + e.field));
  }
  auto policy = judge::PairedPolicyOf(m);
  if (!policy) return tl::unexpected(policy.error());
  stats::VerdictPolicy& p = request->policy;
  p.threshold = policy->threshold;
  p.alpha = policy->alpha;
  p.confidence = policy->confidence;
  p.power = policy->power;
  p.bootstrap_resamples = policy->bootstrap_resamples;
  p.seed = policy->seed;
  wire::VerdictRequest out = WireParameters(*request);
  // The deciding test is the paired one (the design's), not the unpaired request's default.
  out.test = "paired-" + m.design.test;
  return wire::EncodeVerdictRequest(out);
}

// kConflict unless `latest` is the verdict the measurement amends: the run's newest, unpaired.
Result<void> CheckAmends(int64_t amends, const std::string& run_id,
                         const std::optional<store::StoredVerdict>& latest) {
  const std::string asked = "the measurement amends verdict " + std::to_string(amends) + ", but ";
  if (!latest) {
    return MakeError(ErrorCode::kConflict, asked + "run " + run_id + " has no verdict", "amends");
  }
  if (latest->id != amends) {
    return MakeError(ErrorCode::kConflict,
                     asked + "the newest verdict of run " + run_id + " is verdict " +
                         std::to_string(latest->id) + ": re-measure that one",
                     "amends");
  }
  if (IsPaired(latest->verdict)) {
    return MakeError(ErrorCode::kConflict,
                     asked + "it is a paired verdict already; only an unpaired verdict is amended",
                     "amends");
  }
  return {};
}

// The unpaired verdict a measurement amends, as typed values.
Result<wire::Verdict> ReadAmended(const store::StoredVerdict& amended) {
  auto typed = wire::DecodeStoredVerdict(StoredText(amended));
  if (!typed) {
    return MakeError(ErrorCode::kInternal, "the amended verdict " + std::to_string(amended.id) +
                                               " is not readable: " + typed.error().ToString());
  }
  return typed;
}

}  // namespace

Result<std::string> VerdictService::ComputePaired(const store::Project& project,
                                                  const std::string& run_id,
                                                  const wire::PairedMeasurement& m, bool* reused,
                                                  const BranchCheck& may_write) {
  if (reused != nullptr) *reused = false;
  auto run = RunToJudge(project, run_id, may_write);
  if (!run) return tl::unexpected(run.error());
  const std::string measurement_json = wire::EncodePairedMeasurement(m);
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  // The same measurement posted again (a retried CI job): judging is deterministic, so the
  // stored verdict is the answer.
  if (*latest && (*latest)->verdict.algorithm_version == stats::kPairedAlgorithmVersion &&
      (*latest)->verdict.measurement_json == measurement_json) {
    if (reused != nullptr) *reused = true;
    return VerdictResponse(**latest);
  }
  if (m.amends) {
    if (auto checked = CheckAmends(*m.amends, run_id, *latest); !checked) {
      return tl::unexpected(checked.error());
    }
  }
  auto parts = judge::JudgeMeasurement(m);
  if (!parts) return tl::unexpected(parts.error());

  store::NewVerdict verdict;
  verdict.run_id = run_id;
  verdict.algorithm_version = std::string(stats::kPairedAlgorithmVersion);
  verdict.measurement_json = measurement_json;
  if (m.amends) {
    const store::NewVerdict& amended = (*latest)->verdict;
    auto typed = ReadAmended(**latest);
    if (!typed) return tl::unexpected(typed.error());
    verdict.contender_run_ids = amended.contender_run_ids;
    verdict.baseline_run_ids = amended.baseline_run_ids;
    verdict.parameters_json = amended.parameters_json;
    verdict.baseline_json = amended.baseline_json;
    SetDecided(judge::Amend(*typed, *parts), verdict);
  } else {
    auto parameters = PairedParameters(m);
    if (!parameters) return tl::unexpected(parameters.error());
    verdict.contender_run_ids = {run_id};
    verdict.parameters_json = parameters->dump();
    verdict.baseline_json =
        wire::EncodeBaseline(
            {m.baseline_commit, run->target_branch, m.testbed.name, {}, "paired", 0})
            .dump();
    wire::Verdict& decided = *parts;
    decided.commit = run->summary.commit_sha;
    decided.branch = run->summary.branch;
    decided.testbed = m.testbed.name;
    decided.pr = run->summary.pr;
    if (!run->summary.runner_version.empty()) decided.runner_version = run->summary.runner_version;
    SetDecided(decided, verdict);
  }
  auto stored = store_.SaveVerdict(project, verdict);
  if (!stored) return tl::unexpected(stored.error());
  return VerdictResponse(*stored);
}

Result<std::string> VerdictService::ReplayPaired(const store::Project& project,
                                                 const store::StoredVerdict& stored) {
  wire::DecodeLimits limits;
  limits.max_depth = 64;  // the stored measurement's own depth is 5; accepted when it was posted
  auto m = wire::DecodePairedMeasurement(stored.verdict.measurement_json, limits);
  if (!m) {
    return MakeError(ErrorCode::kInternal, "the stored measurement of verdict " +
                                               std::to_string(stored.id) +
                                               " is not readable: " + m.error().ToString());
  }
  auto parts = judge::JudgeMeasurement(*m);
  if (!parts) return tl::unexpected(parts.error());
  if (!m->amends) return ReplayResponse(stored, stats::kPairedAlgorithmVersion, *parts);
  auto amended = store_.GetVerdict(project, stored.verdict.run_id, *m->amends);
  if (!amended) return tl::unexpected(amended.error());
  if (!*amended) {
    return MakeError(ErrorCode::kInternal, "verdict " + std::to_string(stored.id) +
                                               " amends verdict " + std::to_string(*m->amends) +
                                               ", which is not stored");
  }
  auto typed = ReadAmended(**amended);
  if (!typed) return tl::unexpected(typed.error());
  return ReplayResponse(stored, stats::kPairedAlgorithmVersion, judge::Amend(*typed, *parts));
}

}  // namespace perfwarden::server::gate
