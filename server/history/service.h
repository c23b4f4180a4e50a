// SPDX-License-Identifier: Apache-2.0
// HistoryService: the background worker that takes every stored run of a tracked branch into
// its series' history: it claims the run (store::HistoryStore::BeginNextRun), runs the detectors
// on the series it touched (analysis.h) with Benjamini-Hochberg q-values across them, closes the
// open alerts whose series came back (went_away.h), applies the results in the run's transaction
// (new alerts join their alert groups there), and announces each new group on the webhook. Runs
// are claimed from the database, so none is lost when the server stops between storing and
// analysing one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "server/history/analysis.h"
#include "server/store/history_store.h"

namespace perfwarden::server::history {

struct HistoryServiceOptions {
  std::vector<std::string> tracked_branches = {"main", "master"};
  HistoryParams params;
  std::string webhook_url;                 // "" for none
  std::string public_url;                  // links in webhook messages
  std::chrono::milliseconds poll{10'000};  // also looks without being notified this often
  // A run whose analysis fails this many times in a row for a reason other than an outage
  // (kUnavailable: the database is down or busy, which is waited out) is set aside
  // (HistoryStore::SkipNextRun) so that the project's history goes on.
  int max_attempts = 5;
  std::chrono::milliseconds first_backoff{500};  // doubled after each failure, up to 30 s
};

// The analysis of one run's series: an update per series (states, steps, new alerts with
// q-values across the run's series and their environment changes from the run's fingerprints,
// refreshed alerts). No I/O but a log line: a series whose stored state cannot be read is
// analysed from scratch.
Result<std::vector<store::HistorySeriesUpdate>> AnalyseRun(const store::HistoryRunWork& work,
                                                           const HistoryParams& params);

// The alert parameters recorded with every alert (for replay): threshold, window, ...
std::string ParametersJson(const HistoryParams& params);

class HistoryService {
 public:
  HistoryService(store::HistoryStore& store, HistoryServiceOptions options);
  ~HistoryService() { Stop(); }
  HistoryService(const HistoryService&) = delete;
  HistoryService& operator=(const HistoryService&) = delete;

  // Starts the worker thread (which first drains what is pending).
  void Start();
  // A run was stored: look now rather than at the next poll.
  void Notify();
  // Finishes the run in progress and stops.
  void Stop();

  // Analyses every pending run on the calling thread; the number analysed.
  Result<int> DrainNow();

  struct Stats {
    int64_t runs = 0;
    int64_t alerts = 0;
    int64_t errors = 0;
    int64_t webhook_failures = 0;
    int64_t skipped = 0;  // runs set aside after max_attempts failed analyses
  };
  Stats stats() const;

 private:
  void Loop();
  // One pending run; false when there was none.
  Result<bool> Step();
  // The webhook: one message per alert group the run created.
  void Announce(const store::HistoryRunResult& result);
  void Post(const std::string& body);  // three attempts, then counted as a failure

  store::HistoryStore& store_;
  HistoryServiceOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stopped_ = false;
  bool notified_ = false;
  std::thread thread_;
  std::mutex step_mutex_;  // one analysis at a time within this process
  Stats stats_;
};

}  // namespace perfwarden::server::history
