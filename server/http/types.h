// SPDX-License-Identifier: Apache-2.0
// Transport-neutral HTTP request and response values. Handlers and the router see only these,
// so they can be called and tested without a socket; the Beast adapter (server.cc) converts
// to and from the wire. No Beast or Asio here on purpose.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace perfwarden::http {

// Header fields in arrival order; names compare case-insensitively (RFC 9110 5.1).
class Headers {
 public:
  // First value of `name`, if present.
  std::optional<std::string_view> Get(std::string_view name) const;
  // Replaces every field called `name` with one field.
  void Set(std::string name, std::string value);
  // Appends a field (repeated fields such as Set-Cookie stay separate).
  void Add(std::string name, std::string value);
  bool Contains(std::string_view name) const { return Get(name).has_value(); }

  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

struct Request {
  std::string method;  // as sent, upper case by convention: "GET", "POST"
  std::string path;    // the target's path, still percent-encoded (the router decodes segments)
  // Decoded query parameters ('+' is a space); a repeated name keeps every value in order.
  std::multimap<std::string, std::string> query;
  Headers headers;
  std::string body;
  std::string remote_address;  // "127.0.0.1:54321"; empty when not from a socket
  std::string id;              // X-Request-Id of the answer; "" lets the router make one

  // First value of query parameter `name`.
  std::optional<std::string> Query(std::string_view name) const;
  // Every value of query parameter `name`, in order.
  std::vector<std::string> QueryAll(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  Headers headers;  // extra fields; Content-Type and Content-Length are set from the above

  static Response Json(int status, std::string body);
  static Response Text(int status, std::string body,
                       std::string content_type = "text/plain; charset=utf-8");
};

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, for query strings). Fails on a
// truncated or non-hex escape; the bytes are not checked for UTF-8 here.
Result<std::string> PercentDecode(std::string_view text, bool plus_is_space);

// What makes a decoded path or query parameter unfit for the routes and the database: "contains
// NUL" for a U+0000 byte, "not valid UTF-8" for bytes that are not UTF-8 (overlong forms and
// surrogates included); nullopt for a text that is fine.
std::optional<std::string_view> ParamTextProblem(std::string_view text);

// Splits a request target ("/a/b?x=1&y=%20") into request.path and request.query. Accepts the
// origin form only (it must start with '/'); the fragment is never sent by clients.
Result<void> ParseTarget(std::string_view target, Request& request);

}  // namespace perfwarden::http
