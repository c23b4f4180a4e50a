// The verdict's vocabulary (outcome and result-kind names) and its encoding; the decoder, which
// reads what older and newer servers send, is verdict_decode.cc.
#include "wire/verdict.h"

#include "wire/verdict_request.h"

namespace perfgate::wire {
namespace {

using nlohmann::json;

json Optional(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json SideJson(const std::optional<Summary>& side) {
  if (!side) return nullptr;
  return {{"cv", Optional(side->cv)}, {"median", Optional(side->median)}, {"n", side->n}};
}

json AttributionJson(const Attribution& a) {
  json moved = json::array();
  for (const MovedMetric& m : a.moved) {
    moved.push_back({{"change", Optional(m.change)}, {"metric", m.metric}, {"verdict", m.verdict}});
  }
  json out = {{"moved", std::move(moved)}};
  if (!a.hint.empty()) out["hint"] = a.hint;
  if (a.roofline) {
    out["roofline"] = {{"class", a.roofline->bound},
                       {"intensity", Optional(a.roofline->intensity)},
                       {"ridge", Optional(a.roofline->ridge)}};
  }
  return out;
}

json ResultJson(const MetricResult& r) {
  json out = {{"suite", r.suite},
              {"benchmark", r.benchmark},
              {"metric", r.metric},
              {"unit", r.unit},
              {"direction", std::string(DirectionName(r.direction))},
              {"threshold", Optional(r.threshold)},
              {"verdict", std::string(ResultKindName(r.kind))},
              {"base", SideJson(r.base)},
              {"current", SideJson(r.current)},
              {"change", Optional(r.change)},
              {"change_ci",
               r.change_ci ? json::array({r.change_ci->lower, r.change_ci->upper}) : json(nullptr)},
              {"p_value", Optional(r.p_value)},
              {"p_adjusted", Optional(r.p_adjusted)},
              {"repetitions_needed", r.repetitions_needed},
              {"reason", r.reason}};
  if (r.attribution) out["attribution"] = AttributionJson(*r.attribution);
  if (!r.environment.empty()) out["environment"] = r.environment;
  return out;
}

json ParametersJson(const VerdictParameters& p) {
  VerdictRequest request;
  request.threshold = p.threshold;
  request.alpha = p.alpha;
  request.test = p.test;
  request.rules = p.rules;
  request.correction = p.correction;
  request.confidence = p.confidence;
  request.bootstrap_resamples = p.bootstrap_resamples;
  request.seed = p.seed;
  request.power = p.power;
  return EncodeVerdictRequest(request);
}

}  // namespace

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kRegression:
      return "regression";
    case Outcome::kPass:
      return "pass";
    case Outcome::kNoBaseline:
      return "no_baseline";
    case Outcome::kNoisyEnvironment:
      return "noisy_environment";
  }
  return "pass";
}

std::string_view ResultKindName(ResultKind kind) {
  switch (kind) {
    case ResultKind::kRegression:
      return "REGRESSION";
    case ResultKind::kInconclusive:
      return "INCONCLUSIVE";
    case ResultKind::kImprovement:
      return "IMPROVEMENT";
    case ResultKind::kNew:
      return "NEW";
    case ResultKind::kEquivalent:
      return "EQUIVALENT";
    case ResultKind::kIgnored:
      return "IGNORED";
  }
  return "EQUIVALENT";
}

json EncodeVerdict(const Verdict& v) {
  json results = json::array();
  for (const MetricResult& r : v.results) results.push_back(ResultJson(r));
  json baseline = nullptr;
  if (v.baseline) {
    baseline = {{"commit", v.baseline->commit},       {"branch", v.baseline->branch},
                {"testbed", v.baseline->testbed},     {"run_ids", v.baseline->run_ids},
                {"selection", v.baseline->selection}, {"distance", v.baseline->distance}};
  }
  const Counts& c = v.counts;
  json out = {{"id", v.id},
              {"run_id", v.run_id},
              {"created_at", v.created_at},
              {"outcome", std::string(OutcomeName(v.outcome))},
              {"algorithm_version", v.algorithm_version},
              {"parameters", ParametersJson(v.parameters)},
              {"baseline", std::move(baseline)},
              {"contender_run_ids", v.contender_run_ids},
              {"commit", v.commit},
              {"branch", v.branch},
              {"testbed", v.testbed},
              {"pr", v.pr ? json(*v.pr) : json(nullptr)},
              {"counts",
               {{"regression", c.regression},
                {"improvement", c.improvement},
                {"equivalent", c.equivalent},
                {"inconclusive", c.inconclusive},
                {"ignored", c.ignored},
                {"new", c.new_metrics}}},
              {"warnings", v.warnings},
              {"results", std::move(results)}};
  if (!v.project.empty()) out["project"] = v.project;
  if (v.report_url) out["report_url"] = *v.report_url;
  return out;
}

}  // namespace perfgate::wire
