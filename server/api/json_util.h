// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the API v1 handlers: JSON bodies in (Content-Type, depth, object shape),
// JSON out (the P, R and T objects of docs/api.md), and strict query-parameter parsing, so that
// every handler rejects bad input the same way and names the field at fault.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "server/http/router.h"
#include "server/http/types.h"
#include "server/store/store.h"

namespace perfwarden::server::api {

// 200/201 with `body` dumped as JSON.
http::Response JsonResponse(int status, const nlohmann::json& body);

// 415 UNSUPPORTED_MEDIA_TYPE unless the request says Content-Type: application/json (parameters
// such as charset=utf-8 allowed); nullopt when it does.
std::optional<http::Response> CheckJsonContentType(const http::Request& request);

// Values one small JSON body (projects, tokens, alert updates, verdict requests, bisects) may hold:
// the largest legitimate one, a verdict request of 1000 rules, has under 10,000.
inline constexpr size_t kMaxBodyElements = 100'000;

// Parses a small JSON object body through wire::ParseCheckedJson, which stops before the DOM
// grows past a limit: malformed JSON, invalid UTF-8, nesting deeper than `max_depth`, more than
// `max_elements` values, a duplicate key in any object, a string or key holding U+0000 and a
// non-object root are kInvalidArgument naming the JSON path at fault where there is one.
Result<nlohmann::json> ParseJsonObject(std::string_view body, int max_depth,
                                       size_t max_elements = kMaxBodyElements);

// 400 naming the first query parameter that is not in `allowed`, or that is repeated (a typo
// must not silently widen a query; two values for one name are ambiguous).
Result<void> CheckQueryParams(const http::Request& request,
                              const std::vector<std::string>& allowed);

// An integer query parameter in [min, max]; `fallback` when absent.
Result<int> IntParam(const http::Request& request, std::string_view name, int min, int max,
                     int fallback);
// The path parameter "id" as a positive integer; kInvalidArgument (field "id") naming `what`
// ("alert id") otherwise.
Result<int64_t> PositiveIdParam(const http::PathParams& params, std::string_view what);
// An RFC 3339 timestamp parameter ("" when absent).
Result<std::string> TimeParam(const http::Request& request, std::string_view name);
// A plain string parameter ("" when absent); `required` makes absence a 400.
Result<std::string> StringParam(const http::Request& request, std::string_view name, bool required);

// Project names: wire::IsName minus '/' (a project is one URL path segment).
bool IsProjectName(std::string_view text);

// protected_branches: the project's own list or, when it has none, the server's default
// (protected_branches_from "project" or "server").
nlohmann::json ProjectJson(const store::Project& project,
                           const std::vector<std::string>& default_protected_branches);
nlohmann::json RunJson(const store::RunSummary& run);
nlohmann::json TokenJson(const store::TokenRecord& token);

// A finite number, or null (JSON has no NaN).
nlohmann::json Number(double value);

// Adapts a handler that returns Result<Response> to http::Handler: checks the query parameters
// against `allowed_query` first and turns any error into the one error body.
using ApiHandler =
    std::function<Result<http::Response>(const http::Request&, const http::PathParams&)>;
http::Handler Handle(std::initializer_list<std::string_view> allowed_query, ApiHandler handler);

}  // namespace perfwarden::server::api
