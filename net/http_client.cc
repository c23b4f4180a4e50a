// SPDX-License-Identifier: Apache-2.0
#include "net/http_client.h"

#include <curl/curl.h>

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "core/version.h"

namespace perfwarden::net {
namespace {

// curl_global_init is not thread-safe in the libcurl versions we support (before 7.84 it is
// documented so), hence one call per process behind a once_flag. It is never undone:
// curl_global_cleanup at exit would race other threads still holding handles.
Result<void> InitCurlOnce() {
  static std::once_flag once;
  static CURLcode result = CURLE_OK;
  std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (result != CURLE_OK) {
    return MakeError(ErrorCode::kInternal,
                     std::string("libcurl initialisation failed: ") + curl_easy_strerror(result));
  }
  return {};
}

struct Transfer {
  HttpResponse response;
  size_t max_body = 0;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (transfer->response.body.size() + bytes > transfer->max_body) {
    transfer->too_large = true;
    return 0;  // anything but `bytes` makes curl abort with CURLE_WRITE_ERROR
  }
  transfer->response.body.append(data, bytes);
  return bytes;
}

std::string Trim(std::string text) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  size_t begin = 0;
  while (begin < text.size() && !not_space(static_cast<unsigned char>(text[begin]))) ++begin;
  size_t end = text.size();
  while (end > begin && !not_space(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  const std::string line(data, bytes);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line: headers of an interim (1xx) response before it are not the answer's.
    transfer->response.headers.clear();
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return bytes;  // the blank line ending the head
  std::string name = Trim(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  transfer->response.headers[name] = Trim(line.substr(colon + 1));
  return bytes;
}

// Frees a header list on every path out of Send.
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

bool Append(Slist& list, const std::string& line) {
  // curl_slist_append returns the head: a new one only when the list was empty.
  curl_slist* head = curl_slist_append(list.get(), line.c_str());
  if (head == nullptr) return false;
  if (list == nullptr) list.reset(head);
  return true;
}

std::string CaBundle(const HttpClientOptions& options) {
  if (!options.ca_bundle.empty()) return options.ca_bundle;
  for (const char* name : {"PERFWARDEN_CA_BUNDLE", "CURL_CA_BUNDLE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return "";
}

}  // namespace

std::string DefaultUserAgent() { return "perfwarden/" + std::string(Version()); }

std::string RedactUrl(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  const size_t authority = scheme_end + 3;
  const size_t authority_end = std::min(url.find_first_of("/?#", authority), url.size());
  const size_t at = url.rfind('@', authority_end == 0 ? 0 : authority_end - 1);
  if (at == std::string::npos || at < authority) return url;
  return url.substr(0, authority) + url.substr(at + 1);
}

struct HttpClient::Impl {
  CURL* curl = nullptr;
  HttpClientOptions options;
  char error_text[CURL_ERROR_SIZE] = {};

  ~Impl() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;
HttpClient::~HttpClient() = default;

const HttpClientOptions& HttpClient::options() const { return impl_->options; }

Result<HttpClient> HttpClient::Create(HttpClientOptions options) {
  if (auto init = InitCurlOnce(); !init) return tl::unexpected(init.error());
  auto impl = std::make_unique<Impl>();
  impl->curl = curl_easy_init();
  if (impl->curl == nullptr) {
    return MakeError(ErrorCode::kInternal, "libcurl could not create an easy handle");
  }
  impl->options = std::move(options);
  return HttpClient(std::move(impl));
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request) {
  CURL* curl = impl_->curl;
  const HttpClientOptions& options = impl_->options;
  const std::string where = request.method + " " + RedactUrl(request.url);
  // reset keeps the connection cache, so keep-alive survives; options are set afresh so that
  // nothing from one request (a body, a method) leaks into the next.
  curl_easy_reset(curl);
  impl_->error_text[0] = '\0';

  Transfer transfer;
  transfer.max_body = options.max_response_bytes;
  Slist headers;
  const std::string& token =
      request.bearer_token.empty() ? options.bearer_token : request.bearer_token;
  bool headers_ok = true;
  if (!token.empty()) headers_ok = headers_ok && Append(headers, "Authorization: Bearer " + token);
  if (!request.content_type.empty()) {
    headers_ok = headers_ok && Append(headers, "Content-Type: " + request.content_type);
  }
  // No "Expect: 100-continue" round trip before large bodies: the server answers directly.
  headers_ok = headers_ok && Append(headers, "Expect:");
  for (const auto& [name, value] : request.headers) {
    headers_ok = headers_ok && Append(headers, value.empty() ? name + ":" : name + ": " + value);
  }
  if (!headers_ok) return MakeError(ErrorCode::kInternal, where + ": out of memory for headers");

  const std::string ca_bundle = CaBundle(options);
  CURLcode set = CURLE_OK;
  const auto opt = [&](CURLoption option, auto value) {
    if (set == CURLE_OK) set = curl_easy_setopt(curl, option, value);
  };
  opt(CURLOPT_URL, request.url.c_str());
  opt(CURLOPT_PROTOCOLS_STR, "http,https");
  opt(CURLOPT_FOLLOWLOCATION, 0L);
  opt(CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: we may run on any thread
  opt(CURLOPT_ERRORBUFFER, impl_->error_text);
  opt(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  opt(CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout.count()));
  opt(CURLOPT_USERAGENT, options.user_agent.c_str());
  opt(CURLOPT_ACCEPT_ENCODING, "");  // gzip (the server's large answers), decoded by libcurl
  opt(CURLOPT_SSL_VERIFYPEER, 1L);
  opt(CURLOPT_SSL_VERIFYHOST, 2L);
  if (!ca_bundle.empty()) opt(CURLOPT_CAINFO, ca_bundle.c_str());
  opt(CURLOPT_HTTPHEADER, headers.get());
  opt(CURLOPT_WRITEFUNCTION, &OnBody);
  opt(CURLOPT_WRITEDATA, static_cast<void*>(&transfer));
  opt(CURLOPT_HEADERFUNCTION, &OnHeader);
  opt(CURLOPT_HEADERDATA, static_cast<void*>(&transfer));
  if (request.method == "HEAD") {
    opt(CURLOPT_NOBODY, 1L);
  } else if (request.body.empty() && request.method != "POST" && request.method != "PUT") {
    opt(CURLOPT_HTTPGET, 1L);  // no body, no Content-Length
    if (request.method != "GET") opt(CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else {
    // POSTFIELDS does not copy: request.body outlives curl_easy_perform below.
    opt(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    opt(CURLOPT_POSTFIELDS, request.body.data());
    if (request.method != "POST") opt(CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  if (set != CURLE_OK) {
    return MakeError(ErrorCode::kInternal,
                     where + ": libcurl refused an option: " + curl_easy_strerror(set));
  }

  const CURLcode code = curl_easy_perform(curl);
  // The handle keeps pointers to our header list and error buffer; drop them before returning.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
  if (code != CURLE_OK) {
    std::string detail = curl_easy_strerror(code);
    if (impl_->error_text[0] != '\0') detail += " (" + std::string(impl_->error_text) + ")";
    if (transfer.too_large) {
      detail = "the response body exceeds " + std::to_string(options.max_response_bytes) + " bytes";
    }
    if (code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL) {
      return InvalidArgument(where + ": " + detail, "url");
    }
    return MakeError(ErrorCode::kUnavailable, where + ": " + detail);
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  transfer.response.status = static_cast<int>(status);
  return std::move(transfer.response);
}

}  // namespace perfwarden::net
