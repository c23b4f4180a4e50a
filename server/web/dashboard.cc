// SPDX-License-Identifier: Apache-2.0
#include "server/web/dashboard.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "server/http/errors.h"
#include "server/web/assets.h"

namespace perfwarden::server::web {
namespace {

constexpr std::string_view kIndex = "index.html";
constexpr std::string_view kSecurityPolicy =
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const EmbeddedFile* FindEmbedded(std::string_view path) {
  auto files = EmbeddedAssets();
  auto it = std::lower_bound(files.begin(), files.end(), path,
                             [](const EmbeddedFile& f, std::string_view p) { return f.path < p; });
  return it != files.end() && it->path == path ? &*it : nullptr;
}

// FNV-1a of the bytes: an ETag for files read from disk, where no digest was computed at build
// time (development only; the embedded files carry their SHA-256).
std::string DiskTag(std::string_view bytes) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
  std::ostringstream out;
  out << std::hex << hash << '-' << bytes.size();
  return out.str();
}

http::Response Serve(const DashboardOptions& options, std::string_view path,
                     const http::Request& request) {
  if (!IsSafeAssetPath(path)) return http::NotFound(request.path);
  const auto if_none_match = request.headers.Get("If-None-Match");
  if (options.web_root.empty()) {
    const EmbeddedFile* file = FindEmbedded(path);
    if (file == nullptr) return http::NotFound(request.path);
    return AssetResponse(path, file->bytes, file->sha256, if_none_match);
  }
  const std::filesystem::path full = std::filesystem::path(options.web_root) / std::string(path);
  std::error_code error;
  if (!std::filesystem::is_regular_file(full, error)) return http::NotFound(request.path);
  std::ifstream in(full, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return http::NotFound(request.path);
  const std::string text = bytes.str();
  return AssetResponse(path, text, DiskTag(text), if_none_match);
}

}  // namespace

std::string_view ContentTypeFor(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
      {".map", "application/json"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (path.size() > extension.size() && path.ends_with(extension)) return type;
  }
  if (path.ends_with("/LICENSE") || path == "LICENSE") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

bool IsSafeAssetPath(std::string_view path) {
  if (path.empty()) return false;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, end - start);
    if (segment.empty() || segment.front() == '.') return false;
    for (char c : segment) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

http::Response AssetResponse(std::string_view path, std::string_view bytes, std::string_view sha256,
                             std::optional<std::string_view> if_none_match) {
  const std::string etag = "\"" + std::string(sha256) + "\"";
  http::Response response;
  if (if_none_match && *if_none_match == etag) {
    response.status = 304;
    response.content_type.clear();
  } else {
    response.status = 200;
    response.content_type = std::string(ContentTypeFor(path));
    response.body = std::string(bytes);
  }
  response.headers.Set("ETag", etag);
  // Revalidated at every load (cheap: a 304), so a server upgrade is never half-applied.
  response.headers.Set("Cache-Control", "no-cache");
  response.headers.Set("Content-Security-Policy", std::string(kSecurityPolicy));
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("Referrer-Policy", "no-referrer");
  return response;
}

void RegisterDashboardRoutes(http::Router& router, const DashboardOptions& options) {
  router.Add("GET", "/", "dashboard",
             [options](const http::Request& request, const http::PathParams&) {
               return Serve(options, kIndex, request);
             });
  // One pattern per depth: the router matches whole segments ("/ui/{p1}/{p2}").
  std::string pattern = "/ui";
  std::vector<std::string> names;
  for (int depth = 1; depth <= 4; ++depth) {
    names.push_back("p" + std::to_string(depth));
    pattern += "/{" + names.back() + "}";
    router.Add("GET", pattern, "dashboard.asset",
               [options, names](const http::Request& request, const http::PathParams& params) {
                 std::string path;
                 for (const std::string& name : names) {
                   auto it = params.find(name);
                   if (it == params.end()) return http::NotFound(request.path);
                   if (!path.empty()) path += '/';
                   path += it->second;
                 }
                 return Serve(options, path, request);
               });
  }
}

}  // namespace perfwarden::server::web
