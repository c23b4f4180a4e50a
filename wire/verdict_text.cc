// SPDX-License-Identifier: Apache-2.0
// The verdict's parts written as text (the server's fast path) and the stored parts spliced into
// the response body. Keys come from wire/verdict_keys.h; objects are written in nlohmann's order.
#include "wire/verdict_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "wire/verdict_keys.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

// nlohmann's dump sorts keys, and these objects are written in its order.
constexpr std::array kResultOrder = {keys::result::kAttribution, keys::result::kBase,
                                     keys::result::kBenchmark,   keys::result::kChange,
                                     keys::result::kChangeCi,    keys::result::kCurrent,
                                     keys::result::kDirection,   keys::result::kEnvironment,
                                     keys::result::kMetric,      keys::result::kPAdjusted,
                                     keys::result::kPValue,      keys::result::kPaired,
                                     keys::result::kReason,      keys::result::kRepetitionsNeeded,
                                     keys::result::kSuite,       keys::result::kThreshold,
                                     keys::result::kUnit,        keys::result::kVerdict};
static_assert(std::ranges::is_sorted(kResultOrder));
constexpr std::array kSideOrder = {keys::side::kCv, keys::side::kMedian, keys::side::kN};
static_assert(std::ranges::is_sorted(kSideOrder));
constexpr std::array kAttributionOrder = {keys::attribution::kHint, keys::attribution::kMoved,
                                          keys::attribution::kRoofline};
static_assert(std::ranges::is_sorted(kAttributionOrder));
constexpr std::array kMovedOrder = {keys::moved::kChange, keys::moved::kMetric,
                                    keys::moved::kVerdict};
static_assert(std::ranges::is_sorted(kMovedOrder));
constexpr std::array kRooflineOrder = {keys::roofline::kClass, keys::roofline::kIntensity,
                                       keys::roofline::kRidge};
static_assert(std::ranges::is_sorted(kRooflineOrder));

// A finite number in its shortest round-trip form; "null" for NaN and infinities (JSON has
// neither).
void AppendNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

void AppendNumber(std::string& out, const std::optional<double>& value) {
  if (value) {
    AppendNumber(out, *value);
  } else {
    out += "null";
  }
}

// A JSON string literal, escaped (invalid UTF-8 replaced, as the stored texts always were).
void AppendString(std::string& out, std::string_view value) {
  out += json(value).dump(-1, ' ', false, json::error_handler_t::replace);
}

// `before` then `"key":`; the key is one of verdict_keys.h's plain words (not escaped).
void AppendKey(std::string& out, std::string_view before, std::string_view key) {
  out += before;
  out += '"';
  out += key;
  out += "\":";
}

void AppendSide(std::string& out, const std::optional<Summary>& side) {
  if (!side) {
    out += "null";
    return;
  }
  AppendKey(out, "{", keys::side::kCv);
  AppendNumber(out, side->cv);
  AppendKey(out, ",", keys::side::kMedian);
  AppendNumber(out, side->median);
  AppendKey(out, ",", keys::side::kN);
  out += std::to_string(side->n);
  out += '}';
}

void AppendInterval(std::string& out, const std::optional<Interval>& interval) {
  if (!interval) {
    out += "null";
    return;
  }
  out += '[';
  AppendNumber(out, interval->lower);
  out += ',';
  AppendNumber(out, interval->upper);
  out += ']';
}

void AppendResult(std::string& out, const MetricResult& r) {
  out += '{';
  if (r.attribution) {
    AppendKey(out, "", keys::result::kAttribution);
    out += EncodeAttributionText(*r.attribution);
    out += ',';
  }
  AppendKey(out, "", keys::result::kBase);
  AppendSide(out, r.base);
  AppendKey(out, ",", keys::result::kBenchmark);
  AppendString(out, r.key.benchmark);
  AppendKey(out, ",", keys::result::kChange);
  AppendNumber(out, r.change);
  AppendKey(out, ",", keys::result::kChangeCi);
  AppendInterval(out, r.change_ci);
  AppendKey(out, ",", keys::result::kCurrent);
  AppendSide(out, r.current);
  AppendKey(out, ",", keys::result::kDirection);
  AppendString(out, DirectionName(r.direction));
  if (!r.environment.empty()) {
    AppendKey(out, ",", keys::result::kEnvironment);
    AppendString(out, r.environment);
  }
  AppendKey(out, ",", keys::result::kMetric);
  AppendString(out, r.key.metric);
  AppendKey(out, ",", keys::result::kPAdjusted);
  AppendNumber(out, r.p_adjusted);
  AppendKey(out, ",", keys::result::kPValue);
  AppendNumber(out, r.p_value);
  if (r.paired) {
    AppendKey(out, ",", keys::result::kPaired);
    out += EncodePairedDetail(*r.paired).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  AppendKey(out, ",", keys::result::kReason);
  AppendString(out, r.reason);
  AppendKey(out, ",", keys::result::kRepetitionsNeeded);
  out += std::to_string(r.repetitions_needed);
  AppendKey(out, ",", keys::result::kSuite);
  AppendString(out, r.key.suite);
  AppendKey(out, ",", keys::result::kThreshold);
  AppendNumber(out, r.threshold);
  AppendKey(out, ",", keys::result::kUnit);
  AppendString(out, r.unit);
  AppendKey(out, ",", keys::result::kVerdict);
  AppendString(out, ResultKindName(r.kind));
  out += '}';
}

}  // namespace

json EncodeCounts(const Counts& c, bool paired) {
  json out = {
      {keys::counts::kRegression, c.regression}, {keys::counts::kImprovement, c.improvement},
      {keys::counts::kEquivalent, c.equivalent}, {keys::counts::kInconclusive, c.inconclusive},
      {keys::counts::kIgnored, c.ignored},       {keys::counts::kNew, c.new_metrics},
      {keys::counts::kReported, c.reported}};
  if (paired) {
    out[keys::counts::kUnstable] = c.unstable;
    out[keys::counts::kPass] = c.pass;
  }
  return out;
}

std::string EncodeAttributionText(const Attribution& a) {
  std::string out = "{";
  if (!a.hint.empty()) {
    AppendKey(out, "", keys::attribution::kHint);
    AppendString(out, a.hint);
    out += ',';
  }
  AppendKey(out, "", keys::attribution::kMoved);
  out += '[';
  for (size_t i = 0; i < a.moved.size(); ++i) {
    AppendKey(out, i == 0 ? "{" : ",{", keys::moved::kChange);
    AppendNumber(out, a.moved[i].change);
    AppendKey(out, ",", keys::moved::kMetric);
    AppendString(out, a.moved[i].metric);
    AppendKey(out, ",", keys::moved::kVerdict);
    AppendString(out, a.moved[i].verdict);
    out += '}';
  }
  out += ']';
  if (a.roofline) {
    AppendKey(out, ",", keys::attribution::kRoofline);
    AppendKey(out, "{", keys::roofline::kClass);
    AppendString(out, a.roofline->bound);
    AppendKey(out, ",", keys::roofline::kIntensity);
    AppendNumber(out, a.roofline->intensity);
    AppendKey(out, ",", keys::roofline::kRidge);
    AppendNumber(out, a.roofline->ridge);
    out += '}';
  }
  return out + "}";
}

std::string EncodeResultsText(std::span<const MetricResult> results) {
  std::string out = "[";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i > 0) out += ',';
    AppendResult(out, results[i]);
  }
  return out + "]";
}

std::string EncodeVerdictSummary(const Verdict& v) {
  json out = {{keys::verdict::kCommit, v.commit},
              {keys::verdict::kBranch, v.branch},
              {keys::verdict::kTestbed, v.testbed},
              {keys::verdict::kPr, v.pr ? json(*v.pr) : json(nullptr)},
              {keys::verdict::kCounts, EncodeCounts(v.counts, v.paired.has_value())},
              {keys::verdict::kWarnings, v.warnings}};
  if (v.runner_version) out[keys::verdict::kRunnerVersion] = *v.runner_version;
  if (v.environment_shift) {
    out[keys::verdict::kEnvironmentShift] = EncodeEnvironmentShift(*v.environment_shift);
  }
  if (v.paired) out[keys::verdict::kPaired] = EncodePairedSummary(*v.paired);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

json EncodeBaseline(const Baseline& b) {
  return {{keys::baseline::kCommit, b.commit},       {keys::baseline::kBranch, b.branch},
          {keys::baseline::kTestbed, b.testbed},     {keys::baseline::kRunIds, b.run_ids},
          {keys::baseline::kSelection, b.selection}, {keys::baseline::kDistance, b.distance}};
}

std::string EncodeVerdictBody(const StoredVerdictText& v) {
  std::string out;
  out.reserve(v.results_json.size() + v.parameters_json.size() + v.summary_json.size() + 1024);
  AppendKey(out, "{", keys::verdict::kEnvelope);
  AppendKey(out, "{", keys::verdict::kId);
  out += std::to_string(v.id);
  AppendKey(out, ",", keys::verdict::kRunId);
  AppendString(out, v.run_id);
  AppendKey(out, ",", keys::verdict::kCreatedAt);
  AppendString(out, v.created_at);
  AppendKey(out, ",", keys::verdict::kOutcome);
  AppendString(out, v.outcome);
  AppendKey(out, ",", keys::verdict::kAlgorithmVersion);
  AppendString(out, v.algorithm_version);
  AppendKey(out, ",", keys::verdict::kParameters);
  out += v.parameters_json;
  AppendKey(out, ",", keys::verdict::kBaseline);
  out += v.baseline_json.empty() ? std::string_view("null") : v.baseline_json;
  AppendKey(out, ",", keys::verdict::kContenderRunIds);
  out += json(std::vector<std::string>(v.contender_run_ids.begin(), v.contender_run_ids.end()))
             .dump(-1, ' ', false, json::error_handler_t::replace);
  // The summary object's members (commit, branch, testbed, pr, counts, warnings and, when set,
  // runner_version, environment_shift, paired), spliced in.
  const size_t open = v.summary_json.find('{');
  const size_t close = v.summary_json.rfind('}');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open + 1) {
    const std::string_view members = v.summary_json.substr(open + 1, close - open - 1);
    if (members.find_first_not_of(" \t\n") != std::string_view::npos) {
      out += ',';
      out += members;
    }
  }
  AppendKey(out, ",", keys::verdict::kResults);
  out += v.results_json;
  out += "}}";
  return out;
}

Result<Verdict> DecodeStoredVerdict(const StoredVerdictText& stored) {
  return DecodeVerdict(EncodeVerdictBody(stored));
}

}  // namespace perfwarden::wire
