// SPDX-License-Identifier: Apache-2.0
// HttpClient: HTTP(S) over one libcurl easy handle per object (connections are kept alive between
// requests), used by the runner to reach perfwarden-server and by the server for its webhook. Any
// HTTP status is a response; only transport failures (refused, timeout, TLS, DNS) are errors, so
// callers decide what a status means. libcurl types stay inside http_client.cc.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "core/result.h"

namespace perfwarden::net {

// The User-Agent every request carries unless HttpClientOptions says otherwise.
std::string DefaultUserAgent();  // "perfwarden/<version>"

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT, DELETE, HEAD, ...
  std::string url;             // absolute http:// or https:// URL
  std::string body;            // sent when not empty (and always for POST/PUT)
  // Extra header fields, sent as given (a name mapped to "" removes a header curl would add).
  std::map<std::string, std::string> headers;
  std::string content_type;  // "" sends none
  // Overrides HttpClientOptions::bearer_token for this request when not empty. Sent as
  // "Authorization: Bearer ..."; never logged and never part of an error message.
  std::string bearer_token;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  // Names lower-cased; of the final response only (interim 1xx responses are dropped). A field
  // repeated in the response keeps its last value.
  std::map<std::string, std::string> headers;
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{120'000};  // the whole request, upload included
  std::string bearer_token;                          // default Authorization for every request
  std::string user_agent = DefaultUserAgent();
  // CA bundle for HTTPS verification (which is always on). Empty: $PERFWARDEN_CA_BUNDLE, else
  // $CURL_CA_BUNDLE, else libcurl's built-in default.
  std::string ca_bundle;
  // A response body larger than this fails the request (kUnavailable): a misbehaving server
  // must not exhaust the caller's memory.
  size_t max_response_bytes = 64u << 20;
};

class HttpClient {
 public:
  // Initialises libcurl once per process (thread-safe) and makes the easy handle.
  // kInternal when libcurl cannot be initialised.
  static Result<HttpClient> Create(HttpClientOptions options = {});

  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  ~HttpClient();

  // Sends one request and waits for the whole response; no redirect is followed (a 3xx is
  // returned as is). Errors: kUnavailable for transport failures, with curl's error text and
  // the URL (user info removed); kInvalidArgument (field "url") for a malformed URL or a scheme
  // other than http/https. One object is not safe to use from two threads at once.
  Result<HttpResponse> Send(const HttpRequest& request);

  const HttpClientOptions& options() const;

 private:
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `url` with any "user:password@" removed: what error messages may show.
std::string RedactUrl(const std::string& url);

}  // namespace perfwarden::net
