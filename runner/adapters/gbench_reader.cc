// SPDX-License-Identifier: Apache-2.0
#include "runner/adapters/gbench_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include "core/text.h"
#include "runner/adapters/input_text.h"
#include "runner/adapters/json_text.h"

namespace perfwarden::adapters {
namespace {

using nlohmann::json;

// Converts the DOM into the typed structs. The first problem wins: every later read is a no-op
// that returns false, so the readers stay straight-line code.
class Converter {
 public:
  explicit Converter(std::string_view source) : source_(source) {}

  bool Fail(const std::string& path, const std::string& problem) {
    if (!error_) {
      std::string message = source_ + ": ";
      if (!path.empty()) message += path + ": ";
      message += problem;
      error_ = Error{ErrorCode::kInvalidArgument, std::move(message), path};
    }
    return false;
  }
  bool failed() const { return error_.has_value(); }
  Error TakeError() { return std::move(*error_); }
  const std::string& source() const { return source_; }

  bool TypeError(const std::string& path, std::string_view expected, const json& got) {
    return Fail(path,
                "expected " + std::string(expected) + ", got " + std::string(JsonTypeName(got)));
  }

  // Each Read* leaves `out` unchanged when the key is absent.
  bool ReadString(const json& object, const char* key, const std::string& path, std::string* out) {
    auto it = object.find(key);
    if (it == object.end()) return true;
    if (!it->is_string()) return TypeError(Join(path, key), "a string", *it);
    *out = it->get<std::string>();
    return true;
  }

  bool ReadBool(const json& object, const char* key, const std::string& path, bool* out) {
    auto it = object.find(key);
    if (it == object.end()) return true;
    if (!it->is_boolean()) return TypeError(Join(path, key), "a boolean", *it);
    *out = it->get<bool>();
    return true;
  }

  bool ReadDouble(const json& object, const char* key, const std::string& path, double* out) {
    auto it = object.find(key);
    if (it == object.end()) return true;
    return ToDouble(*it, Join(path, key), out);
  }

  bool ToDouble(const json& value, const std::string& path, double* out) {
    if (!value.is_number()) return TypeError(path, "a number", value);
    *out = value.get<double>();
    return true;
  }

  bool ReadInt(const json& object, const char* key, const std::string& path, int64_t* out) {
    auto it = object.find(key);
    if (it == object.end()) return true;
    return ToInt(*it, Join(path, key), out);
  }

  // Integers written as floats (1e3, 1000.0) are accepted when exact: some tools rewrite
  // Google Benchmark output through a float-only JSON library.
  bool ToInt(const json& value, const std::string& path, int64_t* out) {
    if (value.is_number_integer() && !value.is_number_unsigned()) {
      *out = value.get<int64_t>();
      return true;
    }
    if (value.is_number_unsigned()) {
      const uint64_t number = value.get<uint64_t>();
      if (number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Fail(path, "integer " + std::to_string(number) + " is out of range");
      }
      *out = static_cast<int64_t>(number);
      return true;
    }
    if (value.is_number_float()) {
      const double number = value.get<double>();
      // 2^63 is exactly representable; every double below it converts without overflow.
      if (std::isfinite(number) && std::trunc(number) == number && number >= -0x1p63 &&
          number < 0x1p63) {
        *out = static_cast<int64_t>(number);
        return true;
      }
      return Fail(path, "expected an integer, got " + DumpJsonText(value));
    }
    return TypeError(path, "an integer", value);
  }

  static std::string Join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string Index(const std::string& path, size_t index) {
    return path + "[" + std::to_string(index) + "]";
  }

 private:
  std::string source_;
  std::optional<Error> error_;
};

// Nanoseconds per unit of Google Benchmark's time_unit; nullopt for an unknown unit.
std::optional<double> NanosecondsPer(std::string_view unit) {
  if (unit == "ns") return 1.0;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

// Keys with a meaning of their own; every other numeric key of an entry is a user counter.
bool IsKnownRunKey(std::string_view key) {
  static const std::set<std::string_view> known = {
      "name",
      "run_name",
      "run_type",
      "aggregate_name",
      "aggregate_unit",
      "family_index",
      "per_family_instance_index",
      "repetitions",
      "repetition_index",
      "threads",
      "iterations",
      "real_time",
      "cpu_time",
      "time_unit",
      "label",
      "error_occurred",
      "error_message",
      "skipped",
      "skip_message",
  };
  return known.count(key) > 0;
}

bool ReadContext(Converter& in, const json& value, GbenchContext* context) {
  const std::string path = "context";
  if (!value.is_object()) return in.TypeError(path, "an object", value);
  if (!in.ReadString(value, "date", path, &context->date) ||
      !in.ReadString(value, "host_name", path, &context->host_name) ||
      !in.ReadString(value, "executable", path, &context->executable) ||
      !in.ReadInt(value, "num_cpus", path, &context->num_cpus) ||
      !in.ReadDouble(value, "mhz_per_cpu", path, &context->mhz_per_cpu) ||
      !in.ReadString(value, "library_build_type", path, &context->library_build_type)) {
    return false;
  }
  if (auto it = value.find("cpu_scaling_enabled"); it != value.end()) {
    bool enabled = false;
    if (!in.ReadBool(value, "cpu_scaling_enabled", path, &enabled)) return false;
    context->cpu_scaling_enabled = enabled;
  }
  if (auto it = value.find("caches"); it != value.end()) {
    const std::string caches_path = path + ".caches";
    if (!it->is_array()) return in.TypeError(caches_path, "an array", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      const json& item = (*it)[i];
      const std::string item_path = Converter::Index(caches_path, i);
      if (!item.is_object()) return in.TypeError(item_path, "an object", item);
      GbenchCache cache;
      if (!in.ReadString(item, "type", item_path, &cache.type) ||
          !in.ReadInt(item, "level", item_path, &cache.level) ||
          !in.ReadInt(item, "size", item_path, &cache.size) ||
          !in.ReadInt(item, "num_sharing", item_path, &cache.num_sharing)) {
        return false;
      }
      context->caches.push_back(std::move(cache));
    }
  }
  if (auto it = value.find("load_avg"); it != value.end()) {
    const std::string load_path = path + ".load_avg";
    if (!it->is_array()) return in.TypeError(load_path, "an array", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      double load = 0;
      if (!in.ToDouble((*it)[i], Converter::Index(load_path, i), &load)) return false;
      context->load_avg.push_back(load);
    }
  }
  static const std::set<std::string_view> known = {
      "date",        "host_name",           "executable",         "num_cpus",
      "mhz_per_cpu", "cpu_scaling_enabled", "library_build_type", "caches",
      "load_avg"};
  for (const auto& [key, item] : value.items()) {
    if (known.count(key) == 0) context->extra[key] = DumpJsonText(item);
  }
  return true;
}

bool ReadRun(Converter& in, const json& value, const std::string& path, GbenchRun* run) {
  if (!value.is_object()) return in.TypeError(path, "an object", value);
  if (!value.contains("name")) return in.Fail(Converter::Join(path, "name"), "missing");
  std::string run_type = "iteration";
  if (!in.ReadString(value, "name", path, &run->name) ||
      !in.ReadString(value, "run_name", path, &run->run_name) ||
      !in.ReadString(value, "run_type", path, &run_type) ||
      !in.ReadString(value, "aggregate_name", path, &run->aggregate_name) ||
      !in.ReadString(value, "aggregate_unit", path, &run->aggregate_unit) ||
      !in.ReadInt(value, "family_index", path, &run->family_index) ||
      !in.ReadInt(value, "per_family_instance_index", path, &run->per_family_instance_index) ||
      !in.ReadInt(value, "repetitions", path, &run->repetitions) ||
      !in.ReadInt(value, "repetition_index", path, &run->repetition_index) ||
      !in.ReadInt(value, "threads", path, &run->threads) ||
      !in.ReadInt(value, "iterations", path, &run->iterations) ||
      !in.ReadString(value, "time_unit", path, &run->time_unit) ||
      !in.ReadString(value, "label", path, &run->label) ||
      !in.ReadBool(value, "error_occurred", path, &run->error_occurred) ||
      !in.ReadString(value, "error_message", path, &run->error_message) ||
      !in.ReadBool(value, "skipped", path, &run->skipped) ||
      !in.ReadString(value, "skip_message", path, &run->skip_message)) {
    return false;
  }
  if (!value.contains("run_name")) run->run_name = run->name;
  if (run_type == "iteration") {
    run->run_type = GbenchRunType::kIteration;
  } else if (run_type == "aggregate") {
    run->run_type = GbenchRunType::kAggregate;
  } else {
    return in.Fail(Converter::Join(path, "run_type"),
                   "expected \"iteration\" or \"aggregate\", got \"" + run_type + "\"");
  }
  // Google Benchmark >= 1.8 writes "error_occurred" for SkipWithError and "skipped" for
  // SkipWithMessage; 1.7 knows only the former. Neither carries a usable timing.
  run->skipped = run->skipped || run->error_occurred;

  // Percentage aggregates (cv) hold a plain fraction whatever time_unit says; Google Benchmark
  // writes them without the unit scaling. Outputs older than time_unit were in nanoseconds.
  double scale = 1.0;
  if (!run->time_unit.empty()) {
    const std::optional<double> per = NanosecondsPer(run->time_unit);
    if (!per) {
      return in.Fail(Converter::Join(path, "time_unit"),
                     "unknown time_unit \"" + run->time_unit + "\" (expected ns, us, ms or s)");
    }
    scale = *per;
  }
  if (run->run_type == GbenchRunType::kAggregate && run->aggregate_unit == "percentage") {
    scale = 1.0;
  }

  const bool has_real = value.contains("real_time");
  const bool has_cpu = value.contains("cpu_time");
  // An entry that reports an iteration count or a unit is a timed repetition and must carry
  // both times; an entry with neither (compare.py's ordering fixtures) simply has no timing.
  const bool timed = value.contains("iterations") || value.contains("time_unit");
  if (run->run_type == GbenchRunType::kIteration && !run->skipped && timed &&
      (!has_real || !has_cpu)) {
    return in.Fail(Converter::Join(path, has_real ? "cpu_time" : "real_time"),
                   "missing (an iteration entry needs real_time and cpu_time unless it errored "
                   "or was skipped)");
  }
  run->real_time_ns = std::numeric_limits<double>::quiet_NaN();
  run->cpu_time_ns = std::numeric_limits<double>::quiet_NaN();
  if (!in.ReadDouble(value, "real_time", path, &run->real_time_ns) ||
      !in.ReadDouble(value, "cpu_time", path, &run->cpu_time_ns)) {
    return false;
  }
  if (has_real) run->real_time_ns *= scale;
  if (has_cpu) run->cpu_time_ns *= scale;

  for (const auto& [key, item] : value.items()) {
    // Non-numeric extras (the BigO row's "big_o" string) have no place in the struct.
    if (IsKnownRunKey(key) || !item.is_number()) continue;
    run->counters[key] = item.get<double>();
  }
  return true;
}

bool IsRateName(std::string_view lower) {
  return lower.ends_with("_per_second") || lower.ends_with("per_sec") || lower.ends_with("/s");
}

bool IsTimeMetric(std::string_view metric) { return metric == "real_time" || metric == "cpu_time"; }

// Entries without any timing (see ReadRun) have NaN times and no unit; a NaN that the file
// wrote explicitly comes with its time_unit and is reported as non-finite instead.
bool HasTimes(const GbenchRun& run) {
  return !(std::isnan(run.real_time_ns) && std::isnan(run.cpu_time_ns) && run.time_unit.empty());
}

bool HasMetric(const GbenchRun& run, std::string_view metric) {
  if (IsTimeMetric(metric)) return HasTimes(run);
  return run.counters.count(std::string(metric)) > 0;
}

std::string DescribeValue(double value) {
  if (std::isnan(value)) return "NaN";
  return value < 0 ? "-Infinity" : "Infinity";
}

}  // namespace

bool GbenchRun::IsMeasurement() const {
  return run_type == GbenchRunType::kIteration || aggregate_name.empty();
}

Result<GbenchFile> ParseGbenchJson(std::string_view text, std::string_view source) {
  try {
    Result<json> root = ParseJsonText(text, source);
    if (!root) return tl::unexpected(root.error());
    Converter in(source);
    GbenchFile file;
    file.source = std::string(source);
    if (!root->is_object()) {
      in.Fail("", "expected a JSON object with a \"benchmarks\" array at the top level, got " +
                      std::string(JsonTypeName(*root)));
      return tl::unexpected(in.TakeError());
    }
    if (auto it = root->find("context"); it != root->end()) {
      if (!ReadContext(in, *it, &file.context)) return tl::unexpected(in.TakeError());
    }
    auto benchmarks = root->find("benchmarks");
    if (benchmarks == root->end()) {
      in.Fail("benchmarks", "missing (is this Google Benchmark JSON output?)");
      return tl::unexpected(in.TakeError());
    }
    if (!benchmarks->is_array()) {
      in.TypeError("benchmarks", "an array", *benchmarks);
      return tl::unexpected(in.TakeError());
    }
    file.runs.reserve(benchmarks->size());
    for (size_t i = 0; i < benchmarks->size(); ++i) {
      GbenchRun run;
      if (!ReadRun(in, (*benchmarks)[i], Converter::Index("benchmarks", i), &run)) {
        return tl::unexpected(in.TakeError());
      }
      file.runs.push_back(std::move(run));
    }
    return file;
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal,
                     std::string(source) + ": cannot read Google Benchmark JSON: " + e.what());
  }
}

Result<GbenchFile> ReadGbenchFile(const std::filesystem::path& path) {
  try {
    auto input = ReadInputText(path);
    if (!input) return tl::unexpected(input.error());
    return ParseGbenchJson(input->text, input->source);
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, path.string() + ": cannot read: " + e.what());
  }
}

Direction DefaultDirection(std::string_view metric) {
  const std::string lower = AsciiLower(metric);
  if (IsRateName(lower) || lower.find("throughput") != std::string::npos) {
    return Direction::kHigherIsBetter;
  }
  return Direction::kLowerIsBetter;
}

Result<std::vector<MetricSeries>> CollectMetric(const GbenchFile& file, std::string_view metric) {
  try {
    // Which benchmarks report the metric at all; their skipped repetitions are counted too.
    std::set<std::string> reporting;
    for (const GbenchRun& run : file.runs) {
      if (run.IsMeasurement() && HasMetric(run, metric)) reporting.insert(run.run_name);
    }
    const bool is_time = IsTimeMetric(metric);
    std::string unit;
    if (is_time) {
      unit = "ns";
    } else if (IsRateName(AsciiLower(metric))) {
      unit = "1/s";
    }
    std::vector<MetricSeries> series;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < file.runs.size(); ++i) {
      const GbenchRun& run = file.runs[i];
      if (!run.IsMeasurement() || reporting.count(run.run_name) == 0) continue;
      auto [it, inserted] = index.emplace(run.run_name, series.size());
      if (inserted) {
        MetricSeries fresh;
        fresh.key = {"", run.run_name, std::string(metric)};
        fresh.unit = unit;
        fresh.direction = DefaultDirection(metric);
        series.push_back(std::move(fresh));
      }
      MetricSeries& out = series[it->second];
      if (run.skipped) {
        ++out.skipped;
        continue;
      }
      // A repetition that lacks a counter its siblings report cannot be compared; leave it out.
      if (!HasMetric(run, metric)) continue;
      double value = 0;
      if (metric == "real_time") {
        value = run.real_time_ns;
      } else if (metric == "cpu_time") {
        value = run.cpu_time_ns;
      } else {
        value = run.counters.at(std::string(metric));
      }
      if (!std::isfinite(value)) {
        const int64_t repetition = run.repetition_index >= 0
                                       ? run.repetition_index
                                       : static_cast<int64_t>(out.values.size()) + out.skipped;
        const std::string field = "benchmarks[" + std::to_string(i) + "]." + std::string(metric);
        return InvalidArgument(file.source + ": " + run.run_name + " repetition " +
                                   std::to_string(repetition) + ": " + std::string(metric) +
                                   " is " + DescribeValue(value) + "; it cannot be compared",
                               field);
      }
      out.values.push_back(value);
    }
    if (series.empty()) {
      std::set<std::string> available;
      for (const GbenchRun& run : file.runs) {
        if (!run.IsMeasurement()) continue;
        if (HasTimes(run)) available.insert({"cpu_time", "real_time"});
        for (const auto& [name, value] : run.counters) available.insert(name);
      }
      std::string list;
      for (const std::string& name : available) list += (list.empty() ? "" : ", ") + name;
      return InvalidArgument(file.source + ": no benchmark reports metric \"" +
                             std::string(metric) +
                             "\" (available: " + (list.empty() ? std::string("none") : list) + ")");
    }
    return series;
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal, file.source + ": " + e.what());
  }
}

}  // namespace perfwarden::adapters
