// SPDX-License-Identifier: Apache-2.0
// EmbeddedSupervisor: keeps perfwarden-server's own PostgreSQL cluster (EmbeddedPostgres) running.
// A thread checks the postmaster every probe_interval; when it is gone (killed, crashed, stopped
// by a full disk) it starts the cluster again with exponential backoff, logging each failure at
// error with pg_ctl's output and the log tail, and says why the database is down for /readyz and
// 503 bodies. It also reports a data directory whose filesystem is (nearly) full.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "server/store/embedded_pg.h"

namespace perfwarden::store {

struct SupervisorOptions {
  // How often the postmaster is looked for (a pid file and /proc read: no connection).
  std::chrono::milliseconds probe_interval{500};
  // The wait before the second restart attempt of an outage; doubled after each failed attempt
  // up to max_backoff. The first attempt is made at once.
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{30'000};
  // A cluster that stays up this long resets the backoff; one that dies sooner after a restart
  // (a crash loop) is restarted only after the next backoff step.
  std::chrono::milliseconds healthy_reset{10'000};
  // Less free space than this on the data directory's filesystem (one WAL segment) makes the
  // database "not ready": PostgreSQL cannot make a new WAL segment.
  std::uint64_t min_free_bytes = 16ull << 20;
  // Called after each restart attempt (true: the cluster is back); for /metrics. Must be quick.
  std::function<void(bool)> on_restart;
};

struct SupervisorStats {
  bool up = true;              // the postmaster runs (disk space aside)
  bool disk_full = false;      // less than min_free_bytes free
  std::uint64_t restarts = 0;  // successful restarts
  std::uint64_t failed_restarts = 0;
};

class EmbeddedSupervisor {
 public:
  // `cluster` must be started and outlive this object; while the supervisor runs, only it calls
  // the cluster's Restart (Stop the supervisor before stopping the cluster).
  explicit EmbeddedSupervisor(EmbeddedPostgres& cluster, SupervisorOptions options = {});
  ~EmbeddedSupervisor();  // Stop()
  EmbeddedSupervisor(const EmbeddedSupervisor&) = delete;
  EmbeddedSupervisor& operator=(const EmbeddedSupervisor&) = delete;

  void Start();
  // No restart begins after this returns; a restart under way is finished first (bounded by the
  // cluster's start_timeout). Idempotent.
  void Stop();

  // "" while the cluster runs and has disk space; else why not, for clients (no host, port or
  // path), e.g. "embedded PostgreSQL restarting (attempt 4, next in 2 s): no space left on device".
  std::string DownReason() const;
  SupervisorStats Stats() const;

 private:
  void Loop();
  void Recover();  // the outage: restart attempts until up or stopped
  void CheckDisk();
  bool SleepFor(std::chrono::milliseconds wait);  // false: stopped meanwhile
  std::chrono::milliseconds Backoff() const;      // before the next attempt (mu_ held)

  EmbeddedPostgres& cluster_;
  const SupervisorOptions options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::thread thread_;
  bool stopping_ = false;
  // The state DownReason reads.
  bool up_ = true;
  bool disk_full_ = false;
  std::uint64_t free_bytes_ = 0;
  int last_pid_ = 0;  // the postmaster last seen alive (Loop's thread only)
  int attempt_ = 0;   // attempts in this outage (the one under way or the last failed)
  bool attempting_ = false;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::string reason_;     // short, for clients
  int backoff_steps_ = 0;  // restarts since the cluster was last healthy for healthy_reset
  std::chrono::steady_clock::time_point up_since_ = std::chrono::steady_clock::now();
  std::uint64_t restarts_ = 0;
  std::uint64_t failed_restarts_ = 0;
};

// Makes this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER), so a
// postmaster that pg_ctl started becomes its child: once killed, it is reaped at once (and its
// exit status known) rather than left a zombie until init reaps it, which pg_ctl and PostgreSQL
// take for a live postmaster. Call before the cluster's first Start.
void AdoptOrphanedPostmasters();

// What a failed start's output (pg_ctl's and postgres.log's tail) says, in a few words for
// clients: "no space left on device", "the port is taken", ... or `fallback`.
std::string SummarizeStartFailure(const std::string& output, const std::string& fallback);

}  // namespace perfwarden::store
