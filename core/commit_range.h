// SPDX-License-Identifier: Apache-2.0
// Commit ranges of alerts as positions on a branch: where a commit sits is when its first run of
// the branch arrived (the order a tracked branch's history points follow), ties broken by the
// commit's id. A range (last good, first bad] holds the commits after the last good up to the
// first bad; two ranges overlap when they share a commit, and their narrowest common range is
// their intersection. Alert groups (docs/history.md) are made of overlapping ranges.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <span>

namespace perfwarden {

struct BranchCommit {
  int64_t first_run_us = 0;  // the commit's first run on the branch, microseconds since epoch
  int64_t commit_id = 0;
  auto operator<=>(const BranchCommit&) const = default;
};

struct CommitRange {
  BranchCommit last_good;  // excluded
  BranchCommit first_bad;  // included
  bool operator==(const CommitRange&) const = default;
};

// The commits both ranges hold, as a range; nullopt when they share none (an empty or reversed
// range shares nothing).
inline std::optional<CommitRange> Intersect(const CommitRange& a, const CommitRange& b) {
  CommitRange out{a.last_good < b.last_good ? b.last_good : a.last_good,
                  a.first_bad < b.first_bad ? a.first_bad : b.first_bad};
  if (!(out.last_good < out.first_bad)) return std::nullopt;
  return out;
}

// The index in `groups` of the group `range` joins: the first that overlaps it (callers list
// groups oldest first, so the answer does not depend on anything but the data); nullopt when
// none does.
inline std::optional<std::size_t> GroupToJoin(const CommitRange& range,
                                              std::span<const CommitRange> groups) {
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (Intersect(range, groups[i])) return i;
  }
  return std::nullopt;
}

}  // namespace perfwarden
