// SPDX-License-Identifier: Apache-2.0
// The HTTP server's accept loop: accepts on the listening socket; at max_connections, or when
// accept() runs out of file descriptors, it has the connection that has waited longest for a
// request closed to make room (idle keep-alive connections and ones that never sent a byte go
// first, so a new request is served at once); with none waiting it closes a connection beyond
// max_connections as soon as it is accepted, and pauses accepting when out of descriptors or
// memory rather than retrying in a busy loop. Each burst of refusals, evictions or failures is
// logged when it starts and when it ends (eviction and failure bursts at most once a minute, the
// others summed into the next). Asio only; used by server.cc alone.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

namespace perfwarden::http {

class Listener {
 public:
  // How long accepting pauses after accept() ran out of file descriptors or memory: the failure
  // repeats at once otherwise, a busy loop that starves the connections being served.
  static constexpr std::chrono::milliseconds kBackoff{100};
  // How long accepting pauses at most after an idle connection was asked to close for a
  // descriptor; its closing calls Resume(), which ends the pause at once.
  static constexpr std::chrono::milliseconds kEvictionPause{50};  // unless Resume() comes first
  // A burst of evictions at the cap, or of accept() failures, is logged when it starts and ends,
  // at most once per this interval: under steady churn (clients reconnecting as fast as they are
  // closed) bursts start and end many times a second. The quiet ones are counted into the next
  // line logged.
  static constexpr std::chrono::seconds kBurstLogInterval{60};

  struct Callbacks {
    // The connections open now, compared with max_connections before a new one is admitted.
    std::function<std::size_t()> open_connections;
    // Takes a connection admitted under the cap (its socket on a strand of its own); called on
    // an I/O thread, one at a time.
    std::function<void(boost::asio::ip::tcp::socket)> admit;
    // Asks the connection that has waited longest for a request to close (asynchronously);
    // false when none is waiting. With true, asks none while one asked before is still closing
    // (and answers true).
    std::function<bool(bool unless_closing)> evict_idle;
  };

  // Opens, binds and listens on `endpoint`; throws boost::system::system_error when it cannot.
  Listener(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& endpoint,
           std::size_t max_connections, Callbacks callbacks);
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  std::uint16_t port() const { return port_; }

  // Starts accepting (on the context's threads) until Close().
  void Start();

  // Stops accepting at once, from any thread, even while every I/O thread is busy: the socket
  // is closed (new connections are refused) and a pause cancelled. With `admit_backlog`, the
  // connections already waiting in the backlog are first accepted and admitted (their clients
  // may have sent a whole request), and so is one whose accept completes meanwhile; without,
  // they are closed. Idempotent. The context's threads must be stopped before the Listener is
  // destroyed.
  void Close(bool admit_backlog = false);

  // A connection asked to close for room has closed: accepting goes on at once (posted to the
  // context). Any thread, under any lock.
  void Resume();

 private:
  // Which bursts of one kind are logged: the first, then one per kBurstLogInterval.
  class BurstLog {
   public:
    // A burst starts: whether to log it; `quiet` is then "" or the count of the bursts (and of
    // their `what`) not logged since the last one, as " (since the last such line: ...)".
    bool Start(std::string& quiet, const char* what);
    // It ends after `count` events: whether to log the end (its start was).
    bool End(std::size_t count);

   private:
    bool logged_ = false;
    std::chrono::steady_clock::time_point last_{};
    std::size_t quiet_bursts_ = 0, quiet_count_ = 0;
  };

  void DoAccept();  // with mutex_ held
  void OnAccept(const boost::system::error_code& ec, boost::asio::ip::tcp::socket socket);
  void Admit(boost::asio::ip::tcp::socket socket, bool after_failure);
  bool ConnectionPending();  // a connection waits in the backlog (with mutex_ held)

  boost::asio::io_context& ioc_;
  const std::size_t max_connections_;
  const Callbacks callbacks_;
  std::mutex mutex_;                         // Close() runs on a thread outside the context
  boost::asio::ip::tcp::acceptor acceptor_;  // under mutex_
  boost::asio::steady_timer backoff_;        // under mutex_
  std::uint16_t port_ = 0;
  std::atomic<bool> closed_{false};
  std::atomic<bool> admit_after_close_{false};  // Close(true): late accepts are admitted
  // Connections closed at once (over max_connections) or accept() failures since the last
  // connection admitted. Touched only by the accept chain, which has one step in flight at a time.
  std::size_t refused_in_burst_ = 0;
  std::size_t failures_in_burst_ = 0;
  std::size_t evicted_in_burst_ = 0;  // idle connections closed to make room
  BurstLog eviction_log_, failure_log_;
  bool last_accept_failed_ = false;  // out of descriptors or memory
  bool waiting_for_room_ = false;    // under mutex_: the pause Resume() ends
  bool resume_ = false;              // under mutex_: Resume() came
};

}  // namespace perfwarden::http
