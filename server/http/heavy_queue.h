// SPDX-License-Identifier: Apache-2.0
// Heavy handlers (Router::Cost::kHeavy) off the I/O threads: each request is admitted
// (admission.h: a bound on all callers' heavy requests and one on each caller's) and routed on
// a thread pool of its own, first come first served, its answer compressed there. A request
// over a bound is answered at once, 429 or 503 with Retry-After, never left waiting. /metrics:
// perfwarden_http_heavy_requests{state}, perfwarden_http_heavy_refused_{caller,busy}_total.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "server/http/admission.h"
#include "server/http/metrics.h"
#include "server/http/router.h"

namespace boost::asio {
class thread_pool;
}

namespace perfwarden::http {

class HeavyQueue {
 public:
  // Runs heavy handlers on limits.workers threads. `metrics` may be null; when set it must
  // outlive the queue.
  HeavyQueue(AdmissionLimits limits, Metrics* metrics);
  ~HeavyQueue();  // Join()
  HeavyQueue(const HeavyQueue&) = delete;
  HeavyQueue& operator=(const HeavyQueue&) = delete;

  // Called on a pool thread with the answer.
  using Done = std::function<void(Router::Routed)>;

  // Admits `request` for its caller (CallerKey) and queues it: `router` answers it on the pool
  // and `done` gets the answer, the request's place released as the handler returns (or
  // throws). Or, over a bound, returns the refusal to send now, labelled `route`.
  std::optional<Router::Routed> Submit(const Router& router, std::string_view route,
                                       Request request, Done done);

  // Runs what is queued, waits for it and stops the threads; nothing may be submitted after.
  void Join();

 private:
  std::shared_ptr<Admission> admission_;  // shared with the /metrics gauge
  std::unique_ptr<boost::asio::thread_pool> pool_;
  Counter* refused_caller_ = nullptr;
  Counter* refused_busy_ = nullptr;
};

}  // namespace perfwarden::http
