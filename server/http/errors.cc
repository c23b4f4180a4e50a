// SPDX-License-Identifier: Apache-2.0
#include "server/http/errors.h"

#include <string>

#include "core/request_id.h"
#include "wire/error.h"

namespace perfwarden::http {

Response ErrorResponse(int status, std::string_view code, std::string_view message,
                       std::string_view field) {
  Response response = Response::Json(
      status, wire::EncodeErrorBody(wire::ErrorBody{std::string(code), std::string(message),
                                                    std::string(field), CurrentRequestId()}));
  if (status == 401) response.headers.Set("WWW-Authenticate", "Bearer");
  if (status == 503) response.headers.Set("Retry-After", "1");
  return response;
}

Response ErrorResponse(const Error& error) {
  return ErrorResponse(wire::StatusOf(error.code), ErrorCodeName(error.code), error.message,
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

Response TooManyRequests(std::string_view message, int retry_after_seconds) {
  Response response = ErrorResponse(429, "RESOURCE_EXHAUSTED", message);
  response.headers.Set("Retry-After", std::to_string(retry_after_seconds));
  return response;
}

Response ServerBusy(std::string_view message, int retry_after_seconds) {
  Response response = ErrorResponse(503, "UNAVAILABLE", message);
  response.headers.Set("Retry-After", std::to_string(retry_after_seconds));
  return response;
}

}  // namespace perfwarden::http
