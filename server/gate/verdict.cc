// SPDX-License-Identifier: Apache-2.0
// The verdict's life cycle (compute, store, read, replay): the baseline chosen here, the verdict
// decided by judge/ and written by wire/. docs/api.md ("Verdicts") documents the object.
#include "server/gate/verdict.h"

#include <span>

#include "core/heap.h"
#include "judge/run_verdict.h"
#include "wire/verdict_replay.h"

namespace perfwarden::server::gate {
namespace {

using nlohmann::json;

// Whether a stored verdict answers this request: same algorithm, parameters, contender and
// baseline runs.
bool SameQuestion(const store::NewVerdict& stored, const VerdictRequest& request,
                  const std::vector<std::string>& contender_ids,
                  const std::vector<std::string>& baseline_ids) {
  return stored.algorithm_version == stats::kVerdictAlgorithmVersion &&
         stored.contender_run_ids == contender_ids && stored.baseline_run_ids == baseline_ids &&
         json::parse(stored.parameters_json, nullptr, false) == EncodeParameters(request);
}

wire::Baseline BaselineOf(const store::BaselineChoice& b) {
  return {b.commit_sha, b.branch, b.testbed, b.run_ids, b.selection, b.distance};
}

}  // namespace

Result<wire::Verdict> Judge(const std::vector<store::SampleSet>& contender,
                            const PreparedBaseline* baseline, const VerdictRequest& request) {
  std::vector<judge::Series> current;
  current.reserve(contender.size());
  for (const store::SampleSet& set : contender) current.push_back(AsSeries(set));
  std::optional<std::span<const judge::Series>> base;
  if (baseline != nullptr) base = baseline->series;
  return judge::JudgeRun(base, current, request.policy, request.rules);
}

wire::StoredVerdictText StoredText(const store::StoredVerdict& stored) {
  const store::NewVerdict& v = stored.verdict;
  wire::StoredVerdictText out;
  out.id = stored.id;
  out.run_id = v.run_id;
  out.created_at = stored.created_at;
  out.outcome = v.outcome;
  out.algorithm_version = v.algorithm_version;
  out.parameters_json = v.parameters_json;
  out.baseline_json = v.baseline_json;
  out.contender_run_ids = v.contender_run_ids;
  out.summary_json = v.summary_json;
  out.results_json = v.results_json;
  return out;
}

std::string VerdictResponse(const store::StoredVerdict& stored) {
  return wire::EncodeVerdictBody(StoredText(stored));
}

void SetDecided(const wire::Verdict& verdict, store::NewVerdict& record) {
  record.outcome = std::string(wire::OutcomeName(verdict.outcome));
  record.summary_json = wire::EncodeVerdictSummary(verdict);
  record.results_json = wire::EncodeResultsText(verdict.results);
}

Result<std::string> ReplayResponse(const store::StoredVerdict& stored,
                                   std::string_view algorithm_version,
                                   const wire::Verdict& replayed) {
  const wire::StoredVerdictText text = StoredText(stored);
  auto original = wire::DecodeStoredVerdict(text);
  if (!original) {
    return MakeError(ErrorCode::kInternal, "the stored verdict " + std::to_string(stored.id) +
                                               " is not readable: " + original.error().ToString());
  }
  wire::VerdictReplay replay;
  replay.algorithm_version = std::string(algorithm_version);
  replay.stored_algorithm_version = stored.verdict.algorithm_version;
  replay.differences = wire::CompareVerdicts(*original, replayed);
  return wire::EncodeReplayBody(text, replay);
}

Result<store::RunContext> VerdictService::RunToJudge(const store::Project& project,
                                                     const std::string& run_id,
                                                     const BranchCheck& may_write) {
  auto run = store_.GetRunContext(project, run_id);
  if (!run) return tl::unexpected(run.error());
  if (may_write) {
    if (auto allowed = may_write(run->summary.branch); !allowed) {
      return tl::unexpected(allowed.error());
    }
  }
  return run;
}

Result<std::string> VerdictService::Compute(const store::Project& project,
                                            const std::string& run_id,
                                            const VerdictRequest& request, bool* reused,
                                            const BranchCheck& may_write) {
  if (reused != nullptr) *reused = false;
  auto run = RunToJudge(project, run_id, may_write);
  if (!run) return tl::unexpected(run.error());
  std::vector<std::string> contender_ids = {run_id};
  for (size_t i = 0; i < request.contender_runs.size(); ++i) {
    const std::string& id = request.contender_runs[i];
    if (id == run_id) continue;
    const std::string field = "contender_runs[" + std::to_string(i) + "]";
    auto other = store_.GetRunContext(project, id);
    if (!other) return InvalidArgument(other.error().message, field);
    if (other->summary.commit_sha != run->summary.commit_sha ||
        other->summary.testbed_id != run->summary.testbed_id) {
      return InvalidArgument("run " + id + " is not of the same commit and testbed as run " +
                                 run_id + ", so it cannot be pooled with it",
                             field);
    }
    contender_ids.push_back(id);
  }
  std::string why_none;
  auto baseline = store_.FindBaseline(project, *run, &why_none);
  if (!baseline) return tl::unexpected(baseline.error());
  // The same question asked again (a retried CI job, a second gate on one run): when nothing
  // it depends on changed, the stored answer is the answer; judging is deterministic.
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  // (Without a baseline there is little to save, and why there is none may have changed.)
  if (*latest && *baseline &&
      SameQuestion((*latest)->verdict, request, contender_ids, (*baseline)->run_ids)) {
    if (reused != nullptr) *reused = true;
    return VerdictResponse(**latest);
  }
  auto contender = store_.GetSampleSets(project, contender_ids);
  if (!contender) return tl::unexpected(contender.error());
  std::shared_ptr<const PreparedBaseline> base_sets;
  if (*baseline) {
    auto sets = LoadBaseline(project, (*baseline)->run_ids);
    if (!sets) return tl::unexpected(sets.error());
    base_sets = std::move(*sets);
  }
  auto judged = Judge(*contender, base_sets.get(), request);
  if (!judged) return tl::unexpected(judged.error());

  std::vector<std::string> warnings;
  if (!*baseline) {
    warnings.push_back("no baseline: " + why_none);
  } else if ((*baseline)->selection == "ancestor" && (*baseline)->distance > 0) {
    warnings.push_back(
        "the merge-base has no results on this testbed; the baseline is its "
        "first-parent ancestor " +
        (*baseline)->commit_sha.substr(0, 12) + ", " + std::to_string((*baseline)->distance) +
        " commit(s) older");
  }
  wire::Verdict& decided = *judged;
  decided.commit = run->summary.commit_sha;
  decided.branch = run->summary.branch;
  decided.testbed = run->summary.testbed;
  decided.pr = run->summary.pr;
  if (!run->summary.runner_version.empty()) decided.runner_version = run->summary.runner_version;
  warnings.insert(warnings.end(), decided.warnings.begin(), decided.warnings.end());
  decided.warnings = std::move(warnings);

  store::NewVerdict verdict;
  verdict.run_id = run_id;
  verdict.contender_run_ids = contender_ids;
  if (*baseline) verdict.baseline_run_ids = (*baseline)->run_ids;
  verdict.algorithm_version = std::string(stats::kVerdictAlgorithmVersion);
  verdict.parameters_json = EncodeParameters(request).dump();
  if (*baseline) verdict.baseline_json = wire::EncodeBaseline(BaselineOf(**baseline)).dump();
  SetDecided(decided, verdict);
  auto stored = store_.SaveVerdict(project, verdict);
  if (!stored) return tl::unexpected(stored.error());
  if (stored->reused && reused != nullptr) *reused = true;
  return VerdictResponse(*stored);
}

Result<std::shared_ptr<const PreparedBaseline>> VerdictService::LoadBaseline(
    const store::Project& project, const std::vector<std::string>& run_ids) {
  return baselines_.Get(project.id, run_ids,
                        [&]() { return store_.GetSampleSets(project, run_ids); });
}

void VerdictService::WarmBaselineAfterIngest(const store::Project& project,
                                             const std::string& run_id) {
  std::lock_guard lock(warm_mutex_);
  if (warm_stopped_) return;
  if (warm_queue_.size() >= kWarmQueue) warm_queue_.pop_front();
  warm_queue_.emplace_back(project, run_id);
  if (!warm_thread_.joinable()) warm_thread_ = std::thread([this] { WarmLoop(); });
  warm_changed_.notify_one();
}

void VerdictService::StopWarming() {
  {
    std::lock_guard lock(warm_mutex_);
    warm_stopped_ = true;
    warm_queue_.clear();
  }
  warm_changed_.notify_all();
  if (warm_thread_.joinable()) warm_thread_.join();
}

void VerdictService::WarmLoop() {
  while (true) {
    std::pair<store::Project, std::string> next;
    {
      std::unique_lock lock(warm_mutex_);
      warm_changed_.wait(lock, [this] { return warm_stopped_ || !warm_queue_.empty(); });
      if (warm_stopped_) return;
      next = std::move(warm_queue_.front());
      warm_queue_.pop_front();
    }
    try {
      Warm(next.first, next.second);
    } catch (const std::exception&) {  // bad_alloc: the gate prepares on demand instead
    }
    // Reading a large run and its baseline's samples freed far more than the cache keeps.
    ReturnFreedMemory();
  }
}

void VerdictService::Warm(const store::Project& project, const std::string& run_id) {
  auto run = store_.GetRunContext(project, run_id);
  if (!run) return;
  if (!run->target_branch.empty() && run->target_branch != run->summary.branch) return;  // a PR
  // The question a pull request branched at this commit asks: its merge-base is this commit,
  // on this branch and testbed; no run of its own is excluded (the nil id matches none).
  store::RunContext pull_request;
  pull_request.summary = run->summary;
  pull_request.summary.id = "00000000-0000-0000-0000-000000000000";
  pull_request.summary.branch.clear();
  pull_request.summary.commit_sha.clear();
  pull_request.target_branch = run->summary.branch;
  pull_request.merge_base = run->summary.commit_sha;
  auto choice = store_.FindBaseline(project, pull_request, nullptr);
  if (!choice || !*choice || (*choice)->commit_sha != run->summary.commit_sha) return;
  (void)LoadBaseline(project, (*choice)->run_ids);
}

Result<std::string> VerdictService::Latest(const store::Project& project,
                                           const std::string& run_id) {
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  if (*latest) return VerdictResponse(**latest);
  if (auto run = store_.GetRunContext(project, run_id); !run) return tl::unexpected(run.error());
  return MakeError(ErrorCode::kNotFound,
                   "run " + run_id +
                       " has no verdict yet: POST .../verdict (ingest scope) "
                       "computes one",
                   "id");
}

Result<std::string> VerdictService::Replay(const store::Project& project,
                                           const std::string& run_id) {
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  if (!*latest) {
    // Tell a missing run apart from a run without a verdict.
    if (auto run = store_.GetRunContext(project, run_id); !run) return tl::unexpected(run.error());
    return MakeError(ErrorCode::kNotFound, "run " + run_id + " has no verdict to replay", "id");
  }
  const store::NewVerdict& stored = (*latest)->verdict;
  if (!stored.measurement_json.empty()) return ReplayPaired(project, **latest);
  auto request = DecodeParameters(json::parse(stored.parameters_json, nullptr, false));
  if (!request) return tl::unexpected(request.error());
  auto contender = store_.GetSampleSets(project, stored.contender_run_ids);
  if (!contender) return tl::unexpected(contender.error());
  std::shared_ptr<const PreparedBaseline> base_sets;
  if (!stored.baseline_run_ids.empty()) {
    auto sets = LoadBaseline(project, stored.baseline_run_ids);
    if (!sets) return tl::unexpected(sets.error());
    base_sets = std::move(*sets);
  }
  auto judged = Judge(*contender, base_sets.get(), *request);
  if (!judged) return tl::unexpected(judged.error());

  return ReplayResponse(**latest, stats::kVerdictAlgorithmVersion, *judged);
}

}  // namespace perfwarden::server::gate
