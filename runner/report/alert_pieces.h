// SPDX-License-Identifier: Apache-2.0
// Pieces of an alert that the list and the single-alert renderings share (alerts_render.h): its
// id, benchmark, commits and environment change. Internal to runner/report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "wire/alert.h"

namespace perfwarden::report::alerts_internal {

// The first `n` characters of a commit id.
std::string ShortSha(const std::string& sha, size_t n);
// "suite/benchmark", or the benchmark alone when the series has no suite.
std::string BenchmarkName(const wire::Alert& alert);
// "9f2c4d1 Sort: insertion sort below 32 (Ada Lovelace, 2026-11-20T10:00:00Z)"; "" without a sha.
std::string CommitLine(const wire::CommitRef& commit, bool markdown);

inline constexpr const char* kNoLastGood =
    "none (the first point of the series has no earlier commit)";

// One "name: before -> after" line per changed fingerprint field of the alert's environment
// change; empty when it has none.
std::vector<std::string> EnvironmentLines(const wire::Alert& alert);

}  // namespace perfwarden::report::alerts_internal
