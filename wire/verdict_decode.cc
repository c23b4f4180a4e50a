// SPDX-License-Identifier: Apache-2.0
// Decoding the server's verdict JSON through wire/json_reader.h, which keeps the first error (with
// the path of the key at fault), so the walk reads straight through and DecodeVerdict checks for
// an error once at the end.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wire/json_check.h"
#include "wire/json_reader.h"
#include "wire/verdict.h"
#include "wire/verdict_keys.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;
using Reader = JsonReader<json>;

VerdictParameters ReadParameters(Reader& reader, const json& object, const std::string& path) {
  VerdictParameters p;
  p.threshold = reader.Number(object, keys::parameters::kThreshold, path).value_or(p.threshold);
  p.alpha = reader.Number(object, keys::parameters::kAlpha, path).value_or(p.alpha);
  p.test = reader.String(object, keys::parameters::kTest, path);
  p.correction = reader.String(object, keys::parameters::kCorrection, path);
  p.confidence = reader.Number(object, keys::parameters::kConfidence, path).value_or(p.confidence);
  p.bootstrap_resamples =
      reader.Integer(object, keys::parameters::kBootstrapResamples, path, 0).value_or(0);
  if (const json* seed = reader.Member(object, keys::parameters::kSeed,
                                       FieldPath(path, keys::parameters::kSeed), false)) {
    if (reader.Expect(*seed, seed->is_number_unsigned(), "a non-negative integer",
                      FieldPath(path, keys::parameters::kSeed))) {
      p.seed = seed->get<uint64_t>();
    }
  }
  p.power = reader.Number(object, keys::parameters::kPower, path).value_or(p.power);
  reader.ForEachObject(
      object, keys::parameters::kRules, path, /*required=*/false,
      [&](const json& item, const std::string& at) {
        ThresholdRule rule;
        rule.suite = reader.OptString(item, keys::rule::kSuite, at).value_or("*");
        rule.benchmark = reader.OptString(item, keys::rule::kBenchmark, at).value_or("*");
        rule.metric = reader.OptString(item, keys::rule::kMetric, at).value_or("*");
        rule.percent = reader.Number(item, keys::rule::kPercent, at);
        rule.alpha = reader.Number(item, keys::rule::kAlpha, at);
        rule.ignore = reader.Bool(item, keys::rule::kIgnore, at).value_or(false);
        rule.gate = reader.Bool(item, keys::rule::kGate, at);
        p.rules.push_back(std::move(rule));
      });
  return p;
}

Baseline ReadBaseline(Reader& reader, const json& object, const std::string& path) {
  Baseline b;
  b.commit = reader.String(object, keys::baseline::kCommit, path);
  b.branch = reader.String(object, keys::baseline::kBranch, path);
  b.testbed = reader.String(object, keys::baseline::kTestbed, path);
  b.run_ids = reader.Strings(object, keys::baseline::kRunIds, path);
  b.selection = reader.String(object, keys::baseline::kSelection, path);
  b.distance = reader.Integer(object, keys::baseline::kDistance, path, 0).value_or(0);
  return b;
}

Counts ReadCounts(Reader& reader, const json& object, const std::string& path) {
  Counts c;
  c.regression = reader.Integer(object, keys::counts::kRegression, path, 0).value_or(0);
  c.improvement = reader.Integer(object, keys::counts::kImprovement, path, 0).value_or(0);
  c.equivalent = reader.Integer(object, keys::counts::kEquivalent, path, 0).value_or(0);
  c.inconclusive = reader.Integer(object, keys::counts::kInconclusive, path, 0).value_or(0);
  c.ignored = reader.Integer(object, keys::counts::kIgnored, path, 0).value_or(0);
  c.new_metrics = reader.Integer(object, keys::counts::kNew, path, 0).value_or(0);
  c.unstable = reader.Integer(object, keys::counts::kUnstable, path, 0).value_or(0);
  c.pass = reader.Integer(object, keys::counts::kPass, path, 0).value_or(0);
  c.reported = reader.Integer(object, keys::counts::kReported, path, 0).value_or(0);
  return c;
}

std::optional<Summary> ReadSummary(Reader& reader, const json& object, std::string_view key,
                                   const std::string& path) {
  const json* side = reader.Object(object, key, path);
  if (side == nullptr) return std::nullopt;
  const std::string at = FieldPath(path, key);
  Summary s;
  s.n = reader.Integer(*side, keys::side::kN, at, 0).value_or(0);
  s.median = reader.Number(*side, keys::side::kMedian, at);
  s.cv = reader.Number(*side, keys::side::kCv, at);
  return s;
}

std::optional<ResultKind> ParseResultKind(std::string_view text) {
  for (ResultKind kind : {ResultKind::kRegression, ResultKind::kInconclusive, ResultKind::kUnstable,
                          ResultKind::kImprovement, ResultKind::kNew, ResultKind::kEquivalent,
                          ResultKind::kPass, ResultKind::kReported, ResultKind::kIgnored}) {
    if (text == ResultKindName(kind)) return kind;
  }
  return std::nullopt;
}

// A newer server may add keys to these objects; they are ignored like everywhere else.
Attribution ReadAttribution(Reader& reader, const json& object, const std::string& path) {
  Attribution a;
  reader.ForEachObject(object, keys::attribution::kMoved, path, /*required=*/false,
                       [&](const json& item, const std::string& at) {
                         MovedMetric m;
                         m.metric =
                             reader.String(item, keys::moved::kMetric, at, /*required=*/true);
                         m.verdict = reader.String(item, keys::moved::kVerdict, at);
                         m.change = reader.Number(item, keys::moved::kChange, at);
                         a.moved.push_back(std::move(m));
                       });
  if (const json* roofline = reader.Object(object, keys::attribution::kRoofline, path)) {
    const std::string at = FieldPath(path, keys::attribution::kRoofline);
    Roofline r;
    r.bound = reader.String(*roofline, keys::roofline::kClass, at);
    r.intensity = reader.Number(*roofline, keys::roofline::kIntensity, at);
    r.ridge = reader.Number(*roofline, keys::roofline::kRidge, at);
    a.roofline = std::move(r);
  }
  a.hint = reader.String(object, keys::attribution::kHint, path);
  return a;
}

// [lower, upper]; a bound the server could not compute (not finite) is written as null: no
// interval then.
std::optional<Interval> ReadInterval(Reader& reader, const json& object, std::string_view key,
                                     const std::string& path) {
  const json* ci = reader.Array(object, key, path);
  if (ci == nullptr) return std::nullopt;
  const std::string at = FieldPath(path, key);
  auto bound_ok = [&](size_t i) {
    const json& bound = (*ci)[i];
    return reader.Expect(bound, bound.is_number() || bound.is_null(), "a number or null",
                         ElementPath(at, i));
  };
  if (ci->size() != 2) {
    reader.Fail(at, "expected [lower, upper], got " + std::to_string(ci->size()) + " elements");
  } else if (bound_ok(0) && bound_ok(1) && (*ci)[0].is_number() && (*ci)[1].is_number()) {
    return Interval{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
  }
  return std::nullopt;
}

PairedDetail ReadPairedDetail(Reader& reader, const json& object, const std::string& path) {
  namespace k = keys::paired_result;
  PairedDetail d;
  d.blocks = reader.Integer(object, k::kBlocks, path, 0).value_or(0);
  d.noise = reader.Number(object, k::kNoise, path).value_or(0);
  d.drift = reader.Number(object, k::kDrift, path).value_or(0);
  d.t_ci = ReadInterval(reader, object, k::kTCi, path);
  d.bootstrap_ci = ReadInterval(reader, object, k::kBootstrapCi, path);
  d.median_change = reader.Number(object, k::kMedianChange, path).value_or(0);
  d.hodges_lehmann = reader.Number(object, k::kHodgesLehmann, path).value_or(0);
  d.p_t = reader.Number(object, k::kPT, path).value_or(0);
  d.p_wilcoxon = reader.Number(object, k::kPWilcoxon, path).value_or(0);
  d.p_sign = reader.Number(object, k::kPSign, path).value_or(0);
  d.blocks_needed = reader.Integer(object, k::kBlocksNeeded, path, 0).value_or(0);
  d.decided_at_look = reader.Integer(object, k::kDecidedAtLook, path, -1).value_or(-1);
  return d;
}

// A newer server may add design keys; this reader, unlike the request's, ignores them.
PairedSummary ReadPairedSummary(Reader& reader, const json& object, const std::string& path) {
  namespace k = keys::paired;
  PairedSummary p;
  p.baseline_commit = reader.String(object, k::kBaselineCommit, path);
  if (const json* design = reader.Object(object, k::kDesign, path)) {
    const std::string at = FieldPath(path, k::kDesign);
    namespace dk = keys::design;
    PairedDesign& d = p.design;
    d.repetitions = reader.Integer(*design, dk::kRepetitions, at, 0).value_or(d.repetitions);
    d.min_blocks = reader.Integer(*design, dk::kMinBlocks, at, 0).value_or(d.min_blocks);
    d.max_blocks = reader.Integer(*design, dk::kMaxBlocks, at, 0).value_or(d.max_blocks);
    d.growth = reader.Number(*design, dk::kGrowth, at).value_or(d.growth);
    d.test = reader.OptString(*design, dk::kTest, at).value_or(d.test);
    d.seed = static_cast<uint64_t>(reader.Integer(*design, dk::kSeed, at, 0).value_or(0));
    d.stopped = reader.OptString(*design, dk::kStopped, at).value_or(d.stopped);
  }
  p.amends = reader.Integer(object, k::kAmends, path, 1);
  p.measured = reader.Integer(object, k::kMeasured, path, 0).value_or(0);
  p.look = reader.Integer(object, k::kLook, path, 0).value_or(0);
  p.looks = reader.Integer(object, k::kLooks, path, 0).value_or(0);
  p.blocks = reader.Integer(object, k::kBlocks, path, 0).value_or(0);
  p.geomean_change = reader.Number(object, k::kGeomeanChange, path);
  p.geomean_ci = ReadInterval(reader, object, k::kGeomeanCi, path);
  return p;
}

MetricResult ReadResult(Reader& reader, const json& object, const std::string& path) {
  MetricResult r;
  r.key.suite = reader.String(object, keys::result::kSuite, path, /*required=*/true);
  r.key.benchmark = reader.String(object, keys::result::kBenchmark, path, /*required=*/true);
  r.key.metric = reader.String(object, keys::result::kMetric, path, /*required=*/true);
  r.unit = reader.String(object, keys::result::kUnit, path);
  r.direction = reader.Direction(object, keys::result::kDirection, path);
  r.threshold = reader.Number(object, keys::result::kThreshold, path);
  if (auto kind = reader.OptString(object, keys::result::kVerdict, path, /*required=*/true)) {
    if (auto parsed = ParseResultKind(*kind)) {
      r.kind = *parsed;
    } else {
      constexpr std::string_view kKinds =
          "REGRESSION, IMPROVEMENT, EQUIVALENT, INCONCLUSIVE, UNSTABLE, PASS, REPORTED, IGNORED or "
          "NEW";
      reader.Fail(FieldPath(path, keys::result::kVerdict),
                  "expected " + std::string(kKinds) + ", got \"" + *kind + "\"");
    }
  }
  r.base = ReadSummary(reader, object, keys::result::kBase, path);
  r.current = ReadSummary(reader, object, keys::result::kCurrent, path);
  r.change = reader.Number(object, keys::result::kChange, path);
  r.change_ci = ReadInterval(reader, object, keys::result::kChangeCi, path);
  r.p_value = reader.Number(object, keys::result::kPValue, path);
  r.p_adjusted = reader.Number(object, keys::result::kPAdjusted, path);
  // -1: the server could not estimate the noise (a side with one value, like GPU telemetry).
  r.repetitions_needed =
      reader.Integer(object, keys::result::kRepetitionsNeeded, path, -1).value_or(0);
  r.reason = reader.String(object, keys::result::kReason, path);
  // Servers before attribution and environment notes leave both out.
  if (const json* attribution = reader.Object(object, keys::result::kAttribution, path)) {
    r.attribution =
        ReadAttribution(reader, *attribution, FieldPath(path, keys::result::kAttribution));
  }
  r.environment = reader.String(object, keys::result::kEnvironment, path);
  if (const json* paired = reader.Object(object, keys::result::kPaired, path)) {
    r.paired = ReadPairedDetail(reader, *paired, FieldPath(path, keys::result::kPaired));
  }
  return r;
}

Verdict ReadVerdict(Reader& reader, const json& object, const std::string& path) {
  Verdict v;
  v.id = reader.Integer(object, keys::verdict::kId, path).value_or(0);
  v.run_id = reader.String(object, keys::verdict::kRunId, path);
  v.created_at = reader.String(object, keys::verdict::kCreatedAt, path);
  v.project = reader.String(object, keys::verdict::kProject, path);
  if (auto outcome = reader.OptString(object, keys::verdict::kOutcome, path, /*required=*/true)) {
    if (*outcome == "regression") {
      v.outcome = Outcome::kRegression;
    } else if (*outcome == "pass") {
      v.outcome = Outcome::kPass;
    } else if (*outcome == "no_baseline") {
      v.outcome = Outcome::kNoBaseline;
    } else if (*outcome == "noisy_environment") {
      v.outcome = Outcome::kNoisyEnvironment;
    } else {
      reader.Fail(FieldPath(path, keys::verdict::kOutcome),
                  "expected \"regression\", \"pass\", \"no_baseline\" or "
                  "\"noisy_environment\", got \"" +
                      *outcome + "\"");
    }
  }
  v.algorithm_version = reader.String(object, keys::verdict::kAlgorithmVersion, path);
  if (const json* parameters = reader.Object(object, keys::verdict::kParameters, path)) {
    v.parameters = ReadParameters(reader, *parameters, FieldPath(path, keys::verdict::kParameters));
  }
  if (const json* baseline = reader.Object(object, keys::verdict::kBaseline, path)) {
    v.baseline = ReadBaseline(reader, *baseline, FieldPath(path, keys::verdict::kBaseline));
  }
  v.contender_run_ids = reader.Strings(object, keys::verdict::kContenderRunIds, path);
  v.commit = reader.String(object, keys::verdict::kCommit, path);
  v.branch = reader.String(object, keys::verdict::kBranch, path);
  v.testbed = reader.String(object, keys::verdict::kTestbed, path);
  v.pr = reader.Integer(object, keys::verdict::kPr, path);
  v.warnings = reader.Strings(object, keys::verdict::kWarnings, path);
  v.report_url = reader.OptString(object, keys::verdict::kReportUrl, path);
  v.runner_version = reader.OptString(object, keys::verdict::kRunnerVersion, path);
  if (const json* shift = reader.Object(object, keys::verdict::kEnvironmentShift, path)) {
    const std::string at = FieldPath(path, keys::verdict::kEnvironmentShift);
    EnvironmentShift e;
    e.metrics = reader.Integer(*shift, keys::shift::kMetrics, at, 0, true).value_or(0);
    e.median_change = reader.Number(*shift, keys::shift::kMedianChange, at, true).value_or(0);
    e.geomean_change = reader.Number(*shift, keys::shift::kGeomeanChange, at, true).value_or(0);
    e.same_sign_share = reader.Number(*shift, keys::shift::kSameSignShare, at, true).value_or(0);
    e.reason = reader.String(*shift, keys::shift::kReason, at);
    v.environment_shift = std::move(e);
  }
  if (const json* paired = reader.Object(object, keys::verdict::kPaired, path)) {
    v.paired = ReadPairedSummary(reader, *paired, FieldPath(path, keys::verdict::kPaired));
  }
  if (auto it = object.find(keys::verdict::kResults); it != object.end() && it->is_array()) {
    v.results.reserve(it->size());  // a verdict of thousands of rows is read in one go
  }
  reader.ForEachObject(object, keys::verdict::kResults, path, /*required=*/true,
                       [&](const json& item, const std::string& at) {
                         v.results.push_back(ReadResult(reader, item, at));
                       });
  if (const json* counts = reader.Object(object, keys::verdict::kCounts, path)) {
    v.counts = ReadCounts(reader, *counts, FieldPath(path, keys::verdict::kCounts));
  } else {
    v.counts = CountResults(v.results);
  }
  return v;
}

}  // namespace

Result<Verdict> DecodeVerdict(std::string_view text) {
  auto parsed = ParseJsonDocument<json>(text, "verdict");
  if (!parsed) return tl::unexpected(parsed.error());
  return ReadDocument<Verdict>(*parsed, keys::verdict::kEnvelope, ReadVerdict);
}

}  // namespace perfwarden::wire
