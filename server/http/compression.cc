// SPDX-License-Identifier: Apache-2.0
#include "server/http/compression.h"

#include <zlib.h>

#include <algorithm>

#include "core/text.h"

namespace perfwarden::http {
namespace {

// The quality of one Accept-Encoding element ("gzip;q=0.5" -> 0.5); 1 without a q.
double Quality(std::string_view parameters) {
  for (size_t at = 0; at < parameters.size();) {
    const size_t end = std::min(parameters.find(';', at), parameters.size());
    std::string_view param = Trim(parameters.substr(at, end - at));
    if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
      try {
        return std::stod(std::string(param.substr(2)));
      } catch (...) {
        return 0;  // a malformed quality does not enable an encoding
      }
    }
    at = end + 1;
  }
  return 1;
}

bool Compressible(std::string_view content_type) {
  const std::string type = AsciiLower(content_type.substr(0, content_type.find(';')));
  return type == "application/json" || type == "text/javascript" || type == "text/css" ||
         type == "text/html" || type == "text/plain" || type == "image/svg+xml" ||
         type == "application/yaml";
}

}  // namespace

bool AcceptsGzip(const Request& request) {
  bool accepted = false;
  for (const auto& [name, value] : request.headers.fields()) {
    if (!EqualsIgnoreCase(name, "Accept-Encoding")) continue;
    std::string_view list = value;
    for (size_t at = 0; at <= list.size();) {
      const size_t end = std::min(list.find(',', at), list.size());
      std::string_view element = Trim(list.substr(at, end - at));
      const size_t semicolon = std::min(element.find(';'), element.size());
      const std::string coding = AsciiLower(Trim(element.substr(0, semicolon)));
      const double q = Quality(element.substr(semicolon));
      if (coding == "gzip" || coding == "x-gzip") {
        return q > 0;  // an explicit entry decides
      }
      if (coding == "*") accepted = q > 0;
      at = end + 1;
    }
  }
  return accepted;
}

Result<std::string> Gzip(std::string_view data, int level) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return MakeError(ErrorCode::kInternal, "gzip: deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&stream, Z_FINISH);
  const uLong written = stream.total_out;
  deflateEnd(&stream);
  if (status != Z_STREAM_END) return MakeError(ErrorCode::kInternal, "gzip: deflate failed");
  out.resize(written);
  return out;
}

void CompressIfAccepted(const Request& request, Response& response) {
  if (!Compressible(response.content_type)) return;
  response.headers.Set("Vary", "Accept-Encoding");
  if (response.body.size() < kCompressMinBytes || response.headers.Contains("Content-Encoding") ||
      !AcceptsGzip(request)) {
    return;
  }
  // Level 1: most of the size for little CPU (a 5 MB series compresses in tens of ms).
  auto packed = Gzip(response.body, 1);
  if (!packed || packed->size() >= response.body.size()) return;
  response.body = *std::move(packed);
  response.headers.Set("Content-Encoding", "gzip");
}

}  // namespace perfwarden::http
