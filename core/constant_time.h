// SPDX-License-Identifier: Apache-2.0
// Comparison of secrets (token hashes) whose running time does not depend on where the inputs
// differ, so a caller cannot learn a stored value byte by byte from response times. Lives in core
// so that the store checks a step's claim without depending on server/auth.
#pragma once

#include <string_view>

namespace perfwarden {

// True when a and b are byte-for-byte equal. Runs in time independent of where they differ;
// the lengths are not secret (callers compare fixed-length hashes) and differing lengths are
// simply unequal.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace perfwarden
