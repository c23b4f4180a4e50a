// SPDX-License-Identifier: Apache-2.0
// Error responses: an Error as its status (wire::StatusOf, the one ErrorCode -> status map) and
// its body (wire::EncodeErrorBody: {"error":{"code":"NOT_FOUND","message":"...","field":null}},
// plus "request_id" while a request is handled: core/request_id.h).
// Handlers return ErrorResponse(error); the server uses the protocol helpers (413, 431, ...).
#pragma once

#include <cstddef>
#include <string_view>

#include "core/result.h"
#include "server/http/types.h"

namespace perfwarden::http {

// JSON error response for `error`; `field` is null when the error names no field. A 401 carries
// `WWW-Authenticate: Bearer` (RFC 6750), a 503 carries `Retry-After: 1`.
Response ErrorResponse(const Error& error);

// The same body shape for statuses that no ErrorCode maps to (protocol errors); `code` is the
// upper-case name such as "PAYLOAD_TOO_LARGE".
Response ErrorResponse(int status, std::string_view code, std::string_view message,
                       std::string_view field = {});

Response PayloadTooLarge(std::size_t limit_bytes);       // 413
Response HeaderFieldsTooLarge(std::size_t limit_bytes);  // 431
Response RequestTimeout();                               // 408
Response BadRequest(std::string_view message);           // 400, malformed HTTP
Response NotFound(std::string_view path);                // 404 for an unknown path
Response MethodNotAllowed(std::string_view allow);       // 405 with `Allow: allow`
// 429 RESOURCE_EXHAUSTED (this caller's share is in use) or 503 UNAVAILABLE (the server's), with
// `Retry-After: retry_after_seconds`.
Response TooManyRequests(std::string_view message, int retry_after_seconds);
Response ServerBusy(std::string_view message, int retry_after_seconds);

}  // namespace perfwarden::http
