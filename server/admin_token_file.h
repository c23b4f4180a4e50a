// SPDX-License-Identifier: Apache-2.0
// The admin token a first start creates goes to a file only its owner can read, not to the log
// or the terminal (under systemd both end up in the journal).
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace perfwarden::server {

inline constexpr std::string_view kAdminTokenFileName = "admin-token";

// Writes `token` and a newline to `<dir>/admin-token` with mode 0600 (dir made 0700 when it does
// not exist; an older file there is replaced, a symlink refused) and returns the file's absolute
// path. kUnavailable naming the path and the system's reason on failure.
Result<std::string> WriteAdminTokenFile(const std::string& dir, std::string_view token);

}  // namespace perfwarden::server
