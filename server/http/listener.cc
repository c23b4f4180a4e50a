// SPDX-License-Identifier: Apache-2.0
#include "server/http/listener.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <boost/asio/strand.hpp>
#include <string>
#include <utility>

namespace perfwarden::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// accept() failures that concern the server's resources, not the one connection.
bool IsResourceExhaustion(const boost::system::error_code& ec) {
  return ec == net::error::no_descriptors ||
         ec == boost::system::errc::too_many_files_open_in_system ||
         ec == net::error::no_buffer_space || ec == net::error::no_memory;
}

}  // namespace

Listener::Listener(net::io_context& ioc, const tcp::endpoint& endpoint, std::size_t max_connections,
                   Callbacks callbacks)
    : ioc_(ioc),
      max_connections_(max_connections),
      callbacks_(std::move(callbacks)),
      acceptor_(ioc),
      backoff_(ioc) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
}

void Listener::Start() {
  std::lock_guard lock(mutex_);
  DoAccept();
}

bool Listener::BurstLog::Start(std::string& quiet, const char* what) {
  const auto now = std::chrono::steady_clock::now();
  logged_ = last_ == std::chrono::steady_clock::time_point{} || now - last_ >= kBurstLogInterval;
  quiet.clear();
  if (!logged_) return false;
  last_ = now;
  if (quiet_bursts_ > 0) {
    quiet = " (since the last such line: " + std::to_string(quiet_bursts_) + " more burst(s), " +
            std::to_string(quiet_count_) + " " + what + ")";
    quiet_bursts_ = 0;
    quiet_count_ = 0;
  }
  return true;
}

bool Listener::BurstLog::End(std::size_t count) {
  if (logged_) return true;
  ++quiet_bursts_;
  quiet_count_ += count;
  return false;
}

void Listener::Close(bool admit_backlog) {
  admit_after_close_ = admit_backlog;
  closed_ = true;
  std::lock_guard lock(mutex_);
  boost::system::error_code ignored;
  if (admit_backlog && acceptor_.is_open()) {
    acceptor_.non_blocking(true, ignored);
    while (ConnectionPending()) {
      tcp::socket socket(net::make_strand(ioc_));
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec) break;  // taken by the accept in flight, or out of descriptors
      callbacks_.admit(std::move(socket));
    }
  }
  acceptor_.close(ignored);
  backoff_.cancel();
}

void Listener::DoAccept() {
  // Each connection on a strand of its own: its session's handlers never run concurrently.
  acceptor_.async_accept(net::make_strand(ioc_),
                         [this](const boost::system::error_code& ec, tcp::socket socket) {
                           OnAccept(ec, std::move(socket));
                         });
}

void Listener::Resume() {
  // Posted, never done in place: the closing session's last reference may be dropped by the
  // accept chain itself, which holds mutex_ (EvictLongestIdle under OnAccept).
  net::post(ioc_, [this] {
    std::lock_guard lock(mutex_);
    resume_ = true;
    if (waiting_for_room_) backoff_.cancel();
  });
}

void Listener::OnAccept(const boost::system::error_code& ec, tcp::socket socket) {
  if (!ec && (!closed_ || admit_after_close_)) Admit(std::move(socket), last_accept_failed_);
  last_accept_failed_ = ec && IsResourceExhaustion(ec);
  std::lock_guard lock(mutex_);
  if (!acceptor_.is_open()) return;  // closed by Close()
  if (ec && IsResourceExhaustion(ec) && !ConnectionPending()) {
    // Linux takes the new descriptor before it looks for a connection: out of descriptors,
    // accept() fails even with none waiting. Wait for one (no failure, no eviction yet).
    acceptor_.async_wait(tcp::acceptor::wait_read, [this](const boost::system::error_code&) {
      std::lock_guard relock(mutex_);
      if (acceptor_.is_open()) DoAccept();
    });
    return;
  }
  if (ec && IsResourceExhaustion(ec)) {
    std::string quiet;
    if (failures_in_burst_++ == 0 && failure_log_.Start(quiet, "failed accepts")) {
      spdlog::error(
          "cannot accept connections: {}; closing the connections that wait longest for a "
          "request to make room, else pausing accept for {} ms at a time{}",
          ec.message(), kBackoff.count(), quiet);
    }
    // A descriptor comes back as soon as an idle connection closes; with none idle, only a
    // pause avoids a busy loop.
    const bool evicted = callbacks_.evict_idle && callbacks_.evict_idle(/*unless_closing=*/true);
    if (evicted) {
      ++evicted_in_burst_;
      if (resume_) {  // the room is made already
        resume_ = false;
        DoAccept();
        return;
      }
    }
    // Resume() (a connection closed for room) ends the wait early.
    waiting_for_room_ = evicted;
    backoff_.expires_after(evicted ? kEvictionPause : kBackoff);
    backoff_.async_wait([this](const boost::system::error_code& wait_ec) {
      std::lock_guard relock(mutex_);
      const bool resumed = waiting_for_room_ && resume_;
      waiting_for_room_ = false;
      if (!acceptor_.is_open() || (wait_ec && !resumed)) return;
      resume_ = false;
      DoAccept();
    });
    return;
  }
  // Other errors (a connection reset before it was accepted) concern that connection only.
  DoAccept();
}

bool Listener::ConnectionPending() {
  pollfd listening{acceptor_.native_handle(), POLLIN, 0};
  return ::poll(&listening, 1, 0) > 0 && (listening.revents & POLLIN) != 0;
}

void Listener::Admit(tcp::socket socket, bool after_failure) {
  if (callbacks_.open_connections() >= max_connections_ && callbacks_.evict_idle &&
      callbacks_.evict_idle(/*unless_closing=*/false)) {
    // The longest idle connection gives its slot to this one (the count passes the cap by the
    // evictions still closing).
    std::string quiet;
    if (evicted_in_burst_++ == 0 && eviction_log_.Start(quiet, "connections closed")) {
      spdlog::warn(
          "{} connections open (max_connections): closing the ones that wait longest "
          "for a request to admit new ones{}",
          max_connections_, quiet);
    }
  } else if (callbacks_.open_connections() >= max_connections_) {
    if (refused_in_burst_++ == 0) {
      spdlog::warn("{} connections open (max_connections): closing new connections at once",
                   max_connections_);
    }
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  // A burst of failures ends with an accept that needed no room made (one that followed a
  // failure got the descriptor an idle connection gave up).
  if (failures_in_burst_ > 0 && !after_failure) {
    if (failure_log_.End(failures_in_burst_)) {
      spdlog::info(
          "accepting connections again after {} failed accepts ({} idle connection(s) "
          "closed to make room)",
          failures_in_burst_, evicted_in_burst_);
    }
    failures_in_burst_ = 0;
    evicted_in_burst_ = 0;
  }
  if (refused_in_burst_ > 0) {
    spdlog::info("accepting connections again after closing {} over max_connections",
                 refused_in_burst_);
    refused_in_burst_ = 0;
  }
  if (evicted_in_burst_ > 0 && failures_in_burst_ == 0 &&
      callbacks_.open_connections() < max_connections_) {
    if (eviction_log_.End(evicted_in_burst_)) {
      spdlog::info("under max_connections again after closing {} idle connection(s) for new ones",
                   evicted_in_burst_);
    }
    evicted_in_burst_ = 0;
  }
  callbacks_.admit(std::move(socket));
}

}  // namespace perfwarden::http
