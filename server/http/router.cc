// SPDX-License-Identifier: Apache-2.0
#include "server/http/router.h"

#include <exception>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/request_id.h"
#include "server/http/errors.h"

namespace perfwarden::http {

namespace {

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

// 400 naming the first path or query parameter that holds NUL or invalid UTF-8: checked once
// here, so that no route and no database query ever sees such a text.
std::optional<Response> CheckParams(const PathParams& params, const Request& request) {
  auto refuse = [](std::string what, std::string_view problem, std::string field) {
    return ErrorResponse(
        Error{ErrorCode::kInvalidArgument, what + ": " + std::string(problem), std::move(field)});
  };
  for (const auto& [name, value] : params) {
    if (auto problem = ParamTextProblem(value)) {
      return refuse("path parameter " + name, *problem, name);
    }
  }
  for (const auto& [name, value] : request.query) {
    if (auto problem = ParamTextProblem(name)) {
      return refuse("a query parameter's name", *problem, {});
    }
    if (auto problem = ParamTextProblem(value)) {
      return refuse("query parameter " + name, *problem, name);
    }
  }
  return std::nullopt;
}

}  // namespace

void Router::Add(std::string method, std::string_view pattern, std::string name, Handler handler,
                 Cost cost) {
  if (pattern.empty() || pattern.front() != '/') {
    throw std::invalid_argument("route pattern must start with '/': " + std::string(pattern));
  }
  Entry entry{std::move(method), {}, std::move(name), std::move(handler), cost};
  for (std::string_view part : SplitPath(pattern)) {
    if (part.size() >= 2 && part.front() == '{' && part.back() == '}') {
      entry.segments.push_back({std::string(part.substr(1, part.size() - 2)), true});
    } else {
      entry.segments.push_back({std::string(part), false});
    }
  }
  routes_.push_back(std::move(entry));
}

Router::Match Router::Find(const Request& request) const {
  Match match;
  for (std::string_view part : SplitPath(request.path)) {
    auto decoded = PercentDecode(part, false);
    if (!decoded) {
      match.error = ErrorResponse(decoded.error());
      return match;
    }
    match.segments.push_back(std::move(*decoded));
  }
  const std::vector<std::string>& segments = match.segments;
  auto more_specific = [](const Entry& a, const Entry& b) {
    for (size_t i = 0; i < a.segments.size(); ++i) {
      if (a.segments[i].is_param != b.segments[i].is_param) return !a.segments[i].is_param;
    }
    return false;
  };
  for (const Entry& entry : routes_) {
    if (entry.segments.size() != segments.size()) continue;
    bool matches = true;
    for (size_t i = 0; i < segments.size() && matches; ++i) {
      matches =
          entry.segments[i].is_param ? !segments[i].empty() : entry.segments[i].text == segments[i];
    }
    if (!matches) continue;
    match.allowed.insert(entry.method);
    if (match.best_any_method == nullptr || more_specific(entry, *match.best_any_method)) {
      match.best_any_method = &entry;
    }
    if (entry.method == request.method &&
        (match.best == nullptr || more_specific(entry, *match.best))) {
      match.best = &entry;
    }
  }
  return match;
}

Router::Costed Router::CostOf(const Request& request) const {
  const Match match = Find(request);
  if (match.best == nullptr) return {};
  return {match.best->cost, match.best->name};
}

Router::Routed Router::Route(const Request& request) const {
  const std::string id = request.id.empty() ? NewRequestId() : request.id;
  Routed routed;
  {
    ScopedRequestId scope(id);
    routed = RouteInScope(request);
  }
  routed.response.headers.Set("X-Request-Id", id);
  return routed;
}

Router::Routed Router::RouteInScope(const Request& request) const {
  Match match = Find(request);
  if (match.error) return {std::move(*match.error), std::string(kUnmatchedRoute)};
  const std::vector<std::string>& segments = match.segments;
  const Entry* best = match.best;
  if (match.best_any_method == nullptr) {
    return {NotFound(request.path), std::string(kUnmatchedRoute)};
  }
  if (best == nullptr) {
    std::string allow;
    for (const std::string& method : match.allowed) allow += (allow.empty() ? "" : ", ") + method;
    return {MethodNotAllowed(allow), match.best_any_method->name};
  }

  PathParams params;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (best->segments[i].is_param) params.emplace(best->segments[i].text, segments[i]);
  }
  if (auto refused = CheckParams(params, request)) return {std::move(*refused), best->name};
  try {
    return {best->handler(request, params), best->name};
  } catch (const std::exception&) {
    // Handlers return Result-based errors; an exception here is a bug, not the client's fault.
    return {ErrorResponse(Error{ErrorCode::kInternal, "internal error", {}}), best->name};
  } catch (...) {
    return {ErrorResponse(Error{ErrorCode::kInternal, "internal error", {}}), best->name};
  }
}

}  // namespace perfwarden::http
