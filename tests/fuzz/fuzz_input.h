// SPDX-License-Identifier: Apache-2.0
// The fuzzers' shared entry helpers: libFuzzer hands each target raw bytes; these view them as
// text and check the one property every parser owes its caller besides not crashing: an error
// names itself (a refusal with an empty message would reach a user as a bare 400).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/result.h"

namespace perfwarden::fuzz {

inline std::string_view AsText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Aborts (a crash libFuzzer records with its input) when a parser refuses without saying why.
template <typename T>
void RequireNamedError(const Result<T>& result, const char* parser) {
  if (!result && result.error().message.empty()) {
    std::fprintf(stderr, "%s refused an input with an empty error message\n", parser);
    std::abort();
  }
}

}  // namespace perfwarden::fuzz
