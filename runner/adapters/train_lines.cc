// SPDX-License-Identifier: Apache-2.0
#include "runner/adapters/train_lines.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace perfwarden::adapters {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxNameLength = 200;  // the wire format's limit for names

bool IsMetricName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.' && c != '-' &&
        c != '/') {
      return false;
    }
  }
  return true;
}

class LineReader {
 public:
  LineReader(const std::string& source, std::size_t line) : source_(source), line_(line) {}

  tl::unexpected<Error> Fail(const std::string& field, const std::string& message) const {
    return InvalidArgument(source_ + ":" + std::to_string(line_) + ": " +
                               (field.empty() ? "" : field + ": ") + message,
                           field);
  }

  Result<double> Number(const json& j, const char* field, bool required) const {
    auto it = j.find(field);
    if (it == j.end()) {
      if (required) return Fail(field, "is missing");
      return std::nan("");
    }
    if (!it->is_number()) return Fail(field, "must be a number");
    const double x = it->get<double>();
    if (!std::isfinite(x)) return Fail(field, "must be finite");
    return x;
  }

  Result<std::string> Text(const json& j, const char* field) const {
    auto it = j.find(field);
    if (it == j.end()) return Fail(field, "is missing");
    if (!it->is_string()) return Fail(field, "must be a string");
    return it->get<std::string>();
  }

 private:
  const std::string& source_;
  std::size_t line_;
};

Result<void> ReadStep(const LineReader& r, const json& j, TrainOutput& out) {
  TrainStep step;
  auto time = r.Number(j, "time_s", true);
  if (!time) return tl::unexpected(time.error());
  if (*time < 0) return r.Fail("time_s", "must not be negative");
  step.time_s = *time;
  if (auto it = j.find("step"); it != j.end()) {
    if (!it->is_number_integer()) return r.Fail("step", "must be an integer");
    step.step = it->get<int64_t>();
  } else {
    step.step = static_cast<int64_t>(out.steps.size());
  }
  if (auto it = j.find("warmup"); it != j.end()) {
    if (!it->is_boolean()) return r.Fail("warmup", "must be true or false");
    step.warmup = it->get<bool>();
  }
  if (auto it = j.find("values"); it != j.end()) {
    if (!it->is_object()) return r.Fail("values", "must be an object of numbers");
    for (const auto& [name, value] : it->items()) {
      if (!IsMetricName(name)) return r.Fail("values." + name, "is not a valid metric name");
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        return r.Fail("values." + name, "must be a finite number");
      }
      step.values[name] = value.get<double>();
    }
  }
  if (!out.steps.empty() && !out.steps.back().warmup && step.warmup) {
    return r.Fail("warmup", "a warm-up step after steady-state steps");
  }
  out.steps.push_back(std::move(step));
  return {};
}

Result<void> ReadMetric(const LineReader& r, const json& j, TrainOutput& out) {
  TrainMetric metric;
  auto name = r.Text(j, "name");
  if (!name) return tl::unexpected(name.error());
  if (!IsMetricName(*name)) {
    return r.Fail("name", "\"" + *name + "\" is not a valid metric name ([A-Za-z0-9_./-]+)");
  }
  metric.name = *name;
  auto value = r.Number(j, "value", true);
  if (!value) return tl::unexpected(value.error());
  metric.value = *value;
  if (auto it = j.find("unit"); it != j.end()) {
    if (!it->is_string()) return r.Fail("unit", "must be a string");
    metric.unit = it->get<std::string>();
  }
  if (auto it = j.find("direction"); it != j.end()) {
    if (!it->is_string() || !ParseDirection(it->get<std::string>())) {
      return r.Fail("direction", "must be \"lower\" or \"higher\"");
    }
    metric.direction = ParseDirection(it->get<std::string>());
  }
  for (const TrainMetric& m : out.metrics) {
    if (m.name == metric.name) return r.Fail("name", "metric " + m.name + " printed twice");
  }
  out.metrics.push_back(std::move(metric));
  return {};
}

// The first field that an event of this kind does not have, if any (a typo such as "time"
// for "time_s" would otherwise lose data silently).
std::optional<std::string> UnknownField(const json& j, const std::string& event) {
  static const std::map<std::string, std::vector<std::string>> kFields = {
      {"step", {"event", "step", "warmup", "time_s", "values"}},
      {"metric", {"event", "name", "value", "unit", "direction"}},
      {"info", {"event", "key", "value"}},
      {"end", {"event"}}};
  auto known = kFields.find(event);
  if (known == kFields.end()) return std::nullopt;  // the event itself is reported
  for (const auto& [key, value] : j.items()) {
    if (std::find(known->second.begin(), known->second.end(), key) == known->second.end()) {
      return key;
    }
  }
  return std::nullopt;
}

}  // namespace

std::size_t TrainOutput::WarmupSteps() const {
  std::size_t n = 0;
  for (const TrainStep& s : steps) n += s.warmup ? 1 : 0;
  return n;
}

Direction DefaultTrainDirection(std::string_view name) {
  auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends("_per_s") || ends("per_second") || ends("/s") || ends("tflops") || ends("mfu") ||
      name.find("throughput") != std::string_view::npos) {
    return Direction::kHigherIsBetter;
  }
  return Direction::kLowerIsBetter;
}

Result<TrainOutput> ReadTrainLines(std::string_view text, const std::string& source) {
  TrainOutput out;
  std::size_t line_number = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    ++line_number;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() != '{') continue;  // a log line
    const LineReader r(source, line_number);
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return r.Fail("", "not a JSON object");
    auto event = r.Text(j, "event");
    if (!event) return tl::unexpected(event.error());
    if (out.ended) return r.Fail("event", "\"" + *event + "\" after the end event");
    if (auto unknown = UnknownField(j, *event)) {
      return r.Fail(*unknown, "is not a field of a " + *event + " event (a typo?)");
    }
    if (*event == "step") {
      if (auto read = ReadStep(r, j, out); !read) return tl::unexpected(read.error());
    } else if (*event == "metric") {
      if (auto read = ReadMetric(r, j, out); !read) return tl::unexpected(read.error());
    } else if (*event == "info") {
      auto key = r.Text(j, "key");
      if (!key) return tl::unexpected(key.error());
      auto value = j.find("value");
      if (value == j.end()) return r.Fail("value", "is missing");
      out.info[*key] = value->is_string() ? value->get<std::string>() : value->dump();
    } else if (*event == "end") {
      out.ended = true;
    } else {
      return r.Fail("event",
                    "unknown event \"" + *event + "\" (expected step, metric, info or end)");
    }
  }
  if (!out.ended) {
    out.warnings.push_back(source +
                           ": no end event: the command may have stopped before it finished");
  }
  if (out.steps.size() == out.WarmupSteps() && out.metrics.empty()) {
    return InvalidArgument(source +
                           ": no steady-state step and no metric (is the command "
                           "printing perfwarden's JSON lines? see docs/gpu.md)");
  }
  return out;
}

}  // namespace perfwarden::adapters
