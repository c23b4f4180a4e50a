// SPDX-License-Identifier: Apache-2.0
// An HTTP request as the server reads it from a socket (server/http/server.cc): Beast's parser
// with the server's header and body limits, the framing refusals (server/http/framing.cc), the
// target's path and query decoding (ParseTarget) and the router's matching and parameter checks
// (server/http/router.cc) over the API's own route shapes. The handlers echo their parameters,
// so every decoded byte is read.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/http/framing.h"
#include "server/http/router.h"
#include "server/http/types.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace bhttp = boost::beast::http;
using namespace perfwarden;

const http::Router& ApiShapedRouter() {
  static const http::Router router = [] {
    http::Router r;
    const auto echo = [](const http::Request& request, const http::PathParams& params) {
      std::string body = request.method + " " + request.path;
      for (const auto& [name, value] : params) body += " " + name + "=" + value;
      for (const auto& [name, value] : request.query) body += " ?" + name + "=" + value;
      return http::Response::Text(200, body);
    };
    for (const char* method : {"GET", "POST", "PATCH", "DELETE"}) {
      r.Add(method, "/api/v1/projects", std::string("projects.") + method, echo);
    }
    r.Add("GET", "/api/v1/projects/{project}/runs", "runs.list", echo);
    r.Add("POST", "/api/v1/projects/{project}/runs", "runs.create", echo);
    r.Add("GET", "/api/v1/projects/{project}/runs/{id}", "runs.get", echo);
    r.Add("POST", "/api/v1/projects/{project}/runs/{id}/verdict", "verdicts.create", echo);
    r.Add("POST", "/api/v1/projects/{project}/runs/{id}/verdict/paired", "verdicts.paired", echo);
    r.Add("PATCH", "/api/v1/projects/{project}/alerts/{id}", "alerts.update", echo);
    r.Add("POST", "/api/v1/projects/{project}/bisect-steps/{id}/result", "steps.result", echo);
    r.Add("DELETE", "/api/v1/tokens/{id}", "tokens.revoke", echo);
    r.Add("GET", "/healthz", "healthz", echo);
    return r;
  }();
  return router;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(16u << 10);  // limits.header_bytes' default
  parser.body_limit(1u << 20);     // the fuzzer's inputs are far smaller than either limit
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t offset = 0;
  while (offset < size && !parser.is_done()) {
    const std::size_t used = parser.put(boost::asio::buffer(data + offset, size - offset), ec);
    if (ec == bhttp::error::need_more) break;
    if (ec) return 0;  // the server answers 400/413/431 and closes
    if (used == 0) break;
    offset += used;
  }
  if (!parser.is_header_done()) return 0;  // the server would wait for more, then time out
  const auto& message = parser.get();
  std::string_view repeated;  // as the server finds it (server.cc, Session::OnHeader)
  for (std::string_view name : http::kSingletonFields) {
    if (repeated.empty() && message.count(name) > 1) repeated = name;
  }
  if (http::RefuseFraming({message.version(), message.find(bhttp::field::host) != message.end(),
                           message[bhttp::field::content_encoding],
                           message[bhttp::field::transfer_encoding], repeated})) {
    return 0;
  }
  if (!parser.is_done()) return 0;
  http::Request request;
  request.method = std::string(message.method_string());
  request.id = "fuzz";
  for (const auto& field : message) {
    request.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = message.body();
  const auto parsed = http::ParseTarget(message.target(), request);
  fuzz::RequireNamedError(parsed, "ParseTarget");
  if (parsed) (void)ApiShapedRouter().Route(request);
  return 0;
}
