// SPDX-License-Identifier: Apache-2.0
// Error and Result<T>: how perfwarden reports failures across module boundaries.
// Error codes are transport-agnostic; the HTTP layer maps them to statuses in one place,
// the CLI maps them to exit codes.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <utility>

namespace perfwarden {

enum class ErrorCode {
  kInvalidArgument,
  kNotFound,
  kConflict,
  kUnauthenticated,
  kPermissionDenied,
  kUnavailable,
  kInternal,
};

// A failure: what went wrong (message, for humans) and, when one input field is to blame,
// which one (field, a JSON-pointer-like path such as "benchmarks[3].real_time").
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  std::string field;

  // "message" or "field: message".
  std::string ToString() const;
};

template <class T>
using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> MakeError(ErrorCode code, std::string message,
                                       std::string field = {}) {
  return tl::unexpected<Error>(Error{code, std::move(message), std::move(field)});
}

inline tl::unexpected<Error> InvalidArgument(std::string message, std::string field = {}) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message), std::move(field));
}

// "INVALID_ARGUMENT", "NOT_FOUND", ...
std::string_view ErrorCodeName(ErrorCode code);

}  // namespace perfwarden
