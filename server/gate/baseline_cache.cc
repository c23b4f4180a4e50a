// SPDX-License-Identifier: Apache-2.0
#include "server/gate/baseline_cache.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <utility>

#include "stats/bootstrap.h"
#include "stats/verdict.h"

namespace perfwarden::server::gate {

judge::Series AsSeries(const store::SampleSet& set) {
  return {.key = set.key, .unit = set.unit, .direction = set.direction, .values = set.values};
}

std::shared_ptr<const PreparedBaseline> PrepareBaseline(std::vector<store::SampleSet> sets,
                                                        size_t budget) {
  auto out = std::make_shared<PreparedBaseline>();
  out->sets = std::move(sets);
  const size_t count = out->sets.size();
  out->prepared.resize(count);
  out->series.reserve(count);
  for (const store::SampleSet& set : out->sets) out->series.push_back(AsSeries(set));
  // The series are independent and the requests waiting for this baseline are blocked on it:
  // every hardware thread takes a share (500 series of 100 repetitions: ~30 ms on one core).
  const stats::VerdictPolicy policy;
  std::atomic<size_t> held{0};
  std::atomic<bool> over_budget{budget == 0};
  auto prepare = [&](size_t first, size_t last) {
    for (size_t i = first; i < last && !over_budget.load(std::memory_order_relaxed); ++i) {
      const judge::Series& series = out->series[i];
      auto prepared = std::make_shared<const stats::PreparedSample>(
          series.values, policy.bootstrap_resamples,
          stats::DeriveSeed(policy.seed, judge::SeriesName(series.key)));
      const size_t bytes = prepared->MemoryBytes();
      if (held.fetch_add(bytes, std::memory_order_relaxed) + bytes > budget) {
        over_budget.store(true, std::memory_order_relaxed);
        return;
      }
      out->prepared[i] = std::move(prepared);
    }
  };
  constexpr size_t kSeriesPerThread = 64;  // below this, a thread costs more than it saves
  const size_t threads = std::clamp<size_t>(count / kSeriesPerThread, 1,
                                            std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::future<void>> helpers;
  for (size_t t = 1; t < threads; ++t) {
    helpers.push_back(
        std::async(std::launch::async, prepare, count * t / threads, count * (t + 1) / threads));
  }
  prepare(0, count / threads);
  for (auto& helper : helpers) helper.get();  // rethrows a helper's exception (bad_alloc)
  if (over_budget) {
    for (auto& prepared : out->prepared) prepared.reset();
  }

  out->bytes = sizeof(PreparedBaseline);
  for (size_t i = 0; i < count; ++i) {
    const store::SampleSet& set = out->sets[i];
    out->bytes += (out->prepared[i] ? out->prepared[i]->MemoryBytes() : 0) +
                  set.values.capacity() * sizeof(double) + set.key.suite.size() +
                  set.key.benchmark.size() + set.key.metric.size() + set.unit.size() +
                  2 * sizeof(store::SampleSet);
    out->series[i].prepared = out->prepared[i];
  }
  return out;
}

Result<std::shared_ptr<const PreparedBaseline>> BaselineCache::Get(
    int64_t project_id, const std::vector<std::string>& run_ids, const Loader& load) {
  auto load_and_prepare = [this, &load]() -> Value {
    try {
      auto sets = load();
      if (!sets) return tl::unexpected(sets.error());
      return PrepareBaseline(std::move(*sets), max_bytes_);
    } catch (const std::exception& e) {  // bad_alloc: waiters must not wait forever
      return MakeError(ErrorCode::kInternal, std::string("preparing a baseline: ") + e.what());
    }
  };
  if (max_bytes_ == 0) return load_and_prepare();

  std::string key = std::to_string(project_id);
  for (const std::string& id : run_ids) key += "," + id;
  std::shared_future<Value> pending;
  std::promise<Value> promise;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      ++hits_;
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      pending = it->second.value;
    } else {
      ++misses_;
      lru_.push_front(key);
      entries_.emplace(key, Entry{promise.get_future().share(), 0, lru_.begin()});
    }
  }
  if (pending.valid()) return pending.get();  // loaded, or being loaded by another request

  Value value = load_and_prepare();
  promise.set_value(value);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    if (!value) {
      lru_.erase(it->second.lru);
      entries_.erase(it);
    } else {
      it->second.bytes = (*value)->bytes;
      bytes_ += it->second.bytes;
      EvictLocked();
    }
  }
  return value;
}

void BaselineCache::EvictLocked() {
  // Least recently used first; entries still loading (bytes 0) stay.
  auto it = lru_.end();
  while (bytes_ > max_bytes_ && it != lru_.begin()) {
    --it;
    auto entry = entries_.find(*it);
    if (entry->second.bytes == 0) continue;
    bytes_ -= entry->second.bytes;
    entries_.erase(entry);
    it = lru_.erase(it);
  }
}

BaselineCache::Stats BaselineCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {hits_, misses_, entries_.size(), bytes_};
}

}  // namespace perfwarden::server::gate
