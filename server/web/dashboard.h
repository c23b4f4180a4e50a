// SPDX-License-Identifier: Apache-2.0
// The web dashboard (docs/dashboards.md): GET / answers web/index.html and GET /ui/<path> every
// other file of web/, from the copy built into the binary or, with a web root, from disk. The
// pages are static; they read the REST API from the browser with the user's token.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "server/http/router.h"

namespace perfwarden::server::web {

struct DashboardOptions {
  // Empty: the embedded files. Otherwise a directory whose files are read at every request
  // (front-end development: edit, reload).
  std::string web_root;
};

// Registers GET / and GET /ui/... (up to four path segments below /ui).
void RegisterDashboardRoutes(http::Router& router, const DashboardOptions& options);

// The Content-Type for a file name, by extension; application/octet-stream when unknown.
std::string_view ContentTypeFor(std::string_view path);

// True when `path` (relative, '/'-separated) may name a dashboard file: segments of
// [A-Za-z0-9._-] that do not start with '.', so no "..", no hidden files, no absolute paths.
bool IsSafeAssetPath(std::string_view path);

// The answer for one file: 200 with the bytes, or 304 when `if_none_match` carries its ETag.
// Every answer carries the dashboard's security headers (a strict Content-Security-Policy:
// scripts and data only from this origin).
http::Response AssetResponse(std::string_view path, std::string_view bytes, std::string_view sha256,
                             std::optional<std::string_view> if_none_match);

}  // namespace perfwarden::server::web
