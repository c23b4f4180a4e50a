// SPDX-License-Identifier: Apache-2.0
// PushAll: drains the spool into perfwarden-server, oldest first, under the spool's lock. A run
// leaves the spool only when the server acknowledged it (201 created, 200 already stored: the
// server is idempotent on the run id) or refused it for good (then it moves to rejected/). When
// the server cannot be reached the uploads stay queued and the caller learns so from the error.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "net/http_client.h"
#include "net/retry.h"
#include "runner/client/spool.h"

namespace perfwarden::client {

struct PushReport {
  size_t sent = 0;             // stored by the server now (201)
  size_t already_present = 0;  // the server had them already (200): removed from the spool
  size_t rejected = 0;         // refused for good (4xx): moved to rejected/
  // Queued when the push ended: uploads another process spooled while this push ran (they wait
  // for the next push). A push that leaves its own uploads behind returns an error instead.
  size_t remaining = 0;
  std::vector<std::string> messages;  // one line per rejected or kept upload, for humans
};

struct PushEvent {
  enum class Kind { kSent, kAlreadyPresent, kRejected, kRetrying, kKept };
  Kind kind = Kind::kSent;
  std::string run_id;
  std::string message;  // the reason for kRejected, kRetrying and kKept
};
using PushProgress = std::function<void(const PushEvent&)>;

struct PushOptions {
  net::Sleeper sleep;                              // between retries; empty: real sleep
  uint64_t seed = 0;                               // jitter seed (runners pass a random one)
  std::chrono::milliseconds lock_timeout{60'000};  // waiting for another runner's push
};

// Posts every spooled upload to <server_url>/api/v1/projects/<project>/runs (the project read
// from the upload's "project" field, percent-escaped), with `token` as bearer token, each post
// retried per `policy` (CallWithRetry). Per upload, by the final answer:
//   201 / 200        removed (sent / already_present);
//   401 / 403        stop: kUnauthenticated / kPermissionDenied; nothing more is sent;
//   other 4xx        moved to rejected/ with the server's error code, message and field; the
//                    push goes on. An upload that is not JSON or names no project is rejected
//                    the same way without being posted;
//   transport error, 408, 429, 502, 503, 504 (after all retries): the server is unreachable or
//                    overloaded; stop, since trying the rest would only wait longer;
//   3xx              stop: kInvalidArgument (field "server_url"), no redirect is followed;
//   500 and anything else (after all retries): kept, and the push goes on (the failure may be
//                    this upload's alone, and it must not block the others).
// The result is a report only when every upload listed at the start was dealt with (sent,
// already present or rejected). Otherwise an error, whose message counts what was sent and
// what stays spooled: kUnavailable (server unreachable or failing: "results still spooled", the
// CLI's exit code 3), kUnauthenticated, kPermissionDenied, kInvalidArgument, or a local spool or
// lock failure. Runs until then are sent and removed all the same. `progress` hears each event.
Result<PushReport> PushAll(Spool& spool, net::HttpClient& http, const std::string& server_url,
                           const std::string& token, const net::RetryPolicy& policy,
                           const PushProgress& progress = {}, const PushOptions& options = {});

// "<server_url without trailing '/'>/api/v1/projects/<escaped project>/runs".
std::string RunsUrl(const std::string& server_url, const std::string& project);

// RFC 3986 percent-encoding of everything but unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string EscapePathSegment(const std::string& text);

}  // namespace perfwarden::client
