// SPDX-License-Identifier: Apache-2.0
// gzip Content-Encoding for responses (RFC 9110 8.4): large JSON series, the dashboard's
// scripts. Applied by the server after routing, so handlers and their tests see plain bodies.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"
#include "server/http/types.h"

namespace perfwarden::http {

// Bodies smaller than this are sent as they are (the gzip header and the CPU are not worth it).
inline constexpr std::size_t kCompressMinBytes = 1024;

// True when Accept-Encoding lists gzip (or *) with a non-zero quality ("gzip;q=0" refuses it).
bool AcceptsGzip(const Request& request);

// The gzip member (RFC 1952) of `data` at zlib `level` (1 fastest .. 9 smallest).
Result<std::string> Gzip(std::string_view data, int level);

// Compresses `response` in place when the client accepts gzip, the body is at least
// kCompressMinBytes of a textual type (JSON, JavaScript, CSS, HTML, SVG, plain text) and not
// already encoded; adds `Vary: Accept-Encoding` to every compressible answer either way (caches
// must not hand a gzip body to a client that did not ask for one).
void CompressIfAccepted(const Request& request, Response& response);

}  // namespace perfwarden::http
