// SPDX-License-Identifier: Apache-2.0
// Wire format v1, the run upload: a typed walk over the DOM that the strict JSON reader
// (json_check.h) built, validating every field and naming its path on failure, and the encoder
// of the canonical form.
#include "wire/run_upload.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text.h"
#include "wire/json_check.h"
#include "wire/json_type_name.h"
#include "wire/validate.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;
using Status = tl::expected<void, Error>;

// Keeps the validation walk readable: every step either passes or returns its error as is.
#define PERFWARDEN_WIRE_TRY(expr)                                                             \
  do {                                                                                        \
    if (Status status_ = (expr); !status_) return tl::unexpected(std::move(status_.error())); \
  } while (false)

Status WrongType(const std::string& field, std::string_view expected, const json& got) {
  return InvalidArgument(
      "expected " + std::string(expected) + ", got " + std::string(JsonTypeName(got)), field);
}

bool IsTimeUnit(std::string_view unit) {
  return unit == "ns" || unit == "us" || unit == "ms" || unit == "s";
}

enum class Need { kOptional, kRequired };

// The typed walk over a DOM whose depth, strings and keys ParseCheckedJson has already vetted. An
// optional member that is absent or null reads as empty.
class Decoder {
 public:
  explicit Decoder(const DecodeLimits& limits) : limits_(limits) {}

  // `results`: the series the parse streamed out of the root's "results" (DecodeRunUpload), which
  // the root holds as an empty array.
  Result<RunUpload> Decode(const json& root, std::vector<ResultSeries> results) {
    RunUpload run;
    if (!root.is_object()) {
      return InvalidArgument(
          "the body must be a JSON object, got " + std::string(JsonTypeName(root)), "");
    }
    PERFWARDEN_WIRE_TRY(
        OnlyKeys(root, "",
                 {"id", "project", "branch", "commit", "merge_base", "target_branch", "ancestry",
                  "testbed", "ci", "started_at", "finished_at", "results", "runner_version"}));
    PERFWARDEN_WIRE_TRY(ReadString(root, "id", "", Need::kRequired, &run.id));
    if (!IsUuid(run.id)) {
      return InvalidArgument("not a canonical UUID (8-4-4-4-12 hex digits)", "id");
    }
    run.id = AsciiLower(run.id);
    PERFWARDEN_WIRE_TRY(ReadName(root, "project", "", Need::kRequired, &run.project));
    if (run.project.find('/') != std::string::npos) {
      // A project name is one URL path segment (/api/v1/projects/{project}/...).
      return InvalidArgument("must not contain '/' (project names are URL path segments)",
                             "project");
    }
    PERFWARDEN_WIRE_TRY(ReadName(root, "branch", "", Need::kOptional, &run.branch));
    PERFWARDEN_WIRE_TRY(ReadCommit(root, &run.commit));
    std::string merge_base;
    PERFWARDEN_WIRE_TRY(ReadSha(root, "merge_base", "", Need::kOptional, &merge_base));
    if (!merge_base.empty()) run.merge_base = merge_base;
    PERFWARDEN_WIRE_TRY(ReadName(root, "target_branch", "", Need::kOptional, &run.target_branch));
    PERFWARDEN_WIRE_TRY(ReadShaList(root, "ancestry", "", &run.ancestry));
    PERFWARDEN_WIRE_TRY(ReadTestbed(root, &run.testbed));
    PERFWARDEN_WIRE_TRY(ReadCi(root, &run.ci));
    std::optional<Instant> started;
    std::optional<Instant> finished;
    PERFWARDEN_WIRE_TRY(ReadTime(root, "started_at", "", &run.started_at, &started));
    PERFWARDEN_WIRE_TRY(ReadTime(root, "finished_at", "", &run.finished_at, &finished));
    if (started && finished && *finished < *started) {
      return InvalidArgument("finished_at is before started_at (" + run.started_at + ")",
                             "finished_at");
    }
    PERFWARDEN_WIRE_TRY(CheckResults(root, results.size()));
    run.results = std::move(results);
    PERFWARDEN_WIRE_TRY(
        ReadString(root, "runner_version", "", Need::kOptional, &run.runner_version));
    if (Member(root, "runner_version") != nullptr && !IsVersion(run.runner_version)) {
      return InvalidArgument("must be 1.." + std::to_string(kMaxVersionLength) +
                                 " printable ASCII characters (no spaces)",
                             "runner_version");
    }
    return run;
  }

  static Status CheckResults(const json& root, size_t streamed) {
    const json* array = Member(root, "results");
    if (array == nullptr) return Missing("results");
    if (!array->is_array()) return WrongType("results", "an array", *array);
    if (streamed == 0) return InvalidArgument("must hold at least one series", "results");
    return {};
  }

  // One element of "results", as the parse streams it; refused when it is one too many or
  // repeats an earlier series' key.
  Status AddSeries(const json& element, const std::string& path,
                   std::vector<ResultSeries>* results) {
    if (results->size() >= limits_.max_results) {
      return InvalidArgument("more than " + std::to_string(limits_.max_results) + " series",
                             "results");
    }
    ResultSeries series;
    PERFWARDEN_WIRE_TRY(ReadSeries(element, path, &series));
    auto [it, inserted] = seen_.emplace(series.key, results->size());
    if (!inserted) {
      return InvalidArgument("duplicate series (suite, benchmark, metric): same as results[" +
                                 std::to_string(it->second) + "]",
                             path);
    }
    results->push_back(std::move(series));
    return {};
  }

 private:
  // nullptr when absent or null.
  static const json* Member(const json& object, std::string_view key) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  static Status Missing(const std::string& field) {
    return InvalidArgument("missing required field", field);
  }

  static Status OnlyKeys(const json& object, const std::string& path,
                         std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : object.items()) {
      bool known = false;
      for (std::string_view name : allowed) known = known || key == name;
      if (!known) return InvalidArgument("unknown field \"" + key + "\"", FieldPath(path, key));
    }
    return {};
  }

  static Status ReadString(const json& object, std::string_view key, const std::string& path,
                           Need need, std::string* out) {
    const std::string field = FieldPath(path, key);
    const json* value = Member(object, key);
    if (value == nullptr) return need == Need::kRequired ? Missing(field) : Status{};
    if (!value->is_string()) return WrongType(field, "a string", *value);
    *out = value->get<std::string>();
    if (need == Need::kRequired && out->empty()) return InvalidArgument("must not be empty", field);
    return {};
  }

  static Status ReadName(const json& object, std::string_view key, const std::string& path,
                         Need need, std::string* out) {
    PERFWARDEN_WIRE_TRY(ReadString(object, key, path, need, out));
    if (Member(object, key) != nullptr && !IsName(*out)) {
      return InvalidArgument(
          "must be 1.." + std::to_string(kMaxNameLength) + " characters from [A-Za-z0-9._/-]",
          FieldPath(path, key));
    }
    return {};
  }

  static Status ShaValue(const json& value, const std::string& field, std::string* out) {
    if (!value.is_string()) return WrongType(field, "a string", value);
    const std::string& text = value.get_ref<const std::string&>();
    if (!IsSha(text)) return InvalidArgument("not a commit sha (40 hex digits)", field);
    *out = AsciiLower(text);
    return {};
  }

  static Status ReadSha(const json& object, std::string_view key, const std::string& path,
                        Need need, std::string* out) {
    const std::string field = FieldPath(path, key);
    const json* value = Member(object, key);
    if (value == nullptr) return need == Need::kRequired ? Missing(field) : Status{};
    return ShaValue(*value, field, out);
  }

  Status ReadShaList(const json& object, std::string_view key, const std::string& path,
                     std::vector<std::string>* out) const {
    const std::string field = FieldPath(path, key);
    const json* value = Member(object, key);
    if (value == nullptr) return {};
    if (!value->is_array()) return WrongType(field, "an array", *value);
    if (value->size() > limits_.max_values) {
      return InvalidArgument("more than " + std::to_string(limits_.max_values) + " entries", field);
    }
    out->resize(value->size());
    for (size_t i = 0; i < value->size(); ++i) {
      PERFWARDEN_WIRE_TRY(ShaValue((*value)[i], ElementPath(field, i), &(*out)[i]));
    }
    return {};
  }

  static Status ReadTime(const json& object, std::string_view key, const std::string& path,
                         std::string* out, std::optional<Instant>* instant) {
    PERFWARDEN_WIRE_TRY(ReadString(object, key, path, Need::kOptional, out));
    if (Member(object, key) == nullptr) return {};
    const std::optional<Rfc3339Time> time = ParseRfc3339(*out);
    if (!time) {
      return InvalidArgument(std::string(kRfc3339Rule), FieldPath(path, key));
    }
    *instant = time->instant;
    return {};
  }

  static Status ReadObject(const json& object, std::string_view key, const std::string& path,
                           Need need, const json** out) {
    const std::string field = FieldPath(path, key);
    *out = Member(object, key);
    if (*out == nullptr) return need == Need::kRequired ? Missing(field) : Status{};
    if (!(*out)->is_object()) return WrongType(field, "an object", **out);
    return {};
  }

  Status ReadCommit(const json& root, Commit* commit) const {
    const json* object = nullptr;
    PERFWARDEN_WIRE_TRY(ReadObject(root, "commit", "", Need::kRequired, &object));
    const std::string path = "commit";
    PERFWARDEN_WIRE_TRY(OnlyKeys(*object, path, {"sha", "parents", "time", "subject", "author"}));
    PERFWARDEN_WIRE_TRY(ReadSha(*object, "sha", path, Need::kRequired, &commit->sha));
    PERFWARDEN_WIRE_TRY(ReadShaList(*object, "parents", path, &commit->parents));
    std::optional<Instant> ignored;
    PERFWARDEN_WIRE_TRY(ReadTime(*object, "time", path, &commit->time, &ignored));
    PERFWARDEN_WIRE_TRY(ReadString(*object, "subject", path, Need::kOptional, &commit->subject));
    PERFWARDEN_WIRE_TRY(ReadString(*object, "author", path, Need::kOptional, &commit->author));
    return {};
  }

  static Status ReadTestbed(const json& root, Testbed* testbed) {
    const json* object = nullptr;
    PERFWARDEN_WIRE_TRY(ReadObject(root, "testbed", "", Need::kRequired, &object));
    const std::string path = "testbed";
    PERFWARDEN_WIRE_TRY(OnlyKeys(*object, path, {"name", "fingerprint"}));
    PERFWARDEN_WIRE_TRY(ReadName(*object, "name", path, Need::kRequired, &testbed->name));
    const json* fingerprint = nullptr;
    PERFWARDEN_WIRE_TRY(ReadObject(*object, "fingerprint", path, Need::kOptional, &fingerprint));
    testbed->fingerprint_json = fingerprint != nullptr ? fingerprint->dump() : "{}";
    return {};
  }

  static Status ReadCi(const json& root, CiInfo* ci) {
    const json* object = nullptr;
    PERFWARDEN_WIRE_TRY(ReadObject(root, "ci", "", Need::kOptional, &object));
    if (object == nullptr) return {};
    const std::string path = "ci";
    PERFWARDEN_WIRE_TRY(ReadString(*object, "provider", path, Need::kOptional, &ci->provider));
    PERFWARDEN_WIRE_TRY(ReadString(*object, "job_url", path, Need::kOptional, &ci->job_url));
    if (const json* pr = Member(*object, "pr"); pr != nullptr) {
      if (!pr->is_number_integer()) return WrongType("ci.pr", "an integer", *pr);
      // nlohmann reads every non-negative integer as unsigned.
      const bool positive =
          pr->is_number_unsigned()
              ? pr->get<uint64_t>() >= 1 && pr->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
              : pr->get<int64_t>() >= 1;
      if (!positive) {
        return InvalidArgument("must be a positive pull/merge request number", "ci.pr");
      }
      ci->pr = pr->get<int64_t>();
    }
    json extra = json::object();
    for (const auto& [key, value] : object->items()) {
      if (key != "provider" && key != "job_url" && key != "pr") extra[key] = value;
    }
    ci->extra_json = extra.dump();
    return {};
  }

  Status ReadSeries(const json& object, const std::string& path, ResultSeries* series) const {
    if (!object.is_object()) return WrongType(path, "an object", object);
    PERFWARDEN_WIRE_TRY(
        OnlyKeys(object, path, {"suite", "benchmark", "metric", "unit", "direction", "values"}));
    PERFWARDEN_WIRE_TRY(ReadString(object, "suite", path, Need::kRequired, &series->key.suite));
    PERFWARDEN_WIRE_TRY(
        ReadString(object, "benchmark", path, Need::kRequired, &series->key.benchmark));
    PERFWARDEN_WIRE_TRY(ReadString(object, "metric", path, Need::kRequired, &series->key.metric));
    PERFWARDEN_WIRE_TRY(ReadString(object, "unit", path, Need::kOptional, &series->unit));
    for (auto [key, text] :
         {std::pair{"suite", &series->key.suite}, std::pair{"benchmark", &series->key.benchmark},
          std::pair{"metric", &series->key.metric}, std::pair{"unit", &series->unit}}) {
      if (text->size() > kMaxSeriesTextBytes) {
        return InvalidArgument("longer than " + std::to_string(kMaxSeriesTextBytes) + " bytes",
                               FieldPath(path, key));
      }
    }
    std::string direction;
    PERFWARDEN_WIRE_TRY(ReadString(object, "direction", path, Need::kRequired, &direction));
    if (direction == "lower") {
      series->direction = Direction::kLowerIsBetter;
    } else if (direction == "higher") {
      series->direction = Direction::kHigherIsBetter;
    } else {
      return InvalidArgument("unknown direction \"" + direction + "\" (expected lower or higher)",
                             FieldPath(path, "direction"));
    }
    const std::string field = FieldPath(path, "values");
    const json* values = Member(object, "values");
    if (values == nullptr) return Missing(field);
    if (!values->is_array()) return WrongType(field, "an array", *values);
    if (values->empty()) return InvalidArgument("must hold at least one value", field);
    if (values->size() > limits_.max_values) {
      return InvalidArgument("more than " + std::to_string(limits_.max_values) + " values", field);
    }
    const bool time = IsTimeUnit(series->unit);
    series->values.resize(values->size());
    for (size_t j = 0; j < values->size(); ++j) {
      const json& value = (*values)[j];
      if (!value.is_number()) return WrongType(ElementPath(field, j), "a number", value);
      const double number = value.get<double>();
      if (!std::isfinite(number))
        return InvalidArgument("value is not finite", ElementPath(field, j));
      if (time && number < 0) {
        return InvalidArgument("negative time (unit " + series->unit + ")", ElementPath(field, j));
      }
      series->values[j] = number;
    }
    return {};
  }

  const DecodeLimits& limits_;
  std::map<SeriesKey, size_t> seen_;  // the series added so far, by key
};

#undef PERFWARDEN_WIRE_TRY

// Values of a series besides its values: the object, its keys' values and the array.
constexpr size_t kMaxSeriesKeys = 64;

size_t SaturatingSum(size_t a, size_t b) {
  return a > std::numeric_limits<size_t>::max() - b ? std::numeric_limits<size_t>::max() : a + b;
}

// The object that a *_json field holds, or an empty object when it holds anything else.
json ParseObject(const std::string& text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : json::object();
}

}  // namespace

size_t RunUpload::SampleCount() const {
  size_t count = 0;
  for (const ResultSeries& series : results) count += series.values.size();
  return count;
}

Result<RunUpload> DecodeRunUpload(std::string_view json_text, const DecodeLimits& limits) {
  Decoder decoder(limits);
  std::vector<ResultSeries> results;
  // Each series is decoded as soon as the parse has it and its DOM dropped: the memory an upload
  // costs is its typed values plus one series' DOM, whatever the body holds.
  const StreamedArray streamed[] = {
      {{"results"},
       SaturatingSum(limits.max_values, kMaxSeriesKeys),
       [&](json element, const std::string& path, const std::vector<size_t>&) -> Result<void> {
         return decoder.AddSeries(element, path, &results);
       }}};
  // The rest of the document: commit.parents and ancestry, and the free-form objects.
  JsonLimits json_limits{limits.max_string, limits.max_depth};
  json_limits.max_elements =
      SaturatingSum(SaturatingSum(limits.max_values, limits.max_values), limits.max_other_values);
  json_limits.object_root = true;
  Result<json> root = ParseCheckedJson(json_text, json_limits, streamed);
  if (!root) return tl::unexpected(std::move(root.error()));
  try {
    return decoder.Decode(*root, std::move(results));
  } catch (const std::exception& e) {
    // nlohmann only throws here on internal inconsistencies; never let one escape the adapter.
    return InvalidArgument(std::string("malformed JSON: ") + e.what(), "");
  }
}

std::string EncodeRunUpload(const RunUpload& run) {
  // Empty optional strings are left out rather than written as "": the decoder rejects an empty
  // branch or timestamp, and absence reads back as empty, so Decode(Encode(x)) == x.
  json out = json::object();
  out["id"] = run.id;
  out["project"] = run.project;
  if (!run.branch.empty()) out["branch"] = run.branch;
  json commit = {{"sha", run.commit.sha},
                 {"parents", run.commit.parents},
                 {"subject", run.commit.subject},
                 {"author", run.commit.author}};
  if (!run.commit.time.empty()) commit["time"] = run.commit.time;
  out["commit"] = std::move(commit);
  if (run.merge_base) out["merge_base"] = *run.merge_base;
  if (!run.target_branch.empty()) out["target_branch"] = run.target_branch;
  out["ancestry"] = run.ancestry;
  out["testbed"] = {{"name", run.testbed.name},
                    {"fingerprint", ParseObject(run.testbed.fingerprint_json)}};
  json ci = ParseObject(run.ci.extra_json);
  ci["provider"] = run.ci.provider;
  ci["job_url"] = run.ci.job_url;
  if (run.ci.pr) {
    ci["pr"] = *run.ci.pr;
  } else {
    ci.erase("pr");
  }
  out["ci"] = std::move(ci);
  if (!run.started_at.empty()) out["started_at"] = run.started_at;
  if (!run.finished_at.empty()) out["finished_at"] = run.finished_at;
  json results = json::array();
  for (const ResultSeries& series : run.results) {
    results.push_back({{"suite", series.key.suite},
                       {"benchmark", series.key.benchmark},
                       {"metric", series.key.metric},
                       {"unit", series.unit},
                       {"direction", std::string(DirectionName(series.direction))},
                       {"values", series.values}});
  }
  out["results"] = std::move(results);
  if (!run.runner_version.empty()) out["runner_version"] = run.runner_version;
  return out.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace perfwarden::wire
