// SPDX-License-Identifier: Apache-2.0
// Retries of HTTP calls with exponential backoff and full jitter: which outcomes are worth
// another attempt (transport errors, 408, 429, 500, 502, 503, 504), how long to wait (honouring
// Retry-After), and a loop that does it. Sleeping and randomness are injected, so tests run the
// schedule on a fake clock and a seed makes the jitter reproducible.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "net/http_client.h"

namespace perfwarden::net {

struct RetryPolicy {
  int max_attempts = 5;  // attempts in all, the first included; values below 1 mean 1
  std::chrono::milliseconds initial{500};
  double factor = 2;
  std::chrono::milliseconds max_delay{30'000};
  // Full jitter (AWS's "Exponential Backoff And Jitter"): the wait is uniform in
  // [0, min(max_delay, initial * factor^n)], so that runners failing together do not retry in
  // lockstep. Off: exactly the exponential envelope.
  bool jitter = true;
};

// Whether an HTTP status may succeed when sent again: 408, 429, 500, 502, 503, 504.
bool IsRetryableStatus(int status);

// The delay a Retry-After field asks for, when it is delta-seconds ("120"). An HTTP-date or
// anything else gives nullopt (the caller falls back to its own backoff).
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value);

// The waits between attempts of one call: envelope n (n = 0 before the second attempt) is
// min(max_delay, initial * factor^n); with jitter, a wait is uniform in [0, envelope]. The
// random source is a SplitMix64 sequence from `seed`: the same seed, the same waits, on every
// platform (unlike std::uniform_real_distribution).
class Backoff {
 public:
  Backoff(const RetryPolicy& policy, uint64_t seed);

  // The wait before the next attempt; advances the sequence.
  std::chrono::milliseconds Next();
  // The wait when the server sent Retry-After: exactly its value, capped at max_delay. Still
  // advances the sequence, so later waits do not depend on whether a server sent the field.
  std::chrono::milliseconds Next(std::chrono::milliseconds retry_after);

  // A number uniform in [0, 1) from the seeded sequence.
  double NextUniform();

 private:
  RetryPolicy policy_;
  uint64_t state_;
  int step_ = 0;
};

using Sleeper = std::function<void(std::chrono::milliseconds)>;

// What happened on a failed attempt, told before the wait that follows it.
struct RetryNotice {
  int attempt = 0;  // 1-based: the attempt that failed
  int max_attempts = 0;
  std::chrono::milliseconds delay{0};  // the wait before the next attempt
  std::string reason;                  // "HTTP 503" or the transport error's message
};

struct RetryContext {
  Sleeper sleep;      // empty: std::this_thread::sleep_for
  uint64_t seed = 0;  // jitter seed; runners pass a random one, tests a fixed one
  std::function<void(const RetryNotice&)> on_retry;  // optional
};

// Calls `call` until it gives a response that is not retryable, an error that is not
// kUnavailable (a malformed URL will not get better), or policy.max_attempts attempts were
// made. Returns the last outcome as it was: a final 503 is a response, a final refused
// connection is the kUnavailable error.
Result<HttpResponse> CallWithRetry(const RetryPolicy& policy,
                                   const std::function<Result<HttpResponse>()>& call,
                                   const RetryContext& context = {});

}  // namespace perfwarden::net
