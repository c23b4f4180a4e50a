// SPDX-License-Identifier: Apache-2.0
// The id of the HTTP request a thread is handling: made by the router for each request, sent back
// as X-Request-Id and in error bodies, and named by the log lines written while the request is
// handled (the store logs the database's own text under it; docs/api.md, "Errors").
#pragma once

#include <string>

namespace perfwarden {

// 16 random lower-case hex digits.
std::string NewRequestId();

// The id set by the innermost ScopedRequestId on this thread; "" outside a request.
const std::string& CurrentRequestId();

// Makes `id` this thread's current request id until destroyed (the previous one comes back).
class ScopedRequestId {
 public:
  explicit ScopedRequestId(std::string id);
  ~ScopedRequestId();
  ScopedRequestId(const ScopedRequestId&) = delete;
  ScopedRequestId& operator=(const ScopedRequestId&) = delete;

 private:
  std::string previous_;
};

}  // namespace perfwarden
