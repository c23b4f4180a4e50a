// SPDX-License-Identifier: Apache-2.0
#include "server/http/heavy_queue.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <string>
#include <utility>
#include <variant>

#include "server/http/compression.h"
#include "server/http/errors.h"

namespace perfwarden::http {

HeavyQueue::HeavyQueue(AdmissionLimits limits, Metrics* metrics)
    : admission_(std::make_shared<Admission>(limits)),
      pool_(std::make_unique<boost::asio::thread_pool>(admission_->limits().workers)) {
  if (metrics == nullptr) return;
  refused_caller_ = metrics->AddCounter(
      "perfwarden_http_heavy_refused_caller_total",
      "Heavy requests answered 429: their caller had limits.heavy_requests_per_caller in flight.");
  refused_busy_ = metrics->AddCounter(
      "perfwarden_http_heavy_refused_busy_total",
      "Heavy requests answered 503: limits.heavy_requests were queued or running.");
  metrics->AddGauge("perfwarden_http_heavy_requests",
                    "Heavy requests queued or running, and the bound", [admission = admission_]() {
                      return std::vector<GaugeSample>{
                          {{{"state", "in_flight"}}, static_cast<double>(admission->InFlight())},
                          {{{"state", "limit"}}, static_cast<double>(admission->limits().total)}};
                    });
}

HeavyQueue::~HeavyQueue() { Join(); }

std::optional<Router::Routed> HeavyQueue::Submit(const Router& router, std::string_view route,
                                                 Request request, Done done) {
  auto admitted = admission_->TryAdmit(CallerKey(request));
  if (auto* refused = std::get_if<Admission::Refused>(&admitted)) {
    const AdmissionLimits& limits = admission_->limits();
    const std::string retry =
        "; retry after " + std::to_string(refused->retry_after_seconds) + " s";
    if (refused->reason == Admission::Refusal::kCaller) {
      if (refused_caller_ != nullptr) refused_caller_->Increment();
      return Router::Routed{
          TooManyRequests("this caller has " + std::to_string(limits.per_caller) +
                              " heavy requests in flight, its limit (heavy_requests_per_caller)" +
                              retry,
                          refused->retry_after_seconds),
          std::string(route)};
    }
    if (refused_busy_ != nullptr) refused_busy_->Increment();
    return Router::Routed{ServerBusy("the server has " + std::to_string(limits.total) +
                                         " heavy requests queued or running, its limit "
                                         "(heavy_requests)" +
                                         retry,
                                     refused->retry_after_seconds),
                          std::string(route)};
  }
  boost::asio::post(*pool_, [&router, admission = admission_.get(), request = std::move(request),
                             ticket = std::get<Admission::Ticket>(std::move(admitted)),
                             done = std::move(done)]() mutable {
    const auto began = std::chrono::steady_clock::now();
    Router::Routed routed = router.Route(request);
    CompressIfAccepted(request, routed.response);
    admission->ObserveRun(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    ticket.Release();  // before the answer is written: the slot is the pool's, not the socket's
    done(std::move(routed));
  });
  return std::nullopt;
}

void HeavyQueue::Join() {
  if (pool_) pool_->join();
}

}  // namespace perfwarden::http
