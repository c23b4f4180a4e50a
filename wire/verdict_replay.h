// SPDX-License-Identifier: Apache-2.0
// A stored verdict judged again (GET .../verdict?replay=1, docs/api.md "Replay"): the typed
// comparison of the stored verdict with the replayed one, and the answer's JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wire/verdict.h"
#include "wire/verdict_text.h"

namespace perfwarden::wire {

// One difference; "stored" and "replayed" are the values as the verdict's JSON has them.
struct ReplayDifference {
  std::string field;                     // "outcome", "results", "results[3].p_adjusted"
  std::optional<std::string> benchmark;  // per-result differences
  nlohmann::json stored;
  nlohmann::json replayed;

  bool operator==(const ReplayDifference&) const = default;
};

struct VerdictReplay {
  std::string algorithm_version;  // the algorithm that replayed
  std::string stored_algorithm_version;
  std::vector<ReplayDifference> differences;

  bool matches() const { return differences.empty(); }
};

// What differs between the stored verdict and the replayed one: the outcome, the number of
// results, and per result (in order) verdict, change, change_ci, p_value and p_adjusted, compared
// as the JSON writes them (a number that is not finite, or an interval with such a bound, is null).
std::vector<ReplayDifference> CompareVerdicts(const Verdict& stored, const Verdict& replayed);

// The "replay" object.
nlohmann::json EncodeVerdictReplay(const VerdictReplay& replay);
// {"replay": {...}, "verdict": {...}} as text, the verdict spliced as EncodeVerdictBody writes it.
std::string EncodeReplayBody(const StoredVerdictText& stored, const VerdictReplay& replay);

}  // namespace perfwarden::wire
