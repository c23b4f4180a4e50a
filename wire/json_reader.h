// The tolerant-but-typed walk over a decoded JSON document that wire's answer decoders share
// (the verdict, the alerts): unknown keys are ignored, an absent or null key takes its default,
// and a key that is present must have its documented type. The reader keeps the first error
// (kInvalidArgument, `field` the path of the key at fault: "alerts[3].range.first_bad.sha");
// reads after an error are harmless and return defaults, so a decoder reads straight through and
// checks once at the end. Templated on the document type: answers whose free-form objects must
// keep their key order are read as nlohmann::ordered_json.
#pragma once

#include <cstdint>
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

namespace perfgate::wire {

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
  perfgate::Direction Direction(
      const Json& object, std::string_view key, const std::string& path,
      perfgate::Direction fallback = perfgate::Direction::kLowerIsBetter) {
    const std::optional<std::string> text = OptString(object, key, path);
    if (!text) return fallback;
    if (const std::optional<perfgate::Direction> parsed = ParseDirection(*text)) return *parsed;
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

  // Integers must be written as integers (20, not 20.0) and be at least `min`.
  std::optional<int64_t> Integer(const Json& object, std::string_view key, const std::string& path,
                                 int64_t min = std::numeric_limits<int64_t>::min(),
                                 bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr) return std::nullopt;
    const bool fits =
        value->is_number_integer() &&
        (!value->is_number_unsigned() ||
         value->template get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
    if (!Expect(*value, fits, "an integer", field)) return std::nullopt;
    const auto result = value->template get<int64_t>();
    if (result < min) {
      Fail(field, "must be at least " + std::to_string(min) + ", got " + std::to_string(result));
      return std::nullopt;
    }
    return result;
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
  const Json* Array(const Json& object, std::string_view key, const std::string& path,
                    bool required = false) {
    const std::string field = FieldPath(path, key);
    const Json* value = Member(object, key, field, required);
    if (value == nullptr || !Expect(*value, value->is_array(), "an array", field)) {
      return nullptr;
    }
    return value;
  }

  // An array of strings (empty when absent or null).
  std::vector<std::string> Strings(const Json& object, std::string_view key,
                                   const std::string& path) {
    std::vector<std::string> out;
    const Json* array = Array(object, key, path);
    if (array == nullptr) return out;
    const std::string field = FieldPath(path, key);
    for (size_t i = 0; i < array->size(); ++i) {
      const Json& item = (*array)[i];
      if (!Expect(item, item.is_string(), "a string", ElementPath(field, i))) return out;
      out.push_back(item.template get<std::string>());
    }
    return out;
  }

  // An array of numbers (empty when absent or null).
  std::vector<double> Numbers(const Json& object, std::string_view key, const std::string& path) {
    std::vector<double> out;
    const Json* array = Array(object, key, path);
    if (array == nullptr) return out;
    const std::string field = FieldPath(path, key);
    for (size_t i = 0; i < array->size(); ++i) {
      const Json& item = (*array)[i];
      if (!Expect(item, item.is_number(), "a number", ElementPath(field, i))) return out;
      out.push_back(item.template get<double>());
    }
    return out;
  }

  // Calls `read(item, path_of_item)` for each element of the array member `key`, which must hold
  // objects; stops at the first error.
  template <class ReadItem>
  void ForEachObject(const Json& object, std::string_view key, const std::string& path,
                     bool required, ReadItem read) {
    const Json* array = Array(object, key, path, required);
    if (array == nullptr) return;
    const std::string field = FieldPath(path, key);
    for (size_t i = 0; i < array->size() && !failed(); ++i) {
      const Json& item = (*array)[i];
      const std::string at = ElementPath(field, i);
      if (!Expect(item, item.is_object(), "an object", at)) return;
      read(item, at);
    }
  }

 private:
  std::optional<Error> error_;
};

}  // namespace perfgate::wire
