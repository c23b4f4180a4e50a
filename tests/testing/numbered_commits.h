// SPDX-License-Identifier: Apache-2.0
// Commits 0..n for the bisect driver's tests: shas 00..01, 00..02, ... (40 hex digits, commit i
// has sha i + 1), subjects "commit i".
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "bisect/driver.h"

namespace perfwarden::testing {

inline std::vector<bisect::CommitRef> NumberedCommits(std::size_t n) {
  std::vector<bisect::CommitRef> out;
  for (std::size_t i = 0; i <= n; ++i) {
    char sha[41];
    std::snprintf(sha, sizeof sha, "%040zx", i + 1);
    out.push_back({sha, "commit " + std::to_string(i), "T"});
  }
  return out;
}

}  // namespace perfwarden::testing
