// The server's bisect answers decoded as `perfgate bisect status` and `perfgate agent` read them:
// unknown keys are ignored (a newer server adds some), an absent or null key takes its default,
// and a key that is present must have its documented type. A Reader walks the document and keeps
// the first error (with the path of the key at fault); reads after an error return defaults, so a
// decoder reads straight through and checks once at the end.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wire/bisect.h"
#include "wire/json_check.h"
#include "wire/json_type_name.h"

namespace perfgate::wire {
namespace {

using nlohmann::json;

class Reader {
 public:
  bool failed() const { return error_.has_value(); }
  Error TakeError() { return std::move(*error_); }

  void Fail(std::string field, std::string message) {
    if (!error_) error_ = Error{ErrorCode::kInvalidArgument, std::move(message), std::move(field)};
  }

  bool Expect(const json& value, bool ok, std::string_view expected, const std::string& field) {
    if (!ok) {
      Fail(field,
           "expected " + std::string(expected) + ", got " + std::string(JsonTypeName(value)));
    }
    return ok;
  }

  // The member `key`, or nullptr when it is absent or null (an error when it is required).
  const json* Member(const json& object, std::string_view key, const std::string& path,
                     bool required = false) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
      if (required) Fail(FieldPath(path, key), it == object.end() ? "missing" : "must not be null");
      return nullptr;
    }
    return &*it;
  }

  std::optional<std::string> OptString(const json& object, std::string_view key,
                                       const std::string& path, bool required = false) {
    const json* value = Member(object, key, path, required);
    if (value == nullptr || !Expect(*value, value->is_string(), "a string", FieldPath(path, key))) {
      return std::nullopt;
    }
    return value->get<std::string>();
  }
  std::string String(const json& object, std::string_view key, const std::string& path,
                     bool required = false) {
    return OptString(object, key, path, required).value_or("");
  }

  // Integers must be written as integers (20, not 20.0) and fit int64_t.
  std::optional<int64_t> OptInteger(const json& object, std::string_view key,
                                    const std::string& path, bool required = false) {
    const json* value = Member(object, key, path, required);
    return value == nullptr ? std::nullopt : AsInteger(*value, FieldPath(path, key));
  }
  int64_t Integer(const json& object, std::string_view key, const std::string& path,
                  bool required = false) {
    return OptInteger(object, key, path, required).value_or(0);
  }
  std::optional<int64_t> AsInteger(const json& value, const std::string& field) {
    const bool fits = value.is_number_integer() &&
                      (!value.is_number_unsigned() ||
                       value.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
    if (!Expect(value, fits, "an integer", field)) return std::nullopt;
    return value.get<int64_t>();
  }

  // An object member kept as it is (bisect/'s records).
  std::optional<json> OptObject(const json& object, std::string_view key, const std::string& path,
                                bool required = false) {
    const json* value = Member(object, key, path, required);
    if (value == nullptr ||
        !Expect(*value, value->is_object(), "an object", FieldPath(path, key))) {
      return std::nullopt;
    }
    return *value;
  }

  // Calls `read(item, path_of_item)` for each element of the array member `key`, which must hold
  // `kind` ("an object", "a string", ...) as `is_kind` tells; stops at the first error.
  template <class IsKind, class ReadItem>
  void ForEach(const json& object, std::string_view key, const std::string& path,
               std::string_view kind, IsKind is_kind, ReadItem read) {
    const json* array = Member(object, key, path);
    const std::string field = FieldPath(path, key);
    if (array == nullptr || !Expect(*array, array->is_array(), "an array", field)) return;
    for (std::size_t i = 0; i < array->size() && !failed(); ++i) {
      const json& item = (*array)[i];
      const std::string at = ElementPath(field, i);
      if (!Expect(item, is_kind(item), kind, at)) return;
      read(item, at);
    }
  }
  std::vector<std::string> Strings(const json& object, std::string_view key,
                                   const std::string& path) {
    std::vector<std::string> out;
    ForEach(
        object, key, path, "a string", [](const json& item) { return item.is_string(); },
        [&](const json& item, const std::string&) { out.push_back(item.get<std::string>()); });
    return out;
  }

 private:
  std::optional<Error> error_;
};

bool IsObject(const json& item) { return item.is_object(); }

// The object itself, or the one under `envelope` when the document is the whole answer.
const json* Unwrap(Reader& reader, const json& document, std::string_view envelope,
                   std::string* path) {
  if (!reader.Expect(document, document.is_object(), "an object", "")) return nullptr;
  if (!document.contains(envelope)) return &document;
  *path = std::string(envelope);
  const json* inner = reader.Member(document, envelope, "", /*required=*/true);
  if (inner != nullptr && !reader.Expect(*inner, inner->is_object(), "an object", *path)) {
    return nullptr;
  }
  return inner;
}

BisectStep ReadStep(Reader& reader, const json& object, const std::string& path) {
  BisectStep step;
  step.id = reader.Integer(object, "id", path, /*required=*/true);
  step.ordinal = reader.Integer(object, "ordinal", path);
  step.state = reader.String(object, "state", path);
  step.agent = reader.OptString(object, "agent", path);
  step.attempts = reader.Integer(object, "attempts", path);
  reader.ForEach(
      object, "targets", path, "an integer",
      [](const json& item) { return item.is_number_integer(); },
      [&](const json& item, const std::string& at) {
        step.targets.push_back(reader.AsInteger(item, at).value_or(0));
      });
  step.repetitions = reader.Integer(object, "repetitions", path);
  step.lease_expires_at = reader.OptString(object, "lease_expires_at", path);
  step.last_error = reader.OptString(object, "last_error", path);
  step.finished_at = reader.OptString(object, "finished_at", path);
  step.reused_from = reader.OptInteger(object, "reused_from", path);
  step.builds = reader.OptInteger(object, "builds", path);
  step.runs = reader.OptInteger(object, "runs", path);
  return step;
}

BisectRemote ReadRemote(Reader& reader, const json& object, const std::string& path) {
  BisectRemote remote;
  remote.testbed = reader.String(object, "testbed", path);
  if (reader.Member(object, "commits", path) == nullptr) return remote;
  BisectJob job;
  job.commits = reader.Integer(object, "commits", path);
  job.benchmarks = reader.Strings(object, "benchmarks", path);
  job.suite = reader.String(object, "suite", path);
  job.metric = reader.String(object, "metric", path);
  job.build = reader.String(object, "build", path);
  job.options = reader.OptObject(object, "options", path).value_or(json::object());
  remote.job = std::move(job);
  return remote;
}

Bisect ReadBisect(Reader& reader, const json& object, const std::string& path) {
  Bisect b;
  b.id = reader.Integer(object, "id", path, /*required=*/true);
  b.alert_id = reader.OptInteger(object, "alert_id", path);
  b.good = reader.String(object, "good", path, /*required=*/true);
  b.bad = reader.String(object, "bad", path, /*required=*/true);
  b.state = reader.String(object, "state", path, /*required=*/true);
  b.culprit = reader.OptString(object, "culprit", path);
  b.created_by = reader.String(object, "created_by", path);
  b.created_at = reader.String(object, "created_at", path);
  b.report = reader.OptObject(object, "report", path);
  if (const json* remote = reader.Member(object, "remote", path)) {
    const std::string at = FieldPath(path, "remote");
    if (reader.Expect(*remote, remote->is_object(), "an object", at)) {
      b.remote = ReadRemote(reader, *remote, at);
    }
  }
  b.error = reader.OptString(object, "error", path);
  b.finished_at = reader.OptString(object, "finished_at", path);
  reader.ForEach(object, "steps", path, "an object", IsObject,
                 [&](const json& item, const std::string& at) {
                   b.steps.push_back(ReadStep(reader, item, at));
                 });
  b.progress = reader.OptObject(object, "progress", path);
  return b;
}

ClaimedStep ReadClaimedStep(Reader& reader, const json& object, const std::string& path) {
  ClaimedStep step;
  step.id = reader.Integer(object, "id", path, /*required=*/true);
  step.bisect_id = reader.Integer(object, "bisect_id", path, /*required=*/true);
  step.ordinal = reader.Integer(object, "ordinal", path);
  step.token = reader.String(object, "token", path, /*required=*/true);
  step.lease_seconds = reader.Integer(object, "lease_seconds", path);
  step.lease_expires_at = reader.String(object, "lease_expires_at", path);
  step.attempt = reader.Integer(object, "attempt", path);
  step.request = reader.OptObject(object, "request", path, /*required=*/true).value_or(json());
  reader.ForEach(object, "commits", path, "an object", IsObject,
                 [&](const json& item, const std::string& at) {
                   step.commits.push_back({reader.Integer(item, "position", at),
                                           reader.String(item, "sha", at, /*required=*/true),
                                           reader.String(item, "subject", at)});
                 });
  step.good = reader.String(object, "good", path);
  step.bad = reader.String(object, "bad", path);
  step.benchmarks = reader.Strings(object, "benchmarks", path);
  step.suite = reader.String(object, "suite", path);
  step.metric = reader.String(object, "metric", path);
  step.build = reader.String(object, "build", path);
  return step;
}

// Unwraps `document`, reads it with `read`, and returns the value or the first error.
template <class T, class Read>
Result<T> Decode(const json& document, std::string_view envelope, Read read) {
  Reader reader;
  std::string path;
  const json* object = Unwrap(reader, document, envelope, &path);
  if (object == nullptr) return tl::unexpected(reader.TakeError());
  T value = read(reader, *object, path);
  if (reader.failed()) return tl::unexpected(reader.TakeError());
  return value;
}

}  // namespace

Result<Bisect> DecodeBisect(const json& document) {
  return Decode<Bisect>(document, kBisectEnvelope, ReadBisect);
}

Result<ClaimedStep> DecodeClaimedStep(const json& document) {
  return Decode<ClaimedStep>(document, kStepEnvelope, ReadClaimedStep);
}

Result<StepLease> DecodeStepLease(const json& document) {
  return Decode<StepLease>(document, kStepEnvelope,
                           [](Reader& reader, const json& object, const std::string& path) {
                             return StepLease{reader.Integer(object, "id", path, true),
                                              reader.Integer(object, "lease_seconds", path),
                                              reader.String(object, "lease_expires_at", path)};
                           });
}

}  // namespace perfgate::wire
