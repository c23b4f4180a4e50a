// SPDX-License-Identifier: Apache-2.0
#include "server/http/memory_budget.h"

#include <string>
#include <utility>
#include <vector>

#include "server/http/errors.h"

namespace perfwarden::http {

MemoryBudget::Reservation::Reservation(Reservation&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryBudget::Reservation::Release() {
  MemoryBudget* owner = std::exchange(owner_, nullptr);
  const std::size_t bytes = std::exchange(bytes_, 0);
  if (owner != nullptr) owner->Release(bytes);
}

MemoryBudget::MemoryBudget(std::size_t limit, Metrics* metrics) : limit_(limit) {
  if (metrics == nullptr) return;
  refused_ = metrics->AddCounter(
      "perfwarden_http_memory_refused_total",
      "Requests answered 503: their body did not fit in limits.request_memory_bytes.");
  metrics->AddGauge("perfwarden_http_request_memory_bytes",
                    "Bytes of request bodies in flight, and the bound",
                    [in_use = in_use_, limit]() {
                      return std::vector<GaugeSample>{
                          {{{"state", "in_use"}}, static_cast<double>(in_use->load())},
                          {{{"state", "limit"}}, static_cast<double>(limit)}};
                    });
}

std::optional<Response> MemoryBudget::Admit(std::size_t bytes, Reservation* reservation) {
  if (std::optional<Reservation> reserved = TryReserve(bytes)) {
    *reservation = std::move(*reserved);
    return std::nullopt;
  }
  if (refused_ != nullptr) refused_->Increment();
  return ServerBusy("the request bodies in flight and this one's " + std::to_string(bytes) +
                        " bytes would pass the server's memory budget of " +
                        std::to_string(limit_) + " bytes (request_memory_bytes); retry after 1 s",
                    1);
}

std::optional<MemoryBudget::Reservation> MemoryBudget::TryReserve(std::size_t bytes) {
  if (bytes == 0) return Reservation();
  std::size_t current = in_use_->load();
  do {
    if (bytes > limit_ || current > limit_ - bytes) return std::nullopt;
  } while (!in_use_->compare_exchange_weak(current, current + bytes));
  return Reservation(this, bytes);
}

std::size_t MemoryBudget::InUse() const { return in_use_->load(); }

void MemoryBudget::Release(std::size_t bytes) { *in_use_ -= bytes; }

}  // namespace perfwarden::http
