// SPDX-License-Identifier: Apache-2.0
// Round trips for the fuzzers: what a decoder accepts, its encoder writes, and the decoder reads
// back as the same value. A failure aborts with both sides' names (libFuzzer keeps the input).
#pragma once

#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_input.h"

namespace perfwarden::fuzz {

// `decode(encode(value))` must succeed and equal `value`.
template <typename T, typename Encode, typename Decode>
void RequireRoundTrip(const T& value, Encode encode, Decode decode, const char* what) {
  auto again = decode(encode(value));
  if (!again) {
    std::fprintf(stderr, "%s: the encoded value is refused: %s\n", what,
                 again.error().ToString().c_str());
    std::abort();
  }
  if (!(*again == value)) {
    std::fprintf(stderr, "%s: the encoded value reads back different\n", what);
    std::abort();
  }
}

}  // namespace perfwarden::fuzz
