// SPDX-License-Identifier: Apache-2.0
#include "net/retry.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace perfwarden::net {

bool IsRetryableStatus(int status) {
  switch (status) {
    case 408:  // the server timed out waiting for the request
    case 429:  // rate limited
    case 500:
    case 502:
    case 503:
    case 504:
      return true;
    default:
      return false;
  }
}

std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  // Saturate instead of overflowing: the caller caps at max_delay anyway.
  constexpr int64_t kMaxSeconds = int64_t{1} << 40;
  int64_t seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = std::min(kMaxSeconds, seconds * 10 + (c - '0'));
  }
  return std::chrono::milliseconds(seconds * 1000);
}

Backoff::Backoff(const RetryPolicy& policy, uint64_t seed) : policy_(policy), state_(seed) {}

double Backoff::NextUniform() {
  // SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified, good enough for jitter.
  state_ += 0x9e3779b97f4a7c15ULL;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;  // the top 53 bits: exact in a double
}

std::chrono::milliseconds Backoff::Next() {
  const double cap = static_cast<double>(std::max<int64_t>(0, policy_.max_delay.count()));
  const double first = static_cast<double>(std::max<int64_t>(0, policy_.initial.count()));
  // pow may overflow to infinity for long runs of attempts; min() then gives the cap.
  const double envelope = std::min(cap, first * std::pow(policy_.factor, step_));
  ++step_;
  const double u = NextUniform();  // drawn even without jitter: keeps sequences aligned
  if (!policy_.jitter) return std::chrono::milliseconds(static_cast<int64_t>(envelope));
  // u in [0, 1): floor(u * (envelope + 1)) is uniform over the integers 0..envelope.
  return std::chrono::milliseconds(
      static_cast<int64_t>(std::floor(u * (std::floor(envelope) + 1))));
}

std::chrono::milliseconds Backoff::Next(std::chrono::milliseconds retry_after) {
  Next();
  return std::clamp(retry_after, std::chrono::milliseconds(0),
                    std::max(std::chrono::milliseconds(0), policy_.max_delay));
}

Result<HttpResponse> CallWithRetry(const RetryPolicy& policy,
                                   const std::function<Result<HttpResponse>()>& call,
                                   const RetryContext& context) {
  const int max_attempts = std::max(1, policy.max_attempts);
  Backoff backoff(policy, context.seed);
  for (int attempt = 1;; ++attempt) {
    Result<HttpResponse> outcome = call();
    std::optional<std::chrono::milliseconds> retry_after;
    std::string reason;
    if (outcome) {
      if (!IsRetryableStatus(outcome->status)) return outcome;
      reason = "HTTP " + std::to_string(outcome->status);
      auto header = outcome->headers.find("retry-after");
      if (header != outcome->headers.end()) retry_after = ParseRetryAfter(header->second);
    } else {
      if (outcome.error().code != ErrorCode::kUnavailable) return outcome;
      reason = outcome.error().message;
    }
    if (attempt >= max_attempts) return outcome;
    const std::chrono::milliseconds delay =
        retry_after ? backoff.Next(*retry_after) : backoff.Next();
    if (context.on_retry) context.on_retry(RetryNotice{attempt, max_attempts, delay, reason});
    if (context.sleep) {
      context.sleep(delay);
    } else {
      std::this_thread::sleep_for(delay);
    }
  }
}

}  // namespace perfwarden::net
