#include "wire/verdict_request.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "wire/json_type_name.h"

namespace perfgate::wire {
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
  return text;
}

Result<ThresholdRule> DecodeRule(const json& item, const std::string& field) {
  if (!item.is_object()) {
    return InvalidArgument("expected an object, got " + std::string(JsonTypeName(item)), field);
  }
  ThresholdRule rule;
  for (const auto& [key, value] : item.items()) {
    const std::string f = field + "." + key;
    if (key == "suite" || key == "benchmark" || key == "metric") {
      auto text = String(value, f);
      if (!text) return tl::unexpected(text.error());
      (key == "suite" ? rule.suite : key == "benchmark" ? rule.benchmark : rule.metric) = *text;
    } else if (key == "percent") {
      auto x = Number(value, f, 0, 100, false);
      if (!x) return tl::unexpected(x.error());
      rule.percent = *x;
    } else if (key == "alpha") {
      auto x = Number(value, f, 0, 0.5, false);
      if (!x) return tl::unexpected(x.error());
      rule.alpha = *x;
    } else if (key == "ignore") {
      if (!value.is_boolean()) return InvalidArgument("expected true or false", f);
      rule.ignore = value.get<bool>();
    } else {
      return InvalidArgument(
          "unknown key (known: suite, benchmark, metric, percent, alpha, ignore)", f);
    }
  }
  return rule;
}

// The record keys: kept when their type fits, ignored otherwise (a client does not choose them).
void DecodeRecord(const std::string& key, const json& value, VerdictRequest& request) {
  if (key == "correction" && value.is_string()) {
    request.correction = value.get<std::string>();
  } else if (key == "confidence" && value.is_number()) {
    request.confidence = value.get<double>();
  } else if (key == "bootstrap_resamples" && value.is_number_integer()) {
    request.bootstrap_resamples = value.get<int64_t>();
  } else if (key == "seed" && value.is_number_unsigned()) {
    request.seed = value.get<uint64_t>();
  } else if (key == "power" && value.is_number()) {
    request.power = value.get<double>();
  }
}

}  // namespace

std::span<const std::string_view> VerdictTestWords() { return kTestWords; }

Result<VerdictRequest> DecodeVerdictRequest(const json& body) {
  VerdictRequest request;
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key == "threshold") {
      auto x = Number(value, key, 0, 1, false);
      if (!x) return tl::unexpected(x.error());
      request.threshold = *x;
    } else if (key == "alpha") {
      auto x = Number(value, key, 0, 0.5, false);
      if (!x) return tl::unexpected(x.error());
      request.alpha = *x;
    } else if (key == "test") {
      auto text = String(value, key);
      if (!text) return tl::unexpected(text.error());
      if (std::find(kTestWords.begin(), kTestWords.end(), *text) == kTestWords.end()) {
        return InvalidArgument("must be utest, welch or welch-log", key);
      }
      request.test = *text;
    } else if (key == "rules") {
      if (!value.is_array()) return InvalidArgument("expected an array", key);
      if (value.size() > 1000) return InvalidArgument("at most 1000 rules", key);
      for (size_t i = 0; i < value.size(); ++i) {
        auto rule = DecodeRule(value[i], "rules[" + std::to_string(i) + "]");
        if (!rule) return tl::unexpected(rule.error());
        request.rules.push_back(*rule);
      }
    } else if (key == "contender_runs") {
      if (!value.is_array()) return InvalidArgument("expected an array of run ids", key);
      if (value.size() > 100) return InvalidArgument("at most 100 runs", key);
      std::set<std::string> seen;
      for (size_t i = 0; i < value.size(); ++i) {
        auto id = String(value[i], key + "[" + std::to_string(i) + "]");
        if (!id) return tl::unexpected(id.error());
        if (seen.insert(*id).second) request.contender_runs.push_back(*id);
      }
    } else if (key == "correction" || key == "confidence" || key == "bootstrap_resamples" ||
               key == "seed" || key == "power") {
      DecodeRecord(key, value, request);
    } else if (key == "algorithm_version") {
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
    json rule = {{"suite", r.suite.empty() ? "*" : r.suite},
                 {"benchmark", r.benchmark},
                 {"metric", r.metric}};
    if (r.percent) rule["percent"] = *r.percent;
    if (r.alpha) rule["alpha"] = *r.alpha;
    if (r.ignore) rule["ignore"] = true;
    rules.push_back(std::move(rule));
  }
  json body = {{"rules", std::move(rules)}};
  if (request.threshold) body["threshold"] = *request.threshold;
  if (request.alpha) body["alpha"] = *request.alpha;
  if (request.test) body["test"] = *request.test;
  if (!request.contender_runs.empty()) body["contender_runs"] = request.contender_runs;
  if (request.correction) body["correction"] = *request.correction;
  if (request.confidence) body["confidence"] = *request.confidence;
  if (request.bootstrap_resamples) body["bootstrap_resamples"] = *request.bootstrap_resamples;
  if (request.seed) body["seed"] = *request.seed;
  if (request.power) body["power"] = *request.power;
  return body;
}

}  // namespace perfgate::wire
