// SPDX-License-Identifier: Apache-2.0
// The verdict's JSON as the server writes and stores it, in parts: the "results" array as text
// (a verdict of 500 metrics is ~200 KB, and building it as a JSON tree first cost more than a
// tenth of a verdict's CPU), the summary's members, the baseline; and the response body spliced
// from the stored parts without parsing them, so that reading a stored verdict stays cheap.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "wire/verdict.h"

namespace perfwarden::wire {

// The "results" array: every object's keys in the order nlohmann's dump uses (sorted), numbers in
// their shortest round-trip form, a number that is not finite as null (also inside change_ci),
// strings escaped by nlohmann; the "paired" object as EncodePairedDetail writes it.
// DecodeVerdict reads it back to the same rows (an interval with a null bound as none).
std::string EncodeResultsText(std::span<const MetricResult> results);
// A result row's "attribution" object as EncodeResultsText writes it: {"hint":...,"moved":[...],
// "roofline":{...}}, "hint" and "roofline" left out when absent.
std::string EncodeAttributionText(const Attribution& attribution);

// The verdict's members that the server stores as its summary: commit, branch, testbed, pr,
// counts, warnings, and when set runner_version, environment_shift and paired; as one object,
// keys sorted. The counts' "unstable" and "pass" are written for paired verdicts only
// (docs/api.md, "Paired verdicts").
std::string EncodeVerdictSummary(const Verdict& verdict);
// The verdict's "baseline" object.
nlohmann::json EncodeBaseline(const Baseline& baseline);
// The "counts" object: every count, but unstable and pass only when `paired`.
nlohmann::json EncodeCounts(const Counts& counts, bool paired);

// A verdict as stored: its values and its wire-encoded parts (parameters: EncodeVerdictRequest;
// baseline: EncodeBaseline, "" for none; summary: EncodeVerdictSummary; results:
// EncodeResultsText). Views: the caller keeps the texts alive.
struct StoredVerdictText {
  int64_t id = 0;
  std::string_view run_id;
  std::string_view created_at;
  std::string_view outcome;
  std::string_view algorithm_version;
  std::string_view parameters_json = "{}";
  std::string_view baseline_json;
  std::span<const std::string> contender_run_ids;
  std::string_view summary_json = "{}";
  std::string_view results_json = "[]";
};

// {"verdict": {...}} as text, spliced from the stored parts without parsing them: the API's
// verdict object (docs/api.md, "Verdicts"), keys in the order id, run_id, created_at, outcome,
// algorithm_version, parameters, baseline, contender_run_ids, the summary's members, results.
std::string EncodeVerdictBody(const StoredVerdictText& stored);
// The stored verdict as typed values (DecodeVerdict of EncodeVerdictBody): what an amendment and
// a replay read. kInvalidArgument when a stored part is not readable.
Result<Verdict> DecodeStoredVerdict(const StoredVerdictText& stored);

}  // namespace perfwarden::wire
