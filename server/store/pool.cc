// SPDX-License-Identifier: Apache-2.0
#include "server/store/pool.h"

#include <poll.h>

#include <algorithm>

namespace perfwarden::store {
namespace {

// An idle connection has nothing to read; if its socket is readable, the server has closed it
// (EOF) or sent its "terminating connection" notice on shutdown. Checking costs no round trip
// and keeps a request from running into a connection that died while idle.
bool LooksAlive(pqxx::connection& conn) {
  if (!conn.is_open()) return false;
  pollfd pfd{conn.sock(), POLLIN, 0};
  if (pfd.fd < 0) return false;
  return poll(&pfd, 1, 0) == 0;
}

}  // namespace

std::string WithConnectTimeout(const std::string& dsn, int seconds) {
  if (seconds <= 0 || dsn.find("connect_timeout") != std::string::npos) return dsn;
  const std::string setting = "connect_timeout=" + std::to_string(seconds);
  const bool uri = dsn.rfind("postgresql://", 0) == 0 || dsn.rfind("postgres://", 0) == 0;
  if (!uri) return dsn.empty() ? setting : dsn + " " + setting;
  return dsn + (dsn.find('?') == std::string::npos ? "?" : "&") + setting;
}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = std::exchange(other.pool_, nullptr);
    conn_ = std::move(other.conn_);
    reused_ = other.reused_;
    broken_ = other.broken_;
  }
  return *this;
}

void Lease::Release() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_), broken_);
  pool_ = nullptr;
  conn_.reset();
}

ConnectionPool::ConnectionPool(PoolOptions options)
    : options_(std::move(options)),
      dsn_(WithConnectTimeout(options_.dsn, options_.connect_timeout_s)) {}

ConnectionPool::~ConnectionPool() { Close(); }

Result<Lease> ConnectionPool::Acquire() {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + options_.acquire_timeout;
  for (;;) {
    if (closed_) return MakeError(ErrorCode::kUnavailable, "the database pool is closed");
    while (!idle_.empty()) {
      std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
      idle_.pop_back();
      if (LooksAlive(*conn)) {
        ++in_use_;
        return Lease(this, std::move(conn), /*reused=*/true);
      }
      --size_;
      ++discarded_;
      lock.unlock();
      conn.reset();  // closing touches the socket: not under the lock
      lock.lock();
      if (closed_) return MakeError(ErrorCode::kUnavailable, "the database pool is closed");
    }
    if (size_ < std::max(1, options_.max_size)) break;
    if (returned_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        size_ >= std::max(1, options_.max_size)) {
      ++acquire_timeouts_;
      return MakeError(ErrorCode::kUnavailable,
                       "all " + std::to_string(options_.max_size) +
                           " database connections stayed busy; try again later");
    }
  }
  // Reserve the slot, then connect without holding the lock (a connect may take seconds).
  ++size_;
  ++in_use_;
  lock.unlock();
  std::unique_ptr<pqxx::connection> conn;
  std::string failure;
  try {
    conn = std::make_unique<pqxx::connection>(dsn_);
    if (options_.statement_timeout_ms > 0) {
      const std::string ms = std::to_string(options_.statement_timeout_ms);
      pqxx::nontransaction(*conn).exec("SET statement_timeout = " + ms +
                                       "; SET idle_in_transaction_session_timeout = " + ms);
    }
  } catch (const std::exception& e) {
    failure = MapPgException(e).error.message;
  }
  lock.lock();
  if (conn == nullptr) {
    --size_;
    --in_use_;
    ++connect_failures_;
    returned_.notify_one();  // the freed slot lets a waiter try
    // The generic message: the address and libpq's reason are in the log (MapPgException).
    return MakeError(ErrorCode::kUnavailable, failure);
  }
  ++connects_;
  return Lease(this, std::move(conn), /*reused=*/false);
}

void ConnectionPool::Return(std::unique_ptr<pqxx::connection> conn, bool broken) {
  std::vector<std::unique_ptr<pqxx::connection>> to_close;
  {
    std::lock_guard lock(mu_);
    --in_use_;
    if (broken || closed_ || !conn->is_open()) {
      --size_;
      if (broken) ++discarded_;
      to_close.push_back(std::move(conn));
      if (broken) {
        // One broken connection usually means PostgreSQL restarted: the idle ones are dead
        // too, and finding that out one request at a time would fail one request each.
        size_ -= static_cast<int>(idle_.size());
        discarded_ += idle_.size();
        for (auto& c : idle_) to_close.push_back(std::move(c));
        idle_.clear();
      }
    } else {
      idle_.push_back(std::move(conn));
    }
  }
  returned_.notify_all();
  // Closing may touch the network; do it outside the lock. A broken connection's destructor
  // does not throw (libpqxx closes the socket).
  to_close.clear();
}

void ConnectionPool::Close() {
  std::vector<std::unique_ptr<pqxx::connection>> to_close;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    size_ -= static_cast<int>(idle_.size());
    to_close.swap(idle_);
  }
  returned_.notify_all();
}

Error ConnectionPool::Explain(Error error) const {
  if (error.code != ErrorCode::kUnavailable || !options_.outage_reason) return error;
  const std::string reason = options_.outage_reason();
  if (!reason.empty() && error.message.find(reason) == std::string::npos) {
    error.message += ": " + reason;
  }
  return error;
}

PoolStats ConnectionPool::Stats() const {
  std::lock_guard lock(mu_);
  PoolStats stats;
  stats.max_size = options_.max_size;
  stats.size = size_;
  stats.in_use = in_use_;
  stats.connects = connects_;
  stats.connect_failures = connect_failures_;
  stats.discarded = discarded_;
  stats.acquire_timeouts = acquire_timeouts_;
  return stats;
}

Result<bool> ConnectionPool::Ping() {
  return WithTransaction<bool>([](pqxx::work& work) -> Result<bool> {
    work.exec("SELECT 1");
    return true;
  });
}

}  // namespace perfwarden::store
