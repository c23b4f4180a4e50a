// Decoding and encoding of a verdict request (POST body) and of the parameters stored with a
// verdict, which are the same object, so that a replay judges exactly as the original did.
#include <cmath>
#include <set>

#include "server/gate/verdict.h"
#include "wire/json_type_name.h"

namespace perfgate::server::gate {
namespace {

using nlohmann::json;

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

Result<judge::ThresholdRule> DecodeRule(const json& item, const std::string& field) {
  if (!item.is_object()) {
    return InvalidArgument("expected an object, got " + std::string(JsonTypeName(item)), field);
  }
  judge::ThresholdRule rule;
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

}  // namespace

Result<VerdictRequest> DecodeParameters(const json& body) {
  VerdictRequest request;
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key == "threshold") {
      auto x = Number(value, key, 0, 1, false);
      if (!x) return tl::unexpected(x.error());
      request.policy.threshold = *x;
    } else if (key == "alpha") {
      auto x = Number(value, key, 0, 0.5, false);
      if (!x) return tl::unexpected(x.error());
      request.policy.alpha = *x;
    } else if (key == "test") {
      auto text = String(value, key);
      if (!text) return tl::unexpected(text.error());
      auto test = stats::ParseVerdictTest(*text);
      if (!test) return InvalidArgument("must be utest, welch or welch-log", key);
      request.policy.test = *test;
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
               key == "seed" || key == "power" || key == "algorithm_version") {
      // Stored with every verdict for the record; fixed by the algorithm version, not chosen
      // by the client.
    } else {
      return InvalidArgument("unknown key (known: threshold, alpha, test, rules, contender_runs)",
                             key);
    }
  }
  return request;
}

Result<VerdictRequest> DecodeVerdictRequest(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return VerdictRequest{};
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InvalidArgument("the body is not valid JSON");
  return DecodeParameters(parsed);
}

json EncodeParameters(const VerdictRequest& request) {
  const stats::VerdictPolicy& p = request.policy;
  json rules = json::array();
  for (const judge::ThresholdRule& r : request.rules) {
    json rule = {{"suite", r.suite}, {"benchmark", r.benchmark}, {"metric", r.metric}};
    if (r.percent > 0) rule["percent"] = r.percent;
    if (r.alpha > 0) rule["alpha"] = r.alpha;
    if (r.ignore) rule["ignore"] = true;
    rules.push_back(std::move(rule));
  }
  return {{"threshold", p.threshold},
          {"alpha", p.alpha},
          {"test", std::string(stats::VerdictTestName(p.test))},
          {"correction", "holm"},
          {"confidence", p.confidence},
          {"bootstrap_resamples", p.bootstrap_resamples},
          {"seed", p.seed},
          {"power", p.power},
          {"rules", std::move(rules)}};
}

}  // namespace perfgate::server::gate
