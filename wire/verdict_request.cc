// SPDX-License-Identifier: Apache-2.0
#include "wire/verdict_request.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "wire/json_type_name.h"
#include "wire/verdict_keys.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 4> kTestWords = {"utest", "mann-whitney", "welch",
                                                        "welch-log"};

Result<double> Number(const json& value, const std::string& field, double low, double high,
                      bool low_inclusive) {
  if (!value.is_number()) {
    return InvalidArgument("expected a number, got " + std::string(JsonTypeName(value)), field);
  }
  const double x = value.get<double>();
  if (!std::isfinite(x) || x > high || (low_inclusive ? x < low : x <= low)) {
    return InvalidArgument("must be in " + std::string(low_inclusive ? "[" : "(") +
                               json(low).dump() + ", " + json(high).dump() + "]",
                           field);
  }
  return x;
}

Result<std::string> String(const json& value, const std::string& field) {
  if (!value.is_string()) {
    return InvalidArgument("expected a string, got " + std::string(JsonTypeName(value)), field);
  }
  const std::string text = value.get<std::string>();
  if (text.empty() || text.size() > 1024) return InvalidArgument("1 to 1024 characters", field);
  // PostgreSQL text cannot hold U+0000: refused here, naming the field, not at the insert.
  if (text.find('\0') != std::string::npos) {
    return InvalidArgument("contains a NUL character (U+0000)", field);
  }
  return text;
}

Result<ThresholdRule> DecodeRule(const json& item, const std::string& field) {
  if (!item.is_object()) {
    return InvalidArgument("expected an object, got " + std::string(JsonTypeName(item)), field);
  }
  ThresholdRule rule;
  for (const auto& [key, value] : item.items()) {
    const std::string f = field + "." + key;
    if (key == keys::rule::kSuite || key == keys::rule::kBenchmark || key == keys::rule::kMetric) {
      auto text = String(value, f);
      if (!text) return tl::unexpected(text.error());
      (key == keys::rule::kSuite       ? rule.suite
       : key == keys::rule::kBenchmark ? rule.benchmark
                                       : rule.metric) = *text;
    } else if (key == keys::rule::kPercent) {
      auto x = Number(value, f, 0, 100, false);
      if (!x) return tl::unexpected(x.error());
      rule.percent = *x;
    } else if (key == keys::rule::kAlpha) {
      auto x = Number(value, f, 0, 0.5, false);
      if (!x) return tl::unexpected(x.error());
      rule.alpha = *x;
    } else if (key == keys::rule::kIgnore) {
      if (!value.is_boolean()) return InvalidArgument("expected true or false", f);
      rule.ignore = value.get<bool>();
    } else if (key == keys::rule::kGate) {
      if (!value.is_boolean()) return InvalidArgument("expected true or false", f);
      rule.gate = value.get<bool>();
    } else {
      return InvalidArgument(
          "unknown key (known: suite, benchmark, metric, percent, alpha, ignore, gate)", f);
    }
  }
  return rule;
}

// The record keys: kept when their type fits, ignored otherwise (a client does not choose them).
void DecodeRecord(const std::string& key, const json& value, VerdictRequest& request) {
  if (key == keys::parameters::kCorrection && value.is_string()) {
    request.correction = value.get<std::string>();
  } else if (key == keys::parameters::kConfidence && value.is_number()) {
    request.confidence = value.get<double>();
  } else if (key == keys::parameters::kBootstrapResamples && value.is_number_integer()) {
    request.bootstrap_resamples = value.get<int64_t>();
  } else if (key == keys::parameters::kSeed && value.is_number_unsigned()) {
    request.seed = value.get<uint64_t>();
  } else if (key == keys::parameters::kPower && value.is_number()) {
    request.power = value.get<double>();
  }
}

}  // namespace

std::span<const std::string_view> VerdictTestWords() { return kTestWords; }

Result<VerdictRequest> DecodeVerdictRequest(const json& body) {
  VerdictRequest request;
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key == keys::parameters::kThreshold) {
      auto x = Number(value, key, 0, 1, false);
      if (!x) return tl::unexpected(x.error());
      request.threshold = *x;
    } else if (key == keys::parameters::kAlpha) {
      auto x = Number(value, key, 0, 0.5, false);
      if (!x) return tl::unexpected(x.error());
      request.alpha = *x;
    } else if (key == keys::parameters::kTest) {
      auto text = String(value, key);
      if (!text) return tl::unexpected(text.error());
      if (std::find(kTestWords.begin(), kTestWords.end(), *text) == kTestWords.end()) {
        return InvalidArgument("must be utest, welch or welch-log", key);
      }
      request.test = *text;
    } else if (key == keys::parameters::kRules) {
      if (!value.is_array()) return InvalidArgument("expected an array", key);
      if (value.size() > 1000) return InvalidArgument("at most 1000 rules", key);
      for (size_t i = 0; i < value.size(); ++i) {
        auto rule = DecodeRule(value[i], "rules[" + std::to_string(i) + "]");
        if (!rule) return tl::unexpected(rule.error());
        request.rules.push_back(*rule);
      }
    } else if (key == keys::parameters::kContenderRuns) {
      if (!value.is_array()) return InvalidArgument("expected an array of run ids", key);
      if (value.size() > 100) return InvalidArgument("at most 100 runs", key);
      std::set<std::string> seen;
      for (size_t i = 0; i < value.size(); ++i) {
        auto id = String(value[i], key + "[" + std::to_string(i) + "]");
        if (!id) return tl::unexpected(id.error());
        if (seen.insert(*id).second) request.contender_runs.push_back(*id);
      }
    } else if (key == keys::parameters::kCorrection || key == keys::parameters::kConfidence ||
               key == keys::parameters::kBootstrapResamples || key == keys::parameters::kSeed ||
               key == keys::parameters::kPower) {
      DecodeRecord(key, value, request);
    } else if (key == keys::verdict::kAlgorithmVersion) {
      // Stored beside the parameters, not in them; a client may send it back unchanged.
    } else {
      return InvalidArgument("unknown key (known: threshold, alpha, test, rules, contender_runs)",
                             key);
    }
  }
  return request;
}

Result<VerdictRequest> ParseVerdictRequest(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return VerdictRequest{};
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InvalidArgument("the body is not valid JSON");
  return DecodeVerdictRequest(parsed);
}

json EncodeVerdictRequest(const VerdictRequest& request) {
  json rules = json::array();
  for (const ThresholdRule& r : request.rules) {
    json rule = {{keys::rule::kSuite, r.suite.empty() ? "*" : r.suite},
                 {keys::rule::kBenchmark, r.benchmark},
                 {keys::rule::kMetric, r.metric}};
    if (r.percent) rule[keys::rule::kPercent] = *r.percent;
    if (r.alpha) rule[keys::rule::kAlpha] = *r.alpha;
    if (r.ignore) rule[keys::rule::kIgnore] = true;
    if (r.gate) rule[keys::rule::kGate] = *r.gate;
    rules.push_back(std::move(rule));
  }
  json body = {{keys::parameters::kRules, std::move(rules)}};
  if (request.threshold) body[keys::parameters::kThreshold] = *request.threshold;
  if (request.alpha) body[keys::parameters::kAlpha] = *request.alpha;
  if (request.test) body[keys::parameters::kTest] = *request.test;
  if (!request.contender_runs.empty()) {
    body[keys::parameters::kContenderRuns] = request.contender_runs;
  }
  if (request.correction) body[keys::parameters::kCorrection] = *request.correction;
  if (request.confidence) body[keys::parameters::kConfidence] = *request.confidence;
  if (request.bootstrap_resamples) {
    body[keys::parameters::kBootstrapResamples] = *request.bootstrap_resamples;
  }
  if (request.seed) body[keys::parameters::kSeed] = *request.seed;
  if (request.power) body[keys::parameters::kPower] = *request.power;
  return body;
}

}  // namespace perfwarden::wire
