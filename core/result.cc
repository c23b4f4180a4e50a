// SPDX-License-Identifier: Apache-2.0
#include "core/result.h"

namespace perfwarden {

std::string Error::ToString() const {
  // Messages that already name their field ("base.json: benchmarks[3].real_time: ...") are
  // not prefixed twice.
  if (field.empty() || message.find(field) != std::string::npos) return message;
  return field + ": " + message;
}

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case ErrorCode::kNotFound:
      return "NOT_FOUND";
    case ErrorCode::kConflict:
      return "CONFLICT";
    case ErrorCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case ErrorCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case ErrorCode::kUnavailable:
      return "UNAVAILABLE";
    case ErrorCode::kInternal:
      return "INTERNAL";
  }
  return "INTERNAL";
}

}  // namespace perfwarden
