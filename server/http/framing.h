// SPDX-License-Identifier: Apache-2.0
// Request framing the server refuses before routing: what RFC 9112 requires of a request, and
// the codings perfwarden does not implement (it would otherwise read the coded bytes as the body);
// and the fields every answer carries. Plain values in and out, so that Beast stays in server.cc.
#pragma once

#include <optional>
#include <string_view>

#include "server/http/types.h"

namespace perfwarden::http {

struct RequestFraming {
  unsigned version = 11;               // 10 for HTTP/1.0, 11 for HTTP/1.1
  bool has_host = false;               // a Host field is present (its value may be empty)
  std::string_view content_encoding;   // the Content-Encoding field, "" when absent
  std::string_view transfer_encoding;  // the Transfer-Encoding field, "" when absent
  // The first of kSingletonFields that the request repeats, "" when none is.
  std::string_view repeated_field;
};

// Fields a request may carry once: a second Host is ambiguous framing (RFC 9112 section 3.2), a
// second Authorization or Content-Type would be ignored by whichever reader takes the first
// (Content-Length twice is refused by the parser already).
inline constexpr std::string_view kSingletonFields[] = {"Host", "Authorization", "Content-Type"};

// The error response for a request the server refuses to read, nullopt when it may go on:
//   400 an HTTP/1.1 request without Host (RFC 9112 section 3.2);
//   400 a field of kSingletonFields given twice, naming it;
//   400 Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1: faulty framing; the
//       connection closes after the answer, as after every refusal here);
//   501 a Transfer-Encoding other than "chunked" (gzip, deflate, "gzip, chunked", ...);
//   415 a Content-Encoding other than "identity" (request bodies are never decoded).
// Field names and codings compare case-insensitively; each message names the coding.
std::optional<Response> RefuseFraming(const RequestFraming& framing);

// Makes any answer fit to send: a status outside 100-999 (a handler bug, which Beast would throw
// on) becomes 500 INTERNAL; Content-Type is application/octet-stream when none was set (but 204
// and 304, which have no body); and unless the handler set them, every answer, errors included,
// says Cache-Control: no-store (an API answer, a new token among them, is never cached; the
// dashboard's files say otherwise), X-Content-Type-Options: nosniff (no browser guesses another
// type) and X-Request-Id (a new id for answers given before any route: 413, 431, ...).
void FrameResponse(Response& response);

}  // namespace perfwarden::http
