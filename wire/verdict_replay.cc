// SPDX-License-Identifier: Apache-2.0
// The replay's comparison on typed values and its answer.
#include "wire/verdict_replay.h"

#include <cmath>

#include "wire/verdict_keys.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

json NumberJson(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? json(*value) : json(nullptr);
}

json IntervalJson(const std::optional<Interval>& i) {
  if (!i || !std::isfinite(i->lower) || !std::isfinite(i->upper)) return nullptr;
  return json::array({i->lower, i->upper});
}

}  // namespace

std::vector<ReplayDifference> CompareVerdicts(const Verdict& stored, const Verdict& replayed) {
  std::vector<ReplayDifference> out;
  if (stored.outcome != replayed.outcome) {
    out.push_back({std::string(keys::verdict::kOutcome), std::nullopt,
                   std::string(OutcomeName(stored.outcome)),
                   std::string(OutcomeName(replayed.outcome))});
  }
  if (stored.results.size() != replayed.results.size()) {
    out.push_back({std::string(keys::verdict::kResults), std::nullopt, stored.results.size(),
                   replayed.results.size()});
    return out;
  }
  for (size_t i = 0; i < stored.results.size(); ++i) {
    const MetricResult& a = stored.results[i];
    const MetricResult& b = replayed.results[i];
    const std::pair<std::string_view, std::pair<json, json>> fields[] = {
        {keys::result::kVerdict,
         {std::string(ResultKindName(a.kind)), std::string(ResultKindName(b.kind))}},
        {keys::result::kChange, {NumberJson(a.change), NumberJson(b.change)}},
        {keys::result::kChangeCi, {IntervalJson(a.change_ci), IntervalJson(b.change_ci)}},
        {keys::result::kPValue, {NumberJson(a.p_value), NumberJson(b.p_value)}},
        {keys::result::kPAdjusted, {NumberJson(a.p_adjusted), NumberJson(b.p_adjusted)}}};
    for (const auto& [key, values] : fields) {
      if (values.first == values.second) continue;
      out.push_back(
          {std::string(keys::verdict::kResults) + "[" + std::to_string(i) + "]." + std::string(key),
           a.key.benchmark, values.first, values.second});
    }
  }
  return out;
}

json EncodeVerdictReplay(const VerdictReplay& replay) {
  json differences = json::array();
  for (const ReplayDifference& d : replay.differences) {
    json item = {{"field", d.field}, {"stored", d.stored}, {"replayed", d.replayed}};
    if (d.benchmark) item["benchmark"] = *d.benchmark;
    differences.push_back(std::move(item));
  }
  return {{"matches", replay.matches()},
          {"algorithm_version", replay.algorithm_version},
          {"stored_algorithm_version", replay.stored_algorithm_version},
          {"differences", std::move(differences)}};
}

std::string EncodeReplayBody(const StoredVerdictText& stored, const VerdictReplay& replay) {
  // EncodeVerdictBody's text opens with {"verdict": ...; the replay goes first, as a JSON tree's
  // sorted keys would have it.
  const std::string body = EncodeVerdictBody(stored);
  return "{\"replay\":" +
         EncodeVerdictReplay(replay).dump(-1, ' ', false, json::error_handler_t::replace) + "," +
         body.substr(1);
}

}  // namespace perfwarden::wire
