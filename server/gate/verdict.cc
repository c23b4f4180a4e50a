// Judging a run against its baseline, and the verdict's life cycle (compute, store, read,
// replay). docs/api.md ("Verdicts") documents the object built here.
#include "server/gate/verdict.h"

#include <cmath>
#include <map>
#include <tuple>

#include "stats/descriptive.h"

namespace perfgate::server::gate {
namespace {

using nlohmann::json;
using Key = std::tuple<std::string, std::string, std::string, std::string>;

Key KeyOf(const store::SampleSet& set) { return {set.suite, set.benchmark, set.metric, set.unit}; }

json Num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json Side(const stats::SampleSummary& s) {
  return {{"n", s.n}, {"median", Num(s.median)}, {"cv", Num(s.cv)}};
}

json ResultHead(const store::SampleSet& set, double threshold) {
  return {{"suite", set.suite},
          {"benchmark", set.benchmark},
          {"metric", set.metric},
          {"unit", set.unit},
          {"direction", std::string(DirectionName(set.direction))},
          {"threshold", threshold}};
}

// Whether a stored verdict answers this request: same algorithm, parameters, contender and
// baseline runs.
bool SameQuestion(const store::NewVerdict& stored, const VerdictRequest& request,
                  const std::vector<std::string>& contender_ids,
                  const std::vector<std::string>& baseline_ids) {
  return stored.algorithm_version == stats::kVerdictAlgorithmVersion &&
         stored.contender_run_ids == contender_ids && stored.baseline_run_ids == baseline_ids &&
         json::parse(stored.parameters_json, nullptr, false) == EncodeParameters(request);
}

json BaselineJson(const store::BaselineChoice& b) {
  return {{"commit", b.commit_sha}, {"branch", b.branch},       {"testbed", b.testbed},
          {"run_ids", b.run_ids},   {"selection", b.selection}, {"distance", b.distance}};
}

}  // namespace

Result<Judgement> Judge(const std::vector<store::SampleSet>& contender,
                        const PreparedBaseline* baseline, const VerdictRequest& request) {
  Judgement out;
  // Baseline series this run measured; what is left unmarked at the end gets a warning.
  std::vector<bool> matched(baseline != nullptr ? baseline->sets.size() : 0, false);
  int ignored = 0, added = 0;
  std::vector<stats::MetricInput> inputs;
  std::vector<size_t> input_result;  // results index of each input
  for (const store::SampleSet& set : contender) {
    const ThresholdRule* rule = nullptr;
    for (const ThresholdRule& r : request.rules) {
      if (r.Matches(set.suite, set.benchmark, set.metric)) {
        rule = &r;
        break;
      }
    }
    const double threshold =
        rule != nullptr && rule->percent > 0 ? rule->percent / 100 : request.policy.threshold;
    json result = ResultHead(set, threshold);
    size_t base_index = 0;
    bool has_base = false;
    if (baseline != nullptr) {
      if (auto it = baseline->index.find(KeyOf(set)); it != baseline->index.end()) {
        base_index = it->second;
        has_base = !matched[base_index];  // a series measured twice by one run: the first
        matched[base_index] = true;
      }
    }
    if ((rule != nullptr && rule->ignore) || !has_base) {
      for (const char* key : {"base", "change", "change_ci", "p_value", "p_adjusted"}) {
        result[key] = nullptr;
      }
      result["repetitions_needed"] = 0;
    }
    if (rule != nullptr && rule->ignore) {
      result["verdict"] = "IGNORED";
      result["reason"] = "ignored by a threshold rule";
      ++ignored;
    } else if (!has_base) {
      result["verdict"] = "NEW";
      result["reason"] = baseline == nullptr ? "no baseline" : "not in the baseline";
      ++added;
    } else {
      stats::MetricInput input;
      input.name = SeriesName(set);
      input.direction = set.direction;
      input.base = baseline->sets[base_index].values;
      input.prepared_base = baseline->prepared[base_index];
      input.contender = set.values;
      input.threshold = threshold;
      input.alpha = rule != nullptr ? rule->alpha : 0;
      inputs.push_back(input);
      input_result.push_back(out.results.size());
    }
    out.results.push_back(std::move(result));
  }
  // The baseline's series that this run did not measure: worth a line, not a verdict.
  if (baseline != nullptr) {
    std::string names;
    size_t unmatched = 0;
    for (const auto& [key, index] : baseline->index) {  // in key order
      if (matched[index]) continue;
      const store::SampleSet& set = baseline->sets[index];
      if (unmatched++ < 5) names += (names.empty() ? "" : ", ") + set.benchmark + " " + set.metric;
    }
    if (unmatched > 0) {
      out.warnings.push_back(std::to_string(unmatched) +
                             " benchmark metric(s) of the baseline are not in this run: " + names +
                             (unmatched > 5 ? ", ..." : ""));
    }
  }

  // Only what the verdict object reports (no Hodges-Lehmann, Cohen's d, other tests).
  auto judged = stats::JudgeMetrics(inputs, request.policy, stats::JudgeOutputs::kVerdictOnly);
  if (!judged) return tl::unexpected(judged.error());
  for (size_t i = 0; i < judged->metrics.size(); ++i) {
    const stats::MetricVerdict& v = judged->metrics[i];
    json& result = out.results[input_result[i]];
    result["verdict"] = std::string(stats::VerdictName(v.verdict));
    result["base"] = Side(v.base);
    result["current"] = Side(v.contender);
    result["change"] = Num(v.change);
    result["change_ci"] = {Num(v.change_ci.lower), Num(v.change_ci.upper)};
    result["p_value"] = Num(v.p_test);
    result["p_adjusted"] = Num(v.p_adjusted);
    result["repetitions_needed"] = v.repetitions_needed;
    result["reason"] = v.reason;
  }
  // Current side of NEW and IGNORED series, for the report.
  for (size_t i = 0; i < contender.size(); ++i) {
    json& result = out.results[i];
    if (!result.contains("current")) {
      const std::vector<double>& values = contender[i].values;
      result["current"] = {{"n", values.size()},
                           {"median", Num(stats::Median(values))},
                           {"cv", Num(values.size() >= 2 ? stats::Cv(values) : NAN)}};
    }
  }
  out.counts = {{"regression", judged->regressions},
                {"improvement", judged->improvements},
                {"equivalent", judged->equivalent},
                {"inconclusive", judged->inconclusive},
                {"ignored", ignored},
                {"new", added}};
  if (baseline == nullptr) {
    out.outcome = "no_baseline";
  } else {
    out.outcome = judged->regressions > 0 ? "regression" : "pass";
  }
  return out;
}

json VerdictJson(const store::StoredVerdict& stored) {
  const store::NewVerdict& v = stored.verdict;
  json summary = json::parse(v.summary_json, nullptr, false);
  if (!summary.is_object()) summary = json::object();
  json out = {{"id", stored.id},
              {"run_id", v.run_id},
              {"created_at", stored.created_at},
              {"outcome", v.outcome},
              {"algorithm_version", v.algorithm_version},
              {"parameters", json::parse(v.parameters_json, nullptr, false)},
              {"baseline", v.baseline_json.empty() ? json(nullptr)
                                                   : json::parse(v.baseline_json, nullptr, false)},
              {"contender_run_ids", v.contender_run_ids}};
  for (const char* key : {"commit", "branch", "testbed", "pr", "counts", "warnings"}) {
    out[key] = summary.contains(key) ? summary[key] : json(nullptr);
  }
  out["results"] = json::parse(v.results_json, nullptr, false);
  return out;
}

std::string VerdictBody(const store::StoredVerdict& stored) {
  const store::NewVerdict& v = stored.verdict;
  std::string out;
  out.reserve(v.results_json.size() + v.parameters_json.size() + v.summary_json.size() + 1024);
  out += "{\"verdict\":{\"id\":" + std::to_string(stored.id);
  out += ",\"run_id\":" + json(v.run_id).dump();
  out += ",\"created_at\":" + json(stored.created_at).dump();
  out += ",\"outcome\":" + json(v.outcome).dump();
  out += ",\"algorithm_version\":" + json(v.algorithm_version).dump();
  out += ",\"parameters\":" + v.parameters_json;
  out += ",\"baseline\":" + (v.baseline_json.empty() ? std::string("null") : v.baseline_json);
  out += ",\"contender_run_ids\":" + json(v.contender_run_ids).dump();
  // The summary object's members (commit, branch, testbed, pr, counts, warnings), spliced in.
  const size_t open = v.summary_json.find('{');
  const size_t close = v.summary_json.rfind('}');
  if (open != std::string::npos && close != std::string::npos && close > open + 1) {
    const std::string members = v.summary_json.substr(open + 1, close - open - 1);
    if (members.find_first_not_of(" \t\n") != std::string::npos) out += "," + members;
  }
  out += ",\"results\":" + v.results_json + "}}";
  return out;
}

Result<std::string> VerdictService::Compute(const store::Project& project,
                                            const std::string& run_id,
                                            const VerdictRequest& request, bool* reused) {
  if (reused != nullptr) *reused = false;
  auto run = store_.GetRunContext(project, run_id);
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
    return VerdictBody(**latest);
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
  warnings.insert(warnings.end(), judged->warnings.begin(), judged->warnings.end());

  store::NewVerdict verdict;
  verdict.run_id = run_id;
  verdict.contender_run_ids = contender_ids;
  if (*baseline) verdict.baseline_run_ids = (*baseline)->run_ids;
  verdict.outcome = judged->outcome;
  verdict.algorithm_version = std::string(stats::kVerdictAlgorithmVersion);
  verdict.parameters_json = EncodeParameters(request).dump();
  if (*baseline) verdict.baseline_json = BaselineJson(**baseline).dump();
  json summary = {{"commit", run->summary.commit_sha},
                  {"branch", run->summary.branch},
                  {"testbed", run->summary.testbed},
                  {"pr", run->summary.pr ? json(*run->summary.pr) : json(nullptr)},
                  {"counts", judged->counts},
                  {"warnings", warnings}};
  verdict.summary_json = summary.dump();
  verdict.results_json = judged->results.dump();
  auto stored = store_.SaveVerdict(project, verdict);
  if (!stored) return tl::unexpected(stored.error());
  return VerdictBody(*stored);
}

Result<std::shared_ptr<const PreparedBaseline>> VerdictService::LoadBaseline(
    const store::Project& project, const std::vector<std::string>& run_ids) {
  return baselines_.Get(project.id, run_ids,
                        [&]() { return store_.GetSampleSets(project, run_ids); });
}

Result<std::string> VerdictService::Latest(const store::Project& project,
                                           const std::string& run_id) {
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  if (*latest) return VerdictBody(**latest);
  if (auto run = store_.GetRunContext(project, run_id); !run) return tl::unexpected(run.error());
  return MakeError(ErrorCode::kNotFound,
                   "run " + run_id +
                       " has no verdict yet: POST .../verdict (ingest scope) "
                       "computes one",
                   "id");
}

Result<json> VerdictService::Replay(const store::Project& project, const std::string& run_id) {
  auto latest = store_.LatestVerdict(project, run_id);
  if (!latest) return tl::unexpected(latest.error());
  if (!*latest) {
    // Tell a missing run apart from a run without a verdict.
    if (auto run = store_.GetRunContext(project, run_id); !run) return tl::unexpected(run.error());
    return MakeError(ErrorCode::kNotFound, "run " + run_id + " has no verdict to replay", "id");
  }
  const store::NewVerdict& stored = (*latest)->verdict;
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

  const json original = json::parse(stored.results_json, nullptr, false);
  json differences = json::array();
  if (judged->outcome != stored.outcome) {
    differences.push_back(
        {{"field", "outcome"}, {"stored", stored.outcome}, {"replayed", judged->outcome}});
  }
  if (!original.is_array() || original.size() != judged->results.size()) {
    differences.push_back({{"field", "results"},
                           {"stored", original.is_array() ? original.size() : 0},
                           {"replayed", judged->results.size()}});
  } else {
    for (size_t i = 0; i < original.size(); ++i) {
      for (const char* key : {"verdict", "change", "change_ci", "p_value", "p_adjusted"}) {
        const json a = original[i].value(key, json(nullptr));
        const json b = judged->results[i].value(key, json(nullptr));
        if (a != b) {
          differences.push_back({{"field", "results[" + std::to_string(i) + "]." + key},
                                 {"benchmark", original[i].value("benchmark", "")},
                                 {"stored", a},
                                 {"replayed", b}});
        }
      }
    }
  }
  return json{{"verdict", VerdictJson(**latest)},
              {"replay",
               {{"matches", differences.empty()},
                {"algorithm_version", std::string(stats::kVerdictAlgorithmVersion)},
                {"stored_algorithm_version", stored.algorithm_version},
                {"differences", std::move(differences)}}}};
}

}  // namespace perfgate::server::gate
