// SPDX-License-Identifier: Apache-2.0
// The server's budget for request bodies in memory: every request with a body reserves its size
// (Content-Length, or the body limit for a chunked body whose size is not known in advance)
// before its body is read, and holds it until its answer is ready. One that does not fit is
// answered 503 at once with Retry-After, its body unread. The decoders bound what a body costs
// while it is decoded at a small multiple of its size (docs/reliability.md, "Memory"), so the
// budget bounds the memory all requests in flight take together.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "server/http/metrics.h"
#include "server/http/types.h"

namespace perfwarden::http {

class MemoryBudget {
 public:
  // A body's place in the budget, given back when released or destroyed.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept;
    Reservation& operator=(Reservation&& other) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() { Release(); }
    void Release();  // idempotent
    std::size_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* owner, std::size_t bytes) : owner_(owner), bytes_(bytes) {}
    MemoryBudget* owner_ = nullptr;
    std::size_t bytes_ = 0;
  };

  // After answering a body at least this large the server hands the heap it freed back to the
  // system (core/heap.h): glibc keeps freed arenas otherwise, and a server that once
  // decoded twenty 10 MB uploads at once would hold that gigabyte until it exits.
  static constexpr std::size_t kTrimAfterBytes = std::size_t{1} << 20;

  // `limit` bytes of bodies at once; the object must outlive its reservations. With `metrics`,
  // the gauge perfwarden_http_request_memory_bytes{state="in_use"|"limit"} and the counter
  // perfwarden_http_memory_refused_total.
  explicit MemoryBudget(std::size_t limit, Metrics* metrics = nullptr);

  // What a request reserves: its Content-Length, or for a chunked body, whose size is known only
  // once read, the largest allowed (`body_limit`); never more than `body_limit`.
  static std::size_t BodyBytes(std::optional<std::uint64_t> content_length, bool chunked,
                               std::size_t body_limit) {
    if (chunked) return body_limit;
    return static_cast<std::size_t>(
        std::min<std::uint64_t>(content_length.value_or(0), body_limit));
  }

  // A reservation of `bytes` (0: an empty one that holds nothing), or nullopt when the bodies in
  // flight and this one would pass the limit. Never waits.
  std::optional<Reservation> TryReserve(std::size_t bytes);

  // The same for a request whose body is `bytes`: nullopt with `*reservation` holding its place,
  // or the answer that refuses it: 503 UNAVAILABLE with Retry-After: 1, naming the limit
  // (limits.request_memory_bytes).
  std::optional<Response> Admit(std::size_t bytes, Reservation* reservation);

  std::size_t InUse() const;
  std::size_t limit() const { return limit_; }

 private:
  void Release(std::size_t bytes);

  const std::size_t limit_;
  // Shared with the gauge, which the metrics may read after the server is gone.
  std::shared_ptr<std::atomic<std::size_t>> in_use_ = std::make_shared<std::atomic<std::size_t>>(0);
  Counter* refused_ = nullptr;
};

}  // namespace perfwarden::http
