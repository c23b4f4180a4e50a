// SPDX-License-Identifier: Apache-2.0
// The server's open connections (server.cc's sessions): added when accepted, removed by their
// destructor; counted against the connection cap, searched for the one that has waited longest
// for a request (to close it for a new one), and handed to Stop(). A template over the session
// type so that Beast stays in server.cc: S has `int64_t idle_since() const` (steady clock, ns)
// and `S::kNotIdle` for a session that is not waiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace perfwarden::http {

template <class S>
class SessionRegistry {
 public:
  void Add(const std::shared_ptr<S>& session) {
    std::lock_guard lock(mutex_);
    sessions_.emplace(session.get(), session);
  }
  // From the session's destructor.
  void Remove(const S* session) {
    std::lock_guard lock(mutex_);
    sessions_.erase(session);
    changed_.notify_all();
  }
  std::size_t Count() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
  }

  // The session that has waited longest for a request; null when none waits. The caller
  // releases it outside the lock (a session released last unregisters itself).
  std::shared_ptr<S> LongestIdle() const {
    std::lock_guard lock(mutex_);
    // The keys stay valid under the lock (a session unregisters in its destructor, before its
    // members go); only the one chosen is locked, so no session is released under the lock.
    const S* chosen = nullptr;
    std::int64_t since = S::kNotIdle;
    for (const auto& [session, weak] : sessions_) {
      if (const std::int64_t s = session->idle_since(); s < since) {
        since = s;
        chosen = session;
      }
    }
    return chosen != nullptr ? sessions_.at(chosen).lock() : nullptr;
  }

  // Every session still alive, to be released outside the lock as above.
  std::vector<std::shared_ptr<S>> Live() const {
    std::vector<std::shared_ptr<S>> live;
    std::lock_guard lock(mutex_);
    for (const auto& [key, weak] : sessions_) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
    return live;
  }

  // Until every session is gone or `timeout` has passed.
  void WaitUntilEmpty(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [this] { return sessions_.empty(); });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<const S*, std::weak_ptr<S>> sessions_;
};

}  // namespace perfwarden::http
