// SPDX-License-Identifier: Apache-2.0
// The retry policy of the tests that count attempts and waits (net/'s retry tests, the spool's
// PushAll): net/'s defaults without jitter, so every wait is exactly the exponential envelope.
// Header-only; a test that includes it links net/.
#pragma once

#include "net/retry.h"

namespace perfwarden::testing {

inline net::RetryPolicy NoJitter() {
  net::RetryPolicy policy;
  policy.jitter = false;
  return policy;
}

}  // namespace perfwarden::testing
