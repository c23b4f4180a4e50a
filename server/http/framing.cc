// SPDX-License-Identifier: Apache-2.0
#include "server/http/framing.h"

#include <cctype>
#include <string>

#include "core/request_id.h"
#include "server/http/errors.h"

namespace perfwarden::http {

namespace {

std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// True when every comma-separated coding of `field` is `allowed` (an empty field is none).
bool OnlyCoding(std::string_view field, std::string_view allowed) {
  while (true) {
    const auto comma = field.find(',');
    if (!EqualsIgnoringCase(Trim(field.substr(0, comma)), allowed)) return false;
    if (comma == std::string_view::npos) return true;
    field.remove_prefix(comma + 1);
  }
}

}  // namespace

std::optional<Response> RefuseFraming(const RequestFraming& framing) {
  if (framing.version >= 11 && !framing.has_host) {
    return ErrorResponse(400, "INVALID_ARGUMENT", "HTTP/1.1 request without a Host header", "Host");
  }
  if (!framing.repeated_field.empty()) {
    const std::string field(framing.repeated_field);
    return ErrorResponse(400, "INVALID_ARGUMENT", "more than one " + field + " header", field);
  }
  const std::string_view transfer = Trim(framing.transfer_encoding);
  if (framing.version < 11 && !transfer.empty()) {
    return ErrorResponse(400, "INVALID_ARGUMENT",
                         "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1); send "
                         "the body with Content-Length",
                         "Transfer-Encoding");
  }
  if (!transfer.empty() && !EqualsIgnoringCase(transfer, "chunked")) {
    return ErrorResponse(501, "NOT_IMPLEMENTED",
                         "Transfer-Encoding \"" + std::string(transfer) +
                             "\" is not supported; send the body with Content-Length or "
                             "Transfer-Encoding: chunked alone",
                         "Transfer-Encoding");
  }
  const std::string_view content = Trim(framing.content_encoding);
  if (!content.empty() && !OnlyCoding(content, "identity")) {
    return ErrorResponse(415, "UNSUPPORTED_MEDIA_TYPE",
                         "Content-Encoding \"" + std::string(content) +
                             "\" is not supported; send the request body uncompressed",
                         "Content-Encoding");
  }
  return std::nullopt;
}

void FrameResponse(Response& response) {
  if (response.status < 100 || response.status > 999) {
    response = ErrorResponse(Error{ErrorCode::kInternal, "internal error", {}});
  }
  if (response.content_type.empty() && response.status != 204 && response.status != 304) {
    response.content_type = "application/octet-stream";
  }
  if (!response.headers.Contains("Cache-Control"))
    response.headers.Set("Cache-Control", "no-store");
  if (!response.headers.Contains("X-Content-Type-Options")) {
    response.headers.Set("X-Content-Type-Options", "nosniff");
  }
  if (!response.headers.Contains("X-Request-Id"))
    response.headers.Set("X-Request-Id", NewRequestId());
}

}  // namespace perfwarden::http
