#include "server/http/errors.h"

#include <nlohmann/json.hpp>
#include <string>

namespace perfgate::http {

int HttpStatus(ErrorCode code) {
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

Response ErrorResponse(int status, std::string_view code, std::string_view message,
                       std::string_view field) {
  nlohmann::json error = {{"code", code}, {"message", message}, {"field", nullptr}};
  if (!field.empty()) error["field"] = field;
  // Messages may quote client input that is not UTF-8; replace rather than throw.
  Response response =
      Response::Json(status, nlohmann::json{{"error", error}}.dump(
                                 -1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (status == 401) response.headers.Set("WWW-Authenticate", "Bearer");
  if (status == 503) response.headers.Set("Retry-After", "1");
  return response;
}

Response ErrorResponse(const Error& error) {
  return ErrorResponse(HttpStatus(error.code), ErrorCodeName(error.code), error.message,
                       error.field);
}

Response PayloadTooLarge(std::size_t limit_bytes) {
  return ErrorResponse(
      413, "PAYLOAD_TOO_LARGE",
      "request body exceeds the limit of " + std::to_string(limit_bytes) + " bytes");
}

Response HeaderFieldsTooLarge(std::size_t limit_bytes) {
  return ErrorResponse(431, "HEADER_FIELDS_TOO_LARGE",
                       "request line and header fields exceed the limit of " +
                           std::to_string(limit_bytes) + " bytes");
}

Response RequestTimeout() {
  return ErrorResponse(408, "REQUEST_TIMEOUT", "the request was not received in time");
}

Response BadRequest(std::string_view message) {
  return ErrorResponse(400, "INVALID_ARGUMENT", message);
}

Response NotFound(std::string_view path) {
  return ErrorResponse(404, "NOT_FOUND", "no route for " + std::string(path));
}

Response MethodNotAllowed(std::string_view allow) {
  Response response = ErrorResponse(405, "METHOD_NOT_ALLOWED",
                                    "method not allowed; allowed: " + std::string(allow));
  response.headers.Set("Allow", std::string(allow));
  return response;
}

}  // namespace perfgate::http
