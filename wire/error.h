// SPDX-License-Identifier: Apache-2.0
// The error body of every failed HTTP answer, {"error": {"code", "message", "field"}}, and the
// one map between ErrorCode and HTTP status: the server writes both with it, the runner reads
// both with it, so that a code means the same on either side of the wire.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace perfwarden::wire {

// kInvalidArgument 400, kUnauthenticated 401, kPermissionDenied 403, kNotFound 404,
// kConflict 409, kInternal 500, kUnavailable 503.
int StatusOf(ErrorCode code);

// The inverse of StatusOf on its seven statuses. Any other status from 500 on reads as
// kUnavailable (the server failed), any other below as kInvalidArgument (the request as sent
// was refused: another 4xx, or a redirect that perfwarden does not follow).
ErrorCode CodeOfStatus(int status);

// The code named by ErrorCodeName ("NOT_FOUND"); nullopt for any other text, such as the
// protocol codes ("PAYLOAD_TOO_LARGE") that no ErrorCode stands for.
std::optional<ErrorCode> ErrorCodeOfName(std::string_view name);

// What an error body says. `code` is ErrorCodeName of an ErrorCode or a protocol code;
// `field` is "" when the body names none (null on the wire).
struct ErrorBody {
  std::string code;
  std::string message;
  std::string field;
  // The request the error answered (X-Request-Id); "" when none, and then left out of the JSON.
  std::string request_id;

  bool operator==(const ErrorBody&) const = default;
};

// The compact JSON of `body`. Messages may quote client input that is not UTF-8: invalid bytes
// are replaced rather than refused.
std::string EncodeErrorBody(const ErrorBody& body);
// The body of `error`: its code's name, its message and field.
std::string EncodeErrorBody(const Error& error);

// The body as a server sent it. kInvalidArgument naming the problem when `text` is not JSON,
// holds no "error" object, or a member of it is not a string ("field" may be null; absent
// members read as "").
Result<ErrorBody> DecodeErrorBody(std::string_view text);

}  // namespace perfwarden::wire
