// SPDX-License-Identifier: Apache-2.0
// ConnectionPool: a fixed-size, thread-safe pool of libpqxx connections that survives a
// PostgreSQL restart. Connections are made lazily; one that breaks is dropped and replaced on
// a later lease, so requests during an outage fail fast with kUnavailable (503), never crash.
// WithTransaction is how repositories talk to PostgreSQL: it maps pqxx exceptions to Error.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "server/store/pg_error.h"

namespace perfwarden::store {

struct PoolOptions {
  std::string dsn;  // libpq key=value string or postgresql:// URI
  int max_size = 8;
  // How long a lease waits for a connection when all max_size are in use.
  std::chrono::milliseconds acquire_timeout{5000};
  // Added to the DSN as connect_timeout unless it names one: bounds a connect to a host that
  // does not answer.
  int connect_timeout_s = 5;
  // Set on every connection: a statement that runs longer is cancelled and its request
  // answered 503, so a runaway query or a lock wait cannot hold a pool slot for ever.
  // Transactions left idle are ended after the same time. 0: no limit.
  int statement_timeout_ms = 30'000;
  // Why the database is down when something knows (the embedded cluster's supervisor), added to
  // the message of every kUnavailable error; "" when it is up. Must be thread-safe and quick.
  std::function<std::string()> outage_reason;
};

// A snapshot for /metrics.
struct PoolStats {
  int max_size = 0;
  int size = 0;    // open connections (idle + in use)
  int in_use = 0;  // leased now
  uint64_t connects = 0;
  uint64_t connect_failures = 0;
  uint64_t discarded = 0;         // connections dropped because they broke
  uint64_t acquire_timeouts = 0;  // leases refused because the pool stayed exhausted
};

class ConnectionPool;

// Exclusive use of one connection; returns it to the pool when destroyed. A lease whose
// connection failed must be marked broken (WithTransaction does it) so the pool drops it.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept { *this = std::move(other); }
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { Release(); }

  pqxx::connection& conn() { return *conn_; }
  void MarkBroken() { broken_ = true; }
  // True when the connection came from the idle list rather than a fresh connect: it may have
  // broken silently while idle (a PostgreSQL restart).
  bool reused() const { return reused_; }

 private:
  friend class ConnectionPool;
  Lease(ConnectionPool* pool, std::unique_ptr<pqxx::connection> conn, bool reused)
      : pool_(pool), conn_(std::move(conn)), reused_(reused) {}
  void Release();

  ConnectionPool* pool_ = nullptr;
  std::unique_ptr<pqxx::connection> conn_;
  bool reused_ = false;
  bool broken_ = false;
};

class ConnectionPool {
 public:
  explicit ConnectionPool(PoolOptions options);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // A connection: an idle one, or a new one while fewer than max_size exist, or the next one
  // returned within acquire_timeout. kUnavailable when PostgreSQL cannot be reached, the pool
  // stays exhausted, or the pool is closed. Every lease must end before the pool is destroyed.
  Result<Lease> Acquire();

  // Runs fn in one transaction (pqxx::work) and commits when fn returns a value; an error
  // from fn or an exception rolls back. pqxx exceptions become Errors (MapPgException). When a
  // connection that sat idle turns out to be broken (PostgreSQL restarted since), fn is run
  // once more on a fresh connection: nothing was committed, so fn must only build its result
  // from the transaction and must not have other side effects that a second call would repeat.
  template <class T>
  Result<T> WithTransaction(const std::function<Result<T>(pqxx::work&)>& fn);

  // The same without BEGIN and COMMIT (pqxx::nontransaction: each statement commits on its
  // own), two round trips fewer, for reads whose statements need not share a snapshot (stored
  // runs never change) and idempotent bookkeeping writes. Same errors and retry.
  template <class T>
  Result<T> WithStatements(const std::function<Result<T>(pqxx::transaction_base&)>& fn);

  // Stops handing out connections and closes the idle ones (graceful shutdown); leased
  // connections close when they come back.
  // Whether PostgreSQL answers a trivial query (for /readyz); kUnavailable when it does not.
  Result<bool> Ping();

  void Close();

  // `error` with ": <outage_reason>" added when it is kUnavailable and a reason is known.
  Error Explain(Error error) const;

  PoolStats Stats() const;
  const std::string& dsn() const { return dsn_; }

 private:
  friend class Lease;
  void Return(std::unique_ptr<pqxx::connection> conn, bool broken);

  const PoolOptions options_;
  const std::string dsn_;  // options_.dsn with connect_timeout
  mutable std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  int size_ = 0;  // open + being opened
  int in_use_ = 0;
  bool closed_ = false;
  uint64_t connects_ = 0;
  uint64_t connect_failures_ = 0;
  uint64_t discarded_ = 0;
  uint64_t acquire_timeouts_ = 0;
};

// The DSN with connect_timeout=<seconds> added unless it sets one (key=value or URI form).
std::string WithConnectTimeout(const std::string& dsn, int seconds);

template <class T>
Result<T> ConnectionPool::WithTransaction(const std::function<Result<T>(pqxx::work&)>& fn) {
  for (int attempt = 0;; ++attempt) {
    Result<Lease> lease = Acquire();
    if (!lease) return tl::unexpected(Explain(lease.error()));
    try {
      pqxx::work tx(lease->conn());
      Result<T> result = fn(tx);
      if (result) tx.commit();
      return result;
    } catch (const std::exception& e) {
      PgFailure failure = MapPgException(e);
      if (failure.connection_lost) lease->MarkBroken();
      const bool retry = failure.connection_lost && lease->reused() && attempt == 0 &&
                         dynamic_cast<const pqxx::in_doubt_error*>(&e) == nullptr;
      if (!retry) return tl::unexpected(Explain(std::move(failure.error)));
    }
  }
}

template <class T>
Result<T> ConnectionPool::WithStatements(
    const std::function<Result<T>(pqxx::transaction_base&)>& fn) {
  for (int attempt = 0;; ++attempt) {
    Result<Lease> lease = Acquire();
    if (!lease) return tl::unexpected(Explain(lease.error()));
    try {
      pqxx::nontransaction statements(lease->conn());
      return fn(statements);
    } catch (const std::exception& e) {
      PgFailure failure = MapPgException(e);
      if (failure.connection_lost) lease->MarkBroken();
      if (!(failure.connection_lost && lease->reused() && attempt == 0)) {
        return tl::unexpected(Explain(std::move(failure.error)));
      }
    }
  }
}

}  // namespace perfwarden::store
