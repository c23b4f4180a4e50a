// SPDX-License-Identifier: Apache-2.0
#include "core/constant_time.h"

#include <cstddef>

namespace perfwarden {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  // Every byte is read and folded in (volatile keeps the compiler from stopping at the first
  // difference), as OpenSSL's portable CRYPTO_memcmp does.
  const volatile unsigned char* x = reinterpret_cast<const unsigned char*>(a.data());
  const volatile unsigned char* y = reinterpret_cast<const unsigned char*>(b.data());
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = static_cast<unsigned char>(diff | (x[i] ^ y[i]));
  }
  return diff == 0;
}

}  // namespace perfwarden
