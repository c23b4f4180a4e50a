// SPDX-License-Identifier: Apache-2.0
// A loopback TCP connection for tests that write exact bytes (idle connections, stalled or
// malformed requests) and read what comes back. Every read ends after `timeout`, a safety net
// against a hung server. Header-only, POSIX sockets.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace perfwarden::testing {

class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port, std::chrono::seconds timeout = std::chrono::seconds(60))
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval tv{static_cast<time_t>(timeout.count()), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // Up to n bytes: fewer only when the connection ended or the safety net ran out.
  std::string Receive(std::size_t n) {
    while (buffer_.size() < n && Fill()) {
    }
    return Take(std::min(n, buffer_.size()));
  }

  // Everything up to and including the first "\r\n\r\n" (a response's status line and header
  // fields); what was read beyond it stays for the next call. "" when the connection ended first.
  std::string ReceiveHead() {
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return "";
    }
    return Take(end + 4);
  }

  // True when the server closed the connection with nothing (more) to read.
  bool ClosedWithoutAnswer() {
    if (!buffer_.empty()) return false;
    char byte;
    ssize_t n = ::recv(fd_, &byte, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  bool Fill() {
    char chunk[4096];
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  std::string Take(std::size_t n) {
    std::string taken = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return taken;
  }

  int fd_;
  bool connected_ = false;
  std::string buffer_;
};

}  // namespace perfwarden::testing
