// SPDX-License-Identifier: Apache-2.0
// A webhook receiver for e2e tests: a one-thread HTTP listener on loopback that answers 200 and
// keeps the bodies it received (the history worker's alert messages).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace perfwarden::testing {

class WebhookSink {
 public:
  WebhookSink() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    ::listen(fd_, 8);
    thread_ = std::thread([this] { Serve(); });
  }
  ~WebhookSink() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mutex_);
    return bodies_;
  }

 private:
  void Serve() {
    while (!stop_) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string data;
      char buffer[4096];
      std::size_t need = std::string::npos;
      while (true) {
        const ssize_t n = ::read(client, buffer, sizeof buffer);
        if (n <= 0) break;
        data.append(buffer, static_cast<std::size_t>(n));
        const std::size_t end = data.find("\r\n\r\n");
        if (end != std::string::npos && need == std::string::npos) {
          std::string lower = data.substr(0, end);
          for (char& c : lower) c = static_cast<char>(std::tolower(c));
          const std::size_t at = lower.find("content-length:");
          need = end + 4 + (at == std::string::npos ? 0 : std::stoul(lower.substr(at + 15)));
        }
        if (need != std::string::npos && data.size() >= need) break;
      }
      const std::size_t end = data.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::lock_guard lock(mutex_);
        bodies_.push_back(data.substr(end + 4));
      }
      const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!::write(client, reply.data(), reply.size());
      ::close(client);
    }
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> bodies_;
};

}  // namespace perfwarden::testing
