// SPDX-License-Identifier: Apache-2.0
// A small blocking HTTP/1.1 client over a POSIX socket for e2e tests and bench/ingest_bench:
// one keep-alive connection to 127.0.0.1:port, Content-Length framed requests and responses
// (the perfwarden server always frames its responses that way). Header-only so that the bench
// can use it without a library of its own.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfwarden::testing {

struct HttpResponse {
  int status = 0;  // 0: no response (transport failure; `body` says why)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  // The body as JSON; a discarded value when it is not JSON.
  nlohmann::json Json() const {
    return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  }
  // error.code / error.field of an error body ("" when absent or null).
  std::string ErrorCode() const { return ErrorMember("code"); }
  std::string ErrorField() const { return ErrorMember("field"); }

 private:
  std::string ErrorMember(const char* name) const {
    nlohmann::json json = Json();
    if (!json.is_object() || !json.contains("error") || !json["error"].is_object()) return "";
    const nlohmann::json& value = json["error"][name];
    return value.is_string() ? value.get<std::string>() : "";
  }
};

class HttpClient {
 public:
  // `timeout` is a safety net against a hung server, not a performance bound.
  explicit HttpClient(std::uint16_t port, std::chrono::seconds timeout = std::chrono::seconds(120))
      : port_(port), timeout_(timeout) {}
  ~HttpClient() { Close(); }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request and reads its response. `token` becomes "Authorization: Bearer token"
  // when not empty; `extra_headers` are sent as given ("Name: value" lines without CRLF). A
  // keep-alive connection that the server closed while idle is reopened and the request sent
  // again once (only when no byte of a response had arrived).
  HttpResponse Request(std::string_view method, std::string_view target, std::string_view token,
                       std::string_view body = {},
                       std::string_view content_type = "application/json",
                       const std::vector<std::string>& extra_headers = {}) {
    std::string request;
    request.reserve(body.size() + 256);
    request.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if (!token.empty()) request.append("Authorization: Bearer ").append(token).append("\r\n");
    for (const std::string& header : extra_headers) request.append(header).append("\r\n");
    if (!body.empty() || method == "POST" || method == "PUT") {
      if (!content_type.empty())
        request.append("Content-Type: ").append(content_type).append("\r\n");
      request.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    }
    request.append("\r\n").append(body);

    for (int attempt = 0; attempt < 2; ++attempt) {
      const bool reused = fd_ >= 0;
      if (!reused && !Connect()) return Failure("connect: " + std::string(std::strerror(errno)));
      const bool sent = Send(request);
      bool got_bytes = false;
      HttpResponse response = ReadResponse(got_bytes);
      if (response.status != 0) {
        auto connection = response.headers.find("connection");
        if (connection != response.headers.end() && connection->second == "close") Close();
        return response;
      }
      Close();
      if (!reused || got_bytes) {
        return Failure(sent ? response.body : "send failed: " + response.body);
      }
    }
    return Failure("no response");
  }

  HttpResponse Get(std::string_view target, std::string_view token = {}) {
    return Request("GET", target, token);
  }
  HttpResponse Post(std::string_view target, std::string_view body, std::string_view token = {}) {
    return Request("POST", target, token, body);
  }
  HttpResponse Delete(std::string_view target, std::string_view token = {}) {
    return Request("DELETE", target, token);
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buffer_.clear();
  }

 private:
  static HttpResponse Failure(std::string why) {
    HttpResponse response;
    response.body = std::move(why);
    return response;
  }

  bool Connect() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    timeval timeout{static_cast<time_t>(timeout_.count()), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    int one = 1;  // requests are written whole; no reason to wait for Nagle
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      const int saved = errno;
      Close();
      errno = saved;
      return false;
    }
    return true;
  }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  bool Fill(bool& got_bytes) {
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    got_bytes = true;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  // One response; status 0 when the connection ended or timed out first.
  HttpResponse ReadResponse(bool& got_bytes) {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill(got_bytes)) return Failure("connection closed before the response head");
    }
    HttpResponse response;
    const std::string head = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (status_line.rfind("HTTP/1.1 ", 0) != 0 || status_line.size() < 12) {
      return Failure("bad status line: " + status_line);
    }
    const int status = std::stoi(status_line.substr(9, 3));
    while (line_end != std::string::npos) {
      const size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      std::string line =
          head.substr(start, line_end == std::string::npos ? line_end : line_end - start);
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const size_t value_start = line.find_first_not_of(' ', colon + 1);
      response.headers[name] = value_start == std::string::npos ? "" : line.substr(value_start);
    }
    auto length_header = response.headers.find("content-length");
    const size_t length =
        length_header == response.headers.end() ? 0 : std::stoul(length_header->second);
    while (buffer_.size() < length) {
      if (!Fill(got_bytes)) return Failure("connection closed inside the response body");
    }
    response.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    response.status = status;
    return response;
  }

  std::uint16_t port_;
  std::chrono::seconds timeout_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace perfwarden::testing
