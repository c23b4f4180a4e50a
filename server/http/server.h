// SPDX-License-Identifier: Apache-2.0
// perfwarden's HTTP/1.1 server: Beast/Asio async I/O on a fixed thread pool, keep-alive, limits
// on connections, header and body size, header, read and idle timeouts (a client that trickles
// bytes holds a timer, never a thread), per-route metrics, and a graceful Stop(). Beast stays
// inside server.cc: this header is cheap to include. Behaviour is documented in docs/api.md, "HTTP
// conventions".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/http/metrics.h"
#include "server/http/router.h"

namespace perfwarden::http {

struct ServerOptions {
  std::string host = "127.0.0.1";  // an address or a resolvable name
  std::uint16_t port = 8080;       // 0: an ephemeral port, see Server::port()
  int threads = 4;                 // <= 0: one per hardware thread
  // Threads for heavy handlers (Router::Cost::kHeavy); <= 0: threads + 1, since a heavy handler
  // also waits on PostgreSQL for part of its time (bench/verdict_bench.cc).
  int compute_threads = 0;
  // Heavy requests queued or running at most, every caller together (over it: 503), and of one
  // caller, its bearer token or else its address (over it: 429); both with Retry-After, at once.
  std::size_t heavy_requests = 64;
  std::size_t heavy_requests_per_caller = 8;
  // 64 MiB: a large run (thousands of benchmarks x 100 repetitions) is a few MiB of JSON; the
  // limit only stops runaway or hostile uploads. Bodies are held in memory while handled.
  std::size_t body_limit = 64u << 20;
  // Request bodies in memory at once, all connections together (memory_budget.h): a request
  // whose Content-Length does not fit (a chunked one counts as body_limit) is answered 503 with
  // Retry-After before its body is read. At least body_limit.
  std::size_t request_memory_bytes = 256u << 20;
  std::size_t header_limit = 16u << 10;  // request line + all header fields
  // From the first byte of a request to its last; also bounds writing the response.
  std::chrono::milliseconds read_timeout{30'000};
  // From a new connection, or the first byte of a later request on it, to the end of the request
  // header (never past read_timeout): a connection that sends nothing holds its slot this long.
  std::chrono::milliseconds header_timeout{10'000};
  // How long a keep-alive connection may sit between requests.
  std::chrono::milliseconds idle_timeout{60'000};
  // Open connections at most; a connection accepted beyond it is closed at once, before a byte
  // is read. Kept below the process's file descriptor limit, it also keeps accept() from
  // failing with EMFILE (which the server then answers with a short pause, not a busy loop).
  std::size_t max_connections = 512;
  // The drain cap (limits.drain_ms): how long Stop() waits for the requests already received
  // to be answered before it abandons their connections.
  std::chrono::milliseconds shutdown_timeout{10'000};
};

class Server {
 public:
  // `metrics` may be null; when set it must outlive the server.
  Server(ServerOptions options, Router router, Metrics* metrics = nullptr);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the threads; kUnavailable when the address cannot be bound.
  // A Server starts at most once.
  Result<void> Start();

  // The bound port (the ephemeral one when options.port was 0); 0 before Start().
  std::uint16_t port() const;
  // Client connections open now (admitted and not yet closed).
  std::size_t ConnectionCount() const;

  // Stops accepting at once (new connections are refused; those already in the backlog are
  // taken), closes idle connections and ones whose request is half sent (no byte of it waiting
  // unread; a read begun while stopping ends after 1 s), answers every request already received --
  // handled, queued for the heavy pool, or with its bytes waiting unread -- (Connection: close)
  // until options.shutdown_timeout, then drops what is left and joins the threads. A handler still
  // running past the deadline is waited for (it cannot be interrupted). Idempotent; must not be
  // called from a handler.
  void Stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfwarden::http
