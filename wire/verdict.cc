// SPDX-License-Identifier: Apache-2.0
// The verdict's vocabulary (outcome and result-kind names) and its encoding; the decoder, which
// reads what older and newer servers send, is verdict_decode.cc.
#include "wire/verdict.h"

#include "wire/verdict_keys.h"
#include "wire/verdict_request.h"
#include "wire/verdict_text.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

json Optional(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json SideJson(const std::optional<Summary>& side) {
  if (!side) return nullptr;
  return {{keys::side::kCv, Optional(side->cv)},
          {keys::side::kMedian, Optional(side->median)},
          {keys::side::kN, side->n}};
}

json AttributionJson(const Attribution& a) {
  json moved = json::array();
  for (const MovedMetric& m : a.moved) {
    moved.push_back({{keys::moved::kChange, Optional(m.change)},
                     {keys::moved::kMetric, m.metric},
                     {keys::moved::kVerdict, m.verdict}});
  }
  json out = {{keys::attribution::kMoved, std::move(moved)}};
  if (!a.hint.empty()) out[keys::attribution::kHint] = a.hint;
  if (a.roofline) {
    out[keys::attribution::kRoofline] = {
        {keys::roofline::kClass, a.roofline->bound},
        {keys::roofline::kIntensity, Optional(a.roofline->intensity)},
        {keys::roofline::kRidge, Optional(a.roofline->ridge)}};
  }
  return out;
}

json IntervalJson(const std::optional<Interval>& i) {
  return i ? json::array({i->lower, i->upper}) : json(nullptr);
}

json ResultJson(const MetricResult& r) {
  json out = {{keys::result::kSuite, r.key.suite},
              {keys::result::kBenchmark, r.key.benchmark},
              {keys::result::kMetric, r.key.metric},
              {keys::result::kUnit, r.unit},
              {keys::result::kDirection, std::string(DirectionName(r.direction))},
              {keys::result::kThreshold, Optional(r.threshold)},
              {keys::result::kVerdict, std::string(ResultKindName(r.kind))},
              {keys::result::kBase, SideJson(r.base)},
              {keys::result::kCurrent, SideJson(r.current)},
              {keys::result::kChange, Optional(r.change)},
              {keys::result::kChangeCi,
               r.change_ci ? json::array({r.change_ci->lower, r.change_ci->upper}) : json(nullptr)},
              {keys::result::kPValue, Optional(r.p_value)},
              {keys::result::kPAdjusted, Optional(r.p_adjusted)},
              {keys::result::kRepetitionsNeeded, r.repetitions_needed},
              {keys::result::kReason, r.reason}};
  if (r.attribution) out[keys::result::kAttribution] = AttributionJson(*r.attribution);
  if (!r.environment.empty()) out[keys::result::kEnvironment] = r.environment;
  if (r.paired) out[keys::result::kPaired] = EncodePairedDetail(*r.paired);
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
    case ResultKind::kUnstable:
      return "UNSTABLE";
    case ResultKind::kImprovement:
      return "IMPROVEMENT";
    case ResultKind::kNew:
      return "NEW";
    case ResultKind::kEquivalent:
      return "EQUIVALENT";
    case ResultKind::kPass:
      return "PASS";
    case ResultKind::kReported:
      return "REPORTED";
    case ResultKind::kIgnored:
      return "IGNORED";
  }
  return "EQUIVALENT";
}

Counts CountResults(std::span<const MetricResult> results) {
  Counts c;
  for (const MetricResult& r : results) {
    switch (r.kind) {
      case ResultKind::kRegression:
        ++c.regression;
        break;
      case ResultKind::kImprovement:
        ++c.improvement;
        break;
      case ResultKind::kEquivalent:
        ++c.equivalent;
        break;
      case ResultKind::kInconclusive:
        ++c.inconclusive;
        break;
      case ResultKind::kUnstable:
        ++c.unstable;
        break;
      case ResultKind::kPass:
        ++c.pass;
        break;
      case ResultKind::kReported:
        ++c.reported;
        break;
      case ResultKind::kIgnored:
        ++c.ignored;
        break;
      case ResultKind::kNew:
        ++c.new_metrics;
        break;
    }
  }
  return c;
}

json EncodeEnvironmentShift(const EnvironmentShift& shift) {
  return {{keys::shift::kMetrics, shift.metrics},
          {keys::shift::kMedianChange, shift.median_change},
          {keys::shift::kGeomeanChange, shift.geomean_change},
          {keys::shift::kSameSignShare, shift.same_sign_share},
          {keys::shift::kReason, shift.reason}};
}

json EncodePairedDetail(const PairedDetail& d) {
  namespace k = keys::paired_result;
  return {{k::kBlocks, d.blocks},
          {k::kBlocksNeeded, d.blocks_needed},
          {k::kBootstrapCi, IntervalJson(d.bootstrap_ci)},
          {k::kDecidedAtLook, d.decided_at_look},
          {k::kDrift, d.drift},
          {k::kHodgesLehmann, d.hodges_lehmann},
          {k::kMedianChange, d.median_change},
          {k::kNoise, d.noise},
          {k::kPSign, d.p_sign},
          {k::kPT, d.p_t},
          {k::kPWilcoxon, d.p_wilcoxon},
          {k::kTCi, IntervalJson(d.t_ci)}};
}

json EncodePairedSummary(const PairedSummary& p) {
  namespace k = keys::paired;
  return {{k::kAmends, p.amends ? json(*p.amends) : json(nullptr)},
          {k::kBaselineCommit, p.baseline_commit},
          {k::kBlocks, p.blocks},
          {k::kDesign, EncodePairedDesign(p.design)},
          {k::kGeomeanChange, Optional(p.geomean_change)},
          {k::kGeomeanCi, IntervalJson(p.geomean_ci)},
          {k::kLook, p.look},
          {k::kLooks, p.looks},
          {k::kMeasured, p.measured}};
}

json EncodeVerdict(const Verdict& v) {
  json results = json::array();
  for (const MetricResult& r : v.results) results.push_back(ResultJson(r));
  json baseline = v.baseline ? EncodeBaseline(*v.baseline) : json(nullptr);
  json out = {{keys::verdict::kId, v.id},
              {keys::verdict::kRunId, v.run_id},
              {keys::verdict::kCreatedAt, v.created_at},
              {keys::verdict::kOutcome, std::string(OutcomeName(v.outcome))},
              {keys::verdict::kAlgorithmVersion, v.algorithm_version},
              {keys::verdict::kParameters, ParametersJson(v.parameters)},
              {keys::verdict::kBaseline, std::move(baseline)},
              {keys::verdict::kContenderRunIds, v.contender_run_ids},
              {keys::verdict::kCommit, v.commit},
              {keys::verdict::kBranch, v.branch},
              {keys::verdict::kTestbed, v.testbed},
              {keys::verdict::kPr, v.pr ? json(*v.pr) : json(nullptr)},
              {keys::verdict::kCounts, EncodeCounts(v.counts, /*paired=*/true)},
              {keys::verdict::kWarnings, v.warnings},
              {keys::verdict::kResults, std::move(results)}};
  if (!v.project.empty()) out[keys::verdict::kProject] = v.project;
  if (v.report_url) out[keys::verdict::kReportUrl] = *v.report_url;
  if (v.environment_shift)
    out[keys::verdict::kEnvironmentShift] = EncodeEnvironmentShift(*v.environment_shift);
  if (v.paired) out[keys::verdict::kPaired] = EncodePairedSummary(*v.paired);
  if (v.runner_version) out[keys::verdict::kRunnerVersion] = *v.runner_version;
  return out;
}

}  // namespace perfwarden::wire
