// SPDX-License-Identifier: Apache-2.0
// The tolerant-but-typed walk over a decoded JSON document that wire's answer decoders share
// (the verdict, the alerts, the bisects and their steps): unknown keys are ignored, an absent or
// null key takes its default, and a key that is present must have its documented type. The reader
// keeps the first error (kInvalidArgument, `field` the path of the key at fault:
// "alerts[3].range.first_bad.sha"); reads after an error are harmless and return defaults, so a
// decoder reads straight through and checks once at the end. Templated on the document type:
// answers whose free-form objects must keep their key order are read as nlohmann::ordered_json.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "wire/json_check.h"
#include "wire/json_type_name.h"

namespace perfwarden::wire {

// `text` as a document of type Json; kInvalidArgument "malformed <what> JSON: ..." (nlohmann's
// message, which echoes the offending token, cut to its gist) when it is not JSON.
template <class Json>
Result<Json> ParseJsonDocument(std::string_view text, std::string_view what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const typename Json::exception& e) {
    std::string message = e.what();
    constexpr size_t kMaxMessage = 200;
    if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
    return InvalidArgument("malformed " + std::string(what) + " JSON: " + message);
  }
}

template <class Json>
class JsonReader {
 public:
  bool failed() const { return error_.has_value(); }
  Error TakeError() { return std::move(*error_); }

  void Fail(std::string field, std::string message) {
    if (!error_) error_ = Error{ErrorCode::kInvalidArgument, std::move(message), std::move(field)};
  }

  // The member `key` of `object`, or nullptr when it is absent or null (and, when it is required,
  // records an error). `object` is known to be an object: callers check before descending.
  const Json* Member(const Json& object, std::string_view key, const std::string& field,
                     bool required) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
      if (required) Fail(field, it == object.end() ? "missing" : "must not be null");
      return nullptr;
    }
    return &*it;
  }

  // For a request body, read strictly: a key of `object` outside `known` is an error
  // ("unknown key (known: a, b)") at its path, so that a typo does not silently drop data.
  void OnlyKeys(const Json& object, const std::string& path,
                std::initializer_list<std::string_view> known) {
    for (auto it = object.begin(); it != object.end(); ++it) {
      bool found = false;
      for (std::string_view k : known) found = found || it.key() == k;
      if (found) continue;
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      Fail(FieldPath(path, it.key()), "unknown key (known: " + list + ")");
      return;
    }
  }

  bool Expect(const Json& value, bool ok, std::string_view expected, const std::string& field) {
    if (!ok) {
      Fail(field,
           "expected " + std::string(expected) + ", got " + std::string(JsonTypeName(value)));
    }
    return ok;
  }

  std::optional<std::string> OptString(const Json& object, std::string_view key,
                                       const std::string& path, bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr || !Expect(*value, value->is_string(), "a string", field)) {
      return std::nullopt;
    }
    return value->template get<std::string>();
  }

  std::string String(const Json& object, std::string_view key, const std::string& path,
                     bool required = false) {
    return OptString(object, key, path, required).value_or("");
  }

  // "lower" or "higher"; `fallback` when absent or null.
  perfwarden::Direction Direction(
      const Json& object, std::string_view key, const std::string& path,
      perfwarden::Direction fallback = perfwarden::Direction::kLowerIsBetter) {
    const std::optional<std::string> text = OptString(object, key, path);
    if (!text) return fallback;
    if (const std::optional<perfwarden::Direction> parsed = ParseDirection(*text)) return *parsed;
    Fail(FieldPath(path, key), "expected \"lower\" or \"higher\", got \"" + *text + "\"");
    return fallback;
  }

  std::optional<double> Number(const Json& object, std::string_view key, const std::string& path,
                               bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr || !Expect(*value, value->is_number(), "a number", field)) {
      return std::nullopt;
    }
    return value->template get<double>();
  }

  // Integers must be written as integers (20, not 20.0), fit int64_t and be at least `min`.
  static constexpr int64_t kNoMinimum = std::numeric_limits<int64_t>::min();
  std::optional<int64_t> Integer(const Json& object, std::string_view key, const std::string& path,
                                 int64_t min = kNoMinimum, bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr) return std::nullopt;
    const std::optional<int64_t> result = AsInteger(*value, field);
    if (result && *result < min) {
      Fail(field, "must be at least " + std::to_string(min) + ", got " + std::to_string(*result));
      return std::nullopt;
    }
    return result;
  }
  // `value` (at `field`) as an integer: written as one, and fitting int64_t.
  std::optional<int64_t> AsInteger(const Json& value, const std::string& field) {
    const bool fits =
        value.is_number_integer() &&
        (!value.is_number_unsigned() ||
         value.template get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
    if (!Expect(value, fits, "an integer", field)) return std::nullopt;
    return value.template get<int64_t>();
  }

  std::optional<bool> Bool(const Json& object, std::string_view key, const std::string& path) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, false);
    if (value == nullptr || !Expect(*value, value->is_boolean(), "a boolean", field)) {
      return std::nullopt;
    }
    return value->template get<bool>();
  }

  // The member as an object or array, or nullptr when absent/null (or of the wrong type).
  const Json* Object(const Json& object, std::string_view key, const std::string& path,
                     bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr || !Expect(*value, value->is_object(), "an object", field)) {
      return nullptr;
    }
    return value;
  }
  // An object member kept whole (a free-form object), or nullopt when absent/null.
  std::optional<Json> OptObject(const Json& object, std::string_view key, const std::string& path,
                                bool required = false) {
    const Json* value = Object(object, key, path, required);
    return value != nullptr ? std::optional<Json>(*value) : std::nullopt;
  }
  const Json* Array(const Json& object, std::string_view key, const std::string& path,
                    bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr || !Expect(*value, value->is_array(), "an array", field)) {
      return nullptr;
    }
    return value;
  }

  // The object itself, or the one under `envelope` when the document is the whole answer that
  // wraps it ({"bisect": {...}}; `path` is then the envelope's key). An empty `envelope`: the
  // document is the object. nullptr (and an error) when either is not an object.
  const Json* Unwrap(const Json& document, std::string_view envelope, std::string* path) {
    if (!Expect(document, document.is_object(), "an object", "")) return nullptr;
    if (envelope.empty() || !document.contains(envelope)) return &document;
    *path = std::string(envelope);
    return Object(document, envelope, "", /*required=*/true);
  }

  // Calls `read(item, path_of_item)` for each element of the array member `key` (empty when it is
  // absent or null, unless `required`); stops at the first error. `read` checks the item's kind.
  template <class ReadItem>
  void ForEach(const Json& object, std::string_view key, const std::string& path, bool required,
               ReadItem read) {
    const Json* array = Array(object, key, path, required);
    if (array == nullptr) return;
    const std::string field = FieldPath(path, key);
    for (size_t i = 0; i < array->size() && !failed(); ++i) {
      read((*array)[i], ElementPath(field, i));
    }
  }

  // The same for an array that must hold objects.
  template <class ReadItem>
  void ForEachObject(const Json& object, std::string_view key, const std::string& path,
                     bool required, ReadItem read) {
    ForEach(object, key, path, required, [&](const Json& item, const std::string& at) {
      if (Expect(item, item.is_object(), "an object", at)) read(item, at);
    });
  }

  // An array of strings, numbers or integers (empty when absent or null).
  std::vector<std::string> Strings(const Json& object, std::string_view key,
                                   const std::string& path) {
    std::vector<std::string> out;
    ForEach(object, key, path, false, [&](const Json& item, const std::string& at) {
      if (Expect(item, item.is_string(), "a string", at)) {
        out.push_back(item.template get<std::string>());
      }
    });
    return out;
  }
  std::vector<double> Numbers(const Json& object, std::string_view key, const std::string& path) {
    std::vector<double> out;
    ForEach(object, key, path, false, [&](const Json& item, const std::string& at) {
      if (Expect(item, item.is_number(), "a number", at)) {
        out.push_back(item.template get<double>());
      }
    });
    return out;
  }
  std::vector<int64_t> Integers(const Json& object, std::string_view key, const std::string& path) {
    std::vector<int64_t> out;
    ForEach(object, key, path, false, [&](const Json& item, const std::string& at) {
      if (auto value = AsInteger(item, at)) out.push_back(*value);
    });
    return out;
  }

 private:
  std::optional<Error> error_;
};

// Reads `document` (or the object under `envelope` in it, as JsonReader::Unwrap says) with
// `read(reader, object, path)` and returns the value, or the first error of the walk.
template <class T, class Json, class Read>
Result<T> ReadDocument(const Json& document, std::string_view envelope, Read read) {
  JsonReader<Json> reader;
  std::string path;
  const Json* object = reader.Unwrap(document, envelope, &path);
  if (object == nullptr) return tl::unexpected(reader.TakeError());
  T value = read(reader, *object, path);
  if (reader.failed()) return tl::unexpected(reader.TakeError());
  return value;
}

}  // namespace perfwarden::wire
