// SPDX-License-Identifier: Apache-2.0
#include "server/http/admission.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "server/auth/tokens.h"

namespace perfwarden::http {
namespace {

// Weight of the newest run in the mean: about the last ten runs count.
constexpr double kRunWeight = 0.2;

}  // namespace

std::string CallerKey(const Request& request) {
  if (auto authorization = request.headers.Get("Authorization")) {
    // (A hash that failed leaves every such caller in one bucket: never an unbounded one.)
    return "bearer:" + auth::HashToken(*authorization).value_or("");
  }
  // "127.0.0.1:54321", "::1:54321": the address is all before the last colon.
  const std::string& remote = request.remote_address;
  return "address:" + remote.substr(0, std::min(remote.rfind(':'), remote.size()));
}

Admission::Ticket::Ticket(Ticket&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), caller_(std::move(other.caller_)) {}

Admission::Ticket& Admission::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    caller_ = std::move(other.caller_);
  }
  return *this;
}

void Admission::Ticket::Release() {
  if (Admission* owner = std::exchange(owner_, nullptr)) owner->Release(caller_);
}

Admission::Admission(AdmissionLimits limits)
    : limits_{std::max<std::size_t>(limits.total, 1), std::max<std::size_t>(limits.per_caller, 1),
              std::max<std::size_t>(limits.workers, 1)} {}

std::variant<Admission::Ticket, Admission::Refused> Admission::TryAdmit(std::string caller) {
  std::lock_guard lock(mutex_);
  auto found = in_flight_.find(caller);
  const std::size_t mine = found == in_flight_.end() ? 0 : found->second;
  if (mine >= limits_.per_caller) return Refused{Refusal::kCaller, RetryAfterLocked()};
  if (total_ >= limits_.total) return Refused{Refusal::kFull, RetryAfterLocked()};
  ++total_;
  if (found == in_flight_.end()) {
    in_flight_.emplace(caller, 1);
  } else {
    ++found->second;
  }
  return Ticket(this, std::move(caller));
}

void Admission::Release(const std::string& caller) {
  std::lock_guard lock(mutex_);
  --total_;
  auto found = in_flight_.find(caller);
  if (--found->second == 0) in_flight_.erase(found);  // the map holds only callers in flight
}

void Admission::ObserveRun(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds)) return;
  std::lock_guard lock(mutex_);
  mean_run_seconds_ =
      observed_ ? mean_run_seconds_ + kRunWeight * (seconds - mean_run_seconds_) : seconds;
  observed_ = true;
}

int Admission::RetryAfterSeconds() const {
  std::lock_guard lock(mutex_);
  return RetryAfterLocked();
}

int Admission::RetryAfterLocked() const {
  const double drain =
      mean_run_seconds_ * static_cast<double>(total_) / static_cast<double>(limits_.workers);
  if (!(drain < kMaxRetryAfterSeconds)) return kMaxRetryAfterSeconds;
  return std::max(1, static_cast<int>(std::ceil(drain)));
}

std::size_t Admission::InFlight() const {
  std::lock_guard lock(mutex_);
  return total_;
}

std::size_t Admission::InFlight(std::string_view caller) const {
  std::lock_guard lock(mutex_);
  auto found = in_flight_.find(caller);
  return found == in_flight_.end() ? 0 : found->second;
}

}  // namespace perfwarden::http
