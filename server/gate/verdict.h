// SPDX-License-Identifier: Apache-2.0
// The pull-request verdict use case: choose a run's baseline, judge every benchmark metric of
// the run against it (judge/run_verdict.h decides the typed verdict), store the verdict, written
// by wire/verdict_text.h, with everything needed to replay it, and replay it. The JSON is the
// API's verdict object (docs/api.md, "Verdicts"); the gate prints it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/threshold_rule.h"
#include "server/gate/baseline_cache.h"
#include "server/store/store.h"
#include "stats/verdict.h"
#include "wire/paired.h"
#include "wire/verdict.h"
#include "wire/verdict_request.h"
#include "wire/verdict_text.h"

namespace perfwarden::server::gate {

struct VerdictRequest {
  stats::VerdictPolicy policy;       // threshold, alpha, test; Holm; fixed seed
  std::vector<ThresholdRule> rules;  // perfwarden.yaml's `thresholds`, first match wins
  // More runs of the same commit and testbed pooled with the run (a gate that reran its
  // inconclusive benchmarks with more repetitions).
  std::vector<std::string> contender_runs;
};

// The body of POST .../verdict (wire::VerdictRequest: every key optional, unknown keys and bad
// values kInvalidArgument naming the field) as the policy to judge with; also a stored
// verdict's "parameters", read back by replay.
Result<VerdictRequest> DecodeParameters(const nlohmann::json& parameters);
// The request as stored in a verdict's "parameters": the whole policy, written out.
wire::VerdictRequest WireParameters(const VerdictRequest& request);
nlohmann::json EncodeParameters(const VerdictRequest& request);

// The verdict of a contender against a baseline (nullptr: none), without I/O: judge::JudgeRun
// on the sample sets (outcome, results, counts, warnings, environment_shift set; the rest is
// Compute's).
Result<wire::Verdict> Judge(const std::vector<store::SampleSet>& contender,
                            const PreparedBaseline* baseline, const VerdictRequest& request);

class VerdictService {
 public:
  // baseline_cache_bytes: memory for prepared baselines (limits.baseline_cache_bytes).
  explicit VerdictService(store::VerdictStore& store, size_t baseline_cache_bytes = 256u << 20)
      : store_(store), baselines_(baseline_cache_bytes) {}

  // The run's verdict for this request (baseline chosen now) as the response body
  // {"verdict": {...}} (VerdictResponse): computed and stored, or, when the newest stored verdict
  // was computed with the same algorithm version, parameters, contender and baseline runs, that
  // one (*reused = true).
  // `may_write` (when set) is asked about the run's branch before anything is judged or stored
  // (the API's branch rule for ingest-pr tokens); its error is the answer.
  using BranchCheck = std::function<Result<void>(std::string_view branch)>;
  Result<std::string> Compute(const store::Project& project, const std::string& run_id,
                              const VerdictRequest& request, bool* reused = nullptr,
                              const BranchCheck& may_write = nullptr);
  // The newest stored verdict as a response body; kNotFound when the run has none yet (reading
  // never computes: a verdict costs ~100 ms of CPU and a read token must not write).
  Result<std::string> Latest(const store::Project& project, const std::string& run_id);
  // The newest stored verdict, recomputed from its parameters and sample sets, as the response
  // body {"replay": {"matches", "algorithm_version", "differences": [...]}, "verdict": stored}
  // (wire/verdict_replay.h). A paired verdict of the newest stored one: its measurement judged
  // again (and, for an amendment, merged into the amended verdict again) and compared the same way.
  Result<std::string> Replay(const store::Project& project, const std::string& run_id);

  // The run's paired verdict (paired_verdict.cc; docs/api.md, "Paired verdicts"): the
  // measurement judged by judge::JudgePaired and stored with it as the run's newest verdict, as
  // the response body {"verdict": {...}}; or, when the newest stored verdict is a paired verdict
  // of the same measurement (a retried CI job), that one (*reused = true). A measurement that
  // amends a verdict must name the run's newest one, unpaired (else kConflict, field "amends").
  Result<std::string> ComputePaired(const store::Project& project, const std::string& run_id,
                                    const wire::PairedMeasurement& measurement,
                                    bool* reused = nullptr, const BranchCheck& may_write = nullptr);

  BaselineCache::Stats CacheStats() const { return baselines_.GetStats(); }

  // After a tracked-branch run (not a pull request) is stored: prepares, in the background,
  // the baseline that pull requests branched at its commit will be judged against (all runs of
  // that commit, branch and testbed), so that the first gate against a new main commit does not
  // pay for it. Requests for one commit waiting together are done once; at most kWarmQueue
  // wait (the oldest are dropped). Errors are dropped too: the gate prepares on demand.
  void WarmBaselineAfterIngest(const store::Project& project, const std::string& run_id);
  // Ends the background preparation (waits for the one running). Before the pool closes.
  void StopWarming();
  ~VerdictService() { StopWarming(); }

 private:
  static constexpr size_t kWarmQueue = 64;
  void WarmLoop();
  void Warm(const store::Project& project, const std::string& run_id);
  // The run a verdict is computed for, once `may_write` (when set) allows its branch.
  Result<store::RunContext> RunToJudge(const store::Project& project, const std::string& run_id,
                                       const BranchCheck& may_write);

  Result<std::string> ReplayPaired(const store::Project& project,
                                   const store::StoredVerdict& stored);

  Result<std::shared_ptr<const PreparedBaseline>> LoadBaseline(
      const store::Project& project, const std::vector<std::string>& run_ids);

  store::VerdictStore& store_;
  BaselineCache baselines_;

  std::mutex warm_mutex_;
  std::condition_variable warm_changed_;
  std::deque<std::pair<store::Project, std::string>> warm_queue_;  // (project, run id)
  bool warm_stopped_ = false;
  std::thread warm_thread_;  // started by the first request
};

// The stored verdict's parts as wire/verdict_text.h reads them (views into `stored`).
wire::StoredVerdictText StoredText(const store::StoredVerdict& stored);
// The stored verdict as the response body {"verdict": {...}} (wire::EncodeVerdictBody: spliced
// from the stored texts without parsing them).
std::string VerdictResponse(const store::StoredVerdict& stored);
// The verdict's decided parts written into the record to store: outcome, summary and results,
// encoded by wire/verdict_text.h.
void SetDecided(const wire::Verdict& verdict, store::NewVerdict& record);
// The answer of GET ...?replay=1: the stored verdict compared with `replayed` (judged again by
// `algorithm_version`) on typed values (wire::CompareVerdicts). kInternal when the stored verdict
// is not readable.
Result<std::string> ReplayResponse(const store::StoredVerdict& stored,
                                   std::string_view algorithm_version,
                                   const wire::Verdict& replayed);

}  // namespace perfwarden::server::gate
