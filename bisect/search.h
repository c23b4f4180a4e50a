// SPDX-License-Identifier: Apache-2.0
// The search of `perfwarden bisect`, without I/O: positions 0..n stand for the good end, the
// commits of the range in order, and the bad end. Each measured position is GOOD, BAD, SKIP (its
// build failed) or UNKNOWN (still undecided at the repetition cap). The next probe is the
// measurable position nearest the middle of the current window (last GOOD, first BAD); skipped
// and unknown positions are stepped around, as `git bisect skip` does, and when only they are
// left inside the window the answer is the window itself, not one commit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace perfwarden::bisect {

enum class Mark { kUnmeasured, kGood, kBad, kSkip, kUnknown };

std::string MarkName(Mark mark);  // "unmeasured", "good", "bad", "skip", "unknown"

class Search {
 public:
  // Positions 0..last; 0 (the good end) and last (the bad end) are marked as given.
  explicit Search(std::size_t last);

  void Set(std::size_t position, Mark mark);
  Mark Get(std::size_t position) const { return marks_[position]; }
  std::size_t last() const { return marks_.size() - 1; }

  // The window: the first BAD position, and the last GOOD position before it. Noise can leave a
  // GOOD after a BAD; the window is always the one below the first BAD.
  std::size_t FirstBad() const;
  std::size_t LastGood() const;

  // The next position to measure, nullopt when the window holds nothing measurable (done).
  std::optional<std::size_t> Next() const;
  bool Done() const { return !Next().has_value(); }

  // When done: the culprit is FirstBad() when the window is one step wide; otherwise every
  // position in (LastGood, FirstBad] could be it (the ones between were skipped or unknown).
  bool Exact() const { return FirstBad() == LastGood() + 1; }

  // About how many probes a clean search of `last - 1` commits takes: ceil(log2(last)).
  static std::size_t ExpectedProbes(std::size_t last);

 private:
  std::vector<Mark> marks_;
};

}  // namespace perfwarden::bisect
