// SPDX-License-Identifier: Apache-2.0
// A small thread-safe Prometheus registry: requests by route and status, a latency histogram by
// route, plain counters, and gauges read from callbacks at scrape time (pool state). Render()
// writes the text exposition format 0.0.4 for GET /metrics.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfwarden::http {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct GaugeSample {
  Labels labels;
  double value = 0;
};

// A monotonically increasing count (e.g. ingested samples); lock-free to bump.
class Counter {
 public:
  void Increment(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Metrics {
 public:
  // Upper bounds of the latency buckets in seconds (+Inf is implicit).
  static const std::vector<double>& LatencyBuckets();

  // perfwarden_http_requests_total{route,status} and
  // perfwarden_http_request_duration_seconds{route}.
  void ObserveRequest(std::string_view route, int status, double seconds);

  // A counter named `name` (it should end in _total); the pointer stays valid for the
  // registry's life. Registering a name twice returns the same counter.
  Counter* AddCounter(std::string name, std::string help);

  // A gauge family read at each Render(); the callback must be thread-safe and must not call
  // back into this registry.
  void AddGauge(std::string name, std::string help, std::function<std::vector<GaugeSample>()> read);
  void AddGauge(std::string name, std::string help, std::function<double()> read);

  std::string Render() const;

 private:
  struct Histogram {
    std::vector<std::uint64_t> buckets;  // cumulative counts are computed at render time
    std::uint64_t count = 0;
    double sum = 0;
  };
  struct NamedCounter {
    std::string name;
    std::string help;
    Counter counter;
  };
  struct Gauge {
    std::string name;
    std::string help;
    std::function<std::vector<GaugeSample>()> read;
  };

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::list<NamedCounter> counters_;  // a list: Counter* handed out must not move
  std::vector<Gauge> gauges_;
};

}  // namespace perfwarden::http
