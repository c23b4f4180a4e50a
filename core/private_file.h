// SPDX-License-Identifier: Apache-2.0
// A file only its owner may read (mode 0600), for a secret: a password, a token.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "core/result.h"

namespace perfwarden {

// Writes `text` to `path` as a new file of mode 0600 whatever the umask (an older file there is
// replaced, never written through, so a link planted at the path cannot redirect it), synced,
// and chowned to `owner` (uid, gid) when given. kUnavailable naming the path and the system's
// reason on failure.
Result<void> WritePrivateFile(const std::filesystem::path& path, std::string_view text,
                              std::optional<std::pair<uid_t, gid_t>> owner = std::nullopt);

}  // namespace perfwarden
