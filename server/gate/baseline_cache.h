// SPDX-License-Identifier: Apache-2.0
// Baselines prepared once for the stats engine and shared: a baseline's sample sets, each with
// its sorted values and bootstrap table (stats::PreparedSample), reused by every verdict judged
// against the same baseline runs (pull requests branched from one main commit, a gate's
// reruns). Stored runs never change (uploads are idempotent by id; no API deletes a run), so an
// entry never goes stale; entries leave least recently used first beyond a byte budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "judge/judge.h"
#include "server/store/store.h"
#include "stats/prepared_sample.h"

namespace perfwarden::server::gate {

// A baseline's pooled sample sets, prepared when they fit the budget.
struct PreparedBaseline {
  std::vector<store::SampleSet> sets;
  // One per set; all null when preparing them would pass the budget (the judge then computes
  // each comparison's bootstrap on its own, with the same result).
  std::vector<std::shared_ptr<const stats::PreparedSample>> prepared;
  // One per set, as the judge pairs them: viewing the set's values, with its prepared sample.
  std::vector<judge::Series> series;
  size_t bytes = 0;  // memory held, approximately
};

// A sample set as the judge reads it (viewing its values; the set must outlive the series).
judge::Series AsSeries(const store::SampleSet& set);

// Prepares sample sets (what a cache miss does), with the bootstrap of the default verdict
// policy's seed and resamples, unless their preparations would hold more than `budget` bytes:
// then none is kept (preparing stops as the running total passes the budget), so a baseline of
// 100,000 series (about 4 GB of bootstrap tables at the default 2,000 resamples) costs its sets'
// memory, not the tables'.
std::shared_ptr<const PreparedBaseline> PrepareBaseline(std::vector<store::SampleSet> sets,
                                                        size_t budget);

class BaselineCache {
 public:
  using Loader = std::function<Result<std::vector<store::SampleSet>>()>;

  // max_bytes 0: nothing is kept, every Get loads (and prepares nothing: a table used once
  // costs what it saves). A baseline whose preparations would pass max_bytes is not prepared.
  explicit BaselineCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The prepared baseline of these runs of a project. On a miss `load` reads the sample sets;
  // requests for the same runs that arrive meanwhile wait for that one load instead of doing
  // their own. A failed load is not kept.
  Result<std::shared_ptr<const PreparedBaseline>> Get(int64_t project_id,
                                                      const std::vector<std::string>& run_ids,
                                                      const Loader& load);

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    size_t entries = 0;
    size_t bytes = 0;
  };
  Stats GetStats() const;

 private:
  using Value = Result<std::shared_ptr<const PreparedBaseline>>;
  struct Entry {
    std::shared_future<Value> value;
    size_t bytes = 0;  // 0 while loading
    std::list<std::string>::iterator lru;
  };
  void EvictLocked();

  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // most recently used first
  size_t bytes_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace perfwarden::server::gate
