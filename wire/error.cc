// SPDX-License-Identifier: Apache-2.0
#include "wire/error.h"

#include <array>
#include <nlohmann/json.hpp>

#include "wire/json_type_name.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

constexpr std::array<ErrorCode, 7> kCodes = {
    ErrorCode::kInvalidArgument, ErrorCode::kNotFound,         ErrorCode::kConflict,
    ErrorCode::kUnauthenticated, ErrorCode::kPermissionDenied, ErrorCode::kUnavailable,
    ErrorCode::kInternal};

}  // namespace

int StatusOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kPermissionDenied:
      return 403;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kConflict:
      return 409;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

ErrorCode CodeOfStatus(int status) {
  for (ErrorCode code : kCodes) {
    if (StatusOf(code) == status) return code;
  }
  return status >= 500 ? ErrorCode::kUnavailable : ErrorCode::kInvalidArgument;
}

std::optional<ErrorCode> ErrorCodeOfName(std::string_view name) {
  for (ErrorCode code : kCodes) {
    if (ErrorCodeName(code) == name) return code;
  }
  return std::nullopt;
}

std::string EncodeErrorBody(const ErrorBody& body) {
  json error = {{"code", body.code}, {"message", body.message}, {"field", nullptr}};
  if (!body.field.empty()) error["field"] = body.field;
  if (!body.request_id.empty()) error["request_id"] = body.request_id;
  return json{{"error", error}}.dump(-1, ' ', /*ensure_ascii=*/false,
                                     json::error_handler_t::replace);
}

std::string EncodeErrorBody(const Error& error) {
  return EncodeErrorBody(
      ErrorBody{std::string(ErrorCodeName(error.code)), error.message, error.field, {}});
}

Result<ErrorBody> DecodeErrorBody(std::string_view text) {
  const json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgument("not an error body: malformed JSON");
  if (!root.is_object()) {
    return InvalidArgument("not an error body: " + std::string(JsonTypeName(root)) +
                           ", not an object");
  }
  const auto error = root.find("error");
  if (error == root.end() || !error->is_object()) {
    return InvalidArgument("not an error body: no \"error\" object", "error");
  }
  ErrorBody body;
  for (auto [name, out] : {std::pair<const char*, std::string*>{"code", &body.code},
                           {"message", &body.message},
                           {"field", &body.field},
                           {"request_id", &body.request_id}}) {
    const auto member = error->find(name);
    if (member == error->end() || member->is_null()) continue;
    if (!member->is_string()) {
      return InvalidArgument("expected a string, got " + std::string(JsonTypeName(*member)),
                             std::string("error.") + name);
    }
    *out = member->get<std::string>();
  }
  return body;
}

}  // namespace perfwarden::wire
