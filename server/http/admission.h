// SPDX-License-Identifier: Apache-2.0
// Admission of heavy requests (Router::Cost::kHeavy): a bound on those queued or running, all
// callers together, and on those of one caller, so that one caller cannot fill the compute pool
// and nobody waits without bound. A request over either bound is refused at once with how long
// to wait; the server answers it 429 (the caller's bound) or 503 (the server's), Retry-After.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <variant>

#include "server/http/types.h"

namespace perfwarden::http {

struct AdmissionLimits {
  std::size_t total = 64;      // heavy requests queued or running, every caller together
  std::size_t per_caller = 8;  // of one caller (CallerKey)
  std::size_t workers = 1;     // the threads that run them, for the Retry-After estimate
};

// Who a heavy request counts against, computed before any authentication (which the handler
// does): "bearer:" and the SHA-256 (hex) of the Authorization field when there is one (the
// token never kept), else "address:" and the client's address without its port. Several
// anonymous clients behind one proxy share its address.
std::string CallerKey(const Request& request);

class Admission {
 public:
  // Holds one admitted request's place until it is released or destroyed (exceptions too).
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept;
    Ticket& operator=(Ticket&& other) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket() { Release(); }
    void Release();  // idempotent

   private:
    friend class Admission;
    Ticket(Admission* owner, std::string caller) : owner_(owner), caller_(std::move(caller)) {}
    Admission* owner_ = nullptr;
    std::string caller_;
  };

  enum class Refusal { kCaller, kFull };  // over per_caller (429), over total (503)
  struct Refused {
    Refusal reason = Refusal::kFull;
    int retry_after_seconds = 1;
  };

  // Limits of 0 are taken as 1; the object must outlive its tickets.
  explicit Admission(AdmissionLimits limits);

  // A ticket, or the refusal when `caller` already has per_caller requests in flight or all
  // callers together have total. Never waits.
  std::variant<Ticket, Refused> TryAdmit(std::string caller);

  // How long a heavy handler ran (without its wait in the queue): an exponentially weighted
  // mean of these is the Retry-After estimate's unit.
  void ObserveRun(double seconds);

  // Retry-After for a refusal now: the time the pool takes to run what is in flight,
  // ceil(mean run x in flight / workers), between 1 and kMaxRetryAfterSeconds; 1 before any
  // run was observed.
  int RetryAfterSeconds() const;
  static constexpr int kMaxRetryAfterSeconds = 60;

  std::size_t InFlight() const;                         // every caller
  std::size_t InFlight(std::string_view caller) const;  // one caller's
  const AdmissionLimits& limits() const { return limits_; }

 private:
  void Release(const std::string& caller);
  int RetryAfterLocked() const;

  const AdmissionLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, std::size_t, std::less<>> in_flight_;  // callers with some in flight
  std::size_t total_ = 0;
  double mean_run_seconds_ = 0;
  bool observed_ = false;
};

}  // namespace perfwarden::http
