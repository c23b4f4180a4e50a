// SPDX-License-Identifier: Apache-2.0
#include "server/api/json_util.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "server/http/errors.h"
#include "wire/json_check.h"
#include "wire/validate.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

json NullIfEmpty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

}  // namespace

http::Response JsonResponse(int status, const json& body) {
  return http::Response::Json(status, body.dump());
}

std::optional<http::Response> CheckJsonContentType(const http::Request& request) {
  auto type = request.headers.Get("Content-Type");
  if (type) {
    std::string_view media = type->substr(0, type->find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
    if (http::EqualsIgnoreCase(media, "application/json")) return std::nullopt;
  }
  return http::ErrorResponse(415, "UNSUPPORTED_MEDIA_TYPE",
                             "the body must be JSON (Content-Type: application/json)",
                             "Content-Type");
}

Result<json> ParseJsonObject(std::string_view body, int max_depth, size_t max_elements) {
  wire::JsonLimits limits;
  // The HTTP layer bounds the body's bytes, and so every string; the decoders bound each field.
  limits.max_string = std::numeric_limits<size_t>::max();
  limits.max_depth = max_depth;
  limits.max_elements = max_elements;
  Result<json> root = wire::ParseCheckedJson(body, limits);
  if (!root) return root;
  if (!root->is_object()) return InvalidArgument("the body must be a JSON object");
  return root;
}

Result<void> CheckQueryParams(const http::Request& request,
                              const std::vector<std::string>& allowed) {
  std::set<std::string_view> seen;
  for (const auto& [name, value] : request.query) {
    bool known = false;
    for (const std::string& a : allowed) known = known || a == name;
    if (!known) return InvalidArgument("unknown query parameter \"" + name + "\"", name);
    if (!seen.insert(name).second) {
      return InvalidArgument("query parameter given more than once", name);
    }
  }
  return {};
}

Result<int64_t> PositiveIdParam(const http::PathParams& params, std::string_view what) {
  const std::string& text = params.at("id");
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || ptr != text.data() + text.size() || id <= 0) {
    return InvalidArgument("not " + std::string(what) + " (a positive integer): \"" + text + "\"",
                           "id");
  }
  return id;
}

Result<int> IntParam(const http::Request& request, std::string_view name, int min, int max,
                     int fallback) {
  auto text = request.Query(name);
  if (!text) return fallback;
  int value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || end != text->data() + text->size() || value < min ||
      value > max) {
    return InvalidArgument(
        "must be an integer from " + std::to_string(min) + " to " + std::to_string(max),
        std::string(name));
  }
  return value;
}

Result<std::string> TimeParam(const http::Request& request, std::string_view name) {
  auto text = request.Query(name);
  if (!text) return std::string();
  if (!wire::IsRfc3339(*text)) {
    return InvalidArgument(std::string(wire::kRfc3339Rule), std::string(name));
  }
  return *text;
}

Result<std::string> StringParam(const http::Request& request, std::string_view name,
                                bool required) {
  auto text = request.Query(name);
  if (!text || text->empty()) {
    if (required) return InvalidArgument("missing required query parameter", std::string(name));
    return std::string();
  }
  return *text;
}

bool IsProjectName(std::string_view text) {
  return wire::IsName(text) && text.find('/') == std::string_view::npos;
}

json ProjectJson(const store::Project& project,
                 const std::vector<std::string>& default_protected_branches) {
  return {{"name", project.name},
          {"public_read", project.public_read},
          {"protected_branches",
           project.protected_branches ? *project.protected_branches : default_protected_branches},
          {"protected_branches_from", project.protected_branches ? "project" : "server"},
          {"created_at", NullIfEmpty(project.created_at)}};
}

json RunJson(const store::RunSummary& run) {
  return {{"id", run.id},
          {"project", run.project},
          {"branch", NullIfEmpty(run.branch)},
          {"commit", NullIfEmpty(run.commit_sha)},
          {"testbed", NullIfEmpty(run.testbed)},
          {"pr", run.pr ? json(*run.pr) : json(nullptr)},
          {"started_at", NullIfEmpty(run.started_at)},
          {"finished_at", NullIfEmpty(run.finished_at)},
          {"created_at", NullIfEmpty(run.created_at)},
          {"sample_count", run.sample_count}};
}

json TokenJson(const store::TokenRecord& token) {
  return {{"id", token.id},
          {"name", token.name},
          {"prefix", token.prefix},
          {"scopes", token.scopes},
          {"project", NullIfEmpty(token.project)},
          {"created_at", NullIfEmpty(token.created_at)},
          {"revoked", token.revoked}};
}

json Number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

http::Handler Handle(std::initializer_list<std::string_view> allowed_query, ApiHandler handler) {
  std::vector<std::string> allowed(allowed_query.begin(), allowed_query.end());
  return [allowed = std::move(allowed), handler = std::move(handler)](
             const http::Request& request, const http::PathParams& params) {
    if (auto checked = CheckQueryParams(request, allowed); !checked) {
      return http::ErrorResponse(checked.error());
    }
    Result<http::Response> response = handler(request, params);
    if (!response) return http::ErrorResponse(response.error());
    return std::move(*response);
  };
}

}  // namespace perfwarden::server::api
