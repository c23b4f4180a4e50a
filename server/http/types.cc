// SPDX-License-Identifier: Apache-2.0
#include "server/http/types.h"

#include <algorithm>
#include <boost/locale/utf.hpp>
#include <cctype>

namespace perfwarden::http {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::optional<std::string_view> Headers::Get(std::string_view name) const {
  for (const auto& [field, value] : fields_) {
    if (EqualsIgnoreCase(field, name)) return std::string_view(value);
  }
  return std::nullopt;
}

void Headers::Set(std::string name, std::string value) {
  std::erase_if(fields_, [&](const auto& field) { return EqualsIgnoreCase(field.first, name); });
  fields_.emplace_back(std::move(name), std::move(value));
}

void Headers::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string> Request::Query(std::string_view name) const {
  auto it = query.find(std::string(name));
  if (it == query.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Request::QueryAll(std::string_view name) const {
  std::vector<std::string> values;
  auto [first, last] = query.equal_range(std::string(name));
  for (auto it = first; it != last; ++it) values.push_back(it->second);
  return values;
}

Response Response::Json(int status, std::string body) {
  Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

Response Response::Text(int status, std::string body, std::string content_type) {
  Response response;
  response.status = status;
  response.content_type = std::move(content_type);
  response.body = std::move(body);
  return response;
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) {
        return InvalidArgument("truncated percent escape in request target");
      }
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return InvalidArgument("bad percent escape in request target");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::string_view> ParamTextProblem(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return "contains NUL";
  using Utf8 = boost::locale::utf::utf_traits<char>;
  for (auto it = text.begin(); it != text.end();) {
    if (Utf8::decode(it, text.end()) == boost::locale::utf::illegal) return "not valid UTF-8";
  }
  return std::nullopt;
}

Result<void> ParseTarget(std::string_view target, Request& request) {
  if (target.empty() || target.front() != '/') {
    return InvalidArgument("request target must be an absolute path");
  }
  size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  // The path stays encoded, but a bad escape is rejected here, once, for every route.
  if (auto decoded = PercentDecode(path, false); !decoded) return tl::unexpected(decoded.error());
  request.path = std::string(path);
  request.query.clear();
  if (question == std::string_view::npos) return {};
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    auto name = PercentDecode(pair.substr(0, eq), true);
    if (!name) return tl::unexpected(name.error());
    std::string value;
    if (eq != std::string_view::npos) {
      auto decoded = PercentDecode(pair.substr(eq + 1), true);
      if (!decoded) return tl::unexpected(decoded.error());
      value = std::move(*decoded);
    }
    request.query.emplace(std::move(*name), std::move(value));
  }
  return {};
}

}  // namespace perfwarden::http
