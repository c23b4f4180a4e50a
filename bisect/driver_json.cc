// SPDX-License-Identifier: Apache-2.0
// The JSON of a bisect's log and options (bisect/driver.h): what the state file of a local bisect
// and the server's steps of a remote one hold. Decoders check the shape and name the field at
// fault.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "bisect/driver.h"

namespace perfwarden::bisect {
namespace {

using nlohmann::json;

template <typename T>
Result<T> Field(const json& j, const char* name, const std::string& prefix = "") {
  auto it = j.find(name);
  if (it == j.end()) return InvalidArgument("is missing", prefix + name);
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return InvalidArgument("has the wrong type", prefix + name);
  }
}

}  // namespace

json RequestJson(const Request& request) {
  return {{"targets", request.targets}, {"repetitions", request.repetitions}};
}

Result<Request> RequestFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("must be an object", "request");
  Request r;
  auto targets = Field<std::vector<std::size_t>>(j, "targets", "request.");
  if (!targets) return tl::unexpected(targets.error());
  auto repetitions = Field<int>(j, "repetitions", "request.");
  if (!repetitions) return tl::unexpected(repetitions.error());
  if (targets->empty()) return InvalidArgument("must not be empty", "request.targets");
  if (*repetitions < 1) return InvalidArgument("must be positive", "request.repetitions");
  r.targets = std::move(*targets);
  r.repetitions = *repetitions;
  return r;
}

json MeasurementJson(const Measurement& m) {
  json results = json::array();
  for (const TargetResult& r : m.results) {
    json one = {{"samples", r.samples}};
    if (r.skipped) {
      one["skipped"] = true;
      one["note"] = r.note;
    }
    results.push_back(std::move(one));
  }
  return {{"request", RequestJson(m.request)},
          {"results", std::move(results)},
          {"suite", m.suite},
          {"metric", m.metric},
          {"direction", std::string(DirectionName(m.direction))}};
}

Result<Measurement> MeasurementFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("must be an object", "measurement");
  Measurement m;
  auto request = RequestFromJson(j.value("request", json()));
  if (!request) return tl::unexpected(request.error());
  m.request = std::move(*request);
  auto results = j.find("results");
  if (results == j.end() || !results->is_array() || results->size() != m.request.targets.size()) {
    return InvalidArgument("must be an array with one result per target", "measurement.results");
  }
  for (std::size_t i = 0; i < results->size(); ++i) {
    const json& r = (*results)[i];
    const std::string where = "measurement.results[" + std::to_string(i) + "].";
    if (!r.is_object()) return InvalidArgument("must be an object", where);
    TargetResult t;
    auto samples = Field<std::vector<double>>(r, "samples", where);
    if (!samples) return tl::unexpected(samples.error());
    for (const double x : *samples) {
      if (!std::isfinite(x)) return InvalidArgument("must be finite numbers", where + "samples");
    }
    t.samples = std::move(*samples);
    t.skipped = r.value("skipped", false);
    t.note = r.value("note", "");
    if (!t.skipped && t.samples.empty()) {
      return InvalidArgument("must not be empty unless skipped", where + "samples");
    }
    m.results.push_back(std::move(t));
  }
  auto suite = Field<std::string>(j, "suite", "measurement.");
  if (!suite) return tl::unexpected(suite.error());
  auto metric = Field<std::string>(j, "metric", "measurement.");
  if (!metric) return tl::unexpected(metric.error());
  auto direction = Field<std::string>(j, "direction", "measurement.");
  if (!direction) return tl::unexpected(direction.error());
  auto parsed = ParseDirection(*direction);
  if (!parsed) {
    return InvalidArgument("must be " + std::string(DirectionName(Direction::kLowerIsBetter)) +
                               " or " + std::string(DirectionName(Direction::kHigherIsBetter)),
                           "measurement.direction");
  }
  m.suite = std::move(*suite);
  m.metric = std::move(*metric);
  m.direction = *parsed;
  return m;
}

json SearchOptionsJson(const SearchOptions& o) {
  return {{"threshold", o.threshold},
          {"repetitions", o.repetitions},
          {"max_repetitions", o.max_repetitions},
          {"alpha", o.alpha},
          {"max_culprits", o.max_culprits},
          {"explained_share", o.explained_share}};
}

Result<SearchOptions> SearchOptionsFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("must be an object", "options");
  SearchOptions o;
  for (const auto& [key, value] : j.items()) {
    try {
      if (key == "threshold")
        o.threshold = value.get<double>();
      else if (key == "repetitions")
        o.repetitions = value.get<int>();
      else if (key == "max_repetitions")
        o.max_repetitions = value.get<int>();
      else if (key == "alpha")
        o.alpha = value.get<double>();
      else if (key == "max_culprits")
        o.max_culprits = value.get<int>();
      else if (key == "explained_share")
        o.explained_share = value.get<double>();
      else
        return InvalidArgument("is not an option of a bisect", "options." + key);
    } catch (const json::exception&) {
      return InvalidArgument("has the wrong type", "options." + key);
    }
    if (value.is_number_float() && !std::isfinite(value.get<double>())) {
      return InvalidArgument("must be finite", "options." + key);
    }
  }
  if (o.repetitions < 2) return InvalidArgument("must be at least 2", "options.repetitions");
  if (o.max_repetitions < o.repetitions || o.max_repetitions > 100000) {
    return InvalidArgument("must be between repetitions and 100000", "options.max_repetitions");
  }
  if (!(o.threshold > 0 && o.threshold < 10)) {
    return InvalidArgument("must be above 0 (a fraction: 0.05 is 5%)", "options.threshold");
  }
  if (!(o.alpha > 0 && o.alpha < 1)) return InvalidArgument("must be in (0, 1)", "options.alpha");
  if (o.max_culprits < 1 || o.max_culprits > 20) {
    return InvalidArgument("must be between 1 and 20", "options.max_culprits");
  }
  if (!(o.explained_share > 0 && o.explained_share <= 1)) {
    return InvalidArgument("must be in (0, 1]", "options.explained_share");
  }
  return o;
}

}  // namespace perfwarden::bisect
