// SPDX-License-Identifier: Apache-2.0
#include "bisect/search.h"

#include <cmath>
#include <cstdlib>

namespace perfwarden::bisect {

std::string MarkName(Mark mark) {
  switch (mark) {
    case Mark::kGood:
      return "good";
    case Mark::kBad:
      return "bad";
    case Mark::kSkip:
      return "skip";
    case Mark::kUnknown:
      return "unknown";
    case Mark::kUnmeasured:
      break;
  }
  return "unmeasured";
}

Search::Search(std::size_t last) : marks_(last + 1, Mark::kUnmeasured) {
  marks_.front() = Mark::kGood;
  marks_.back() = Mark::kBad;
}

void Search::Set(std::size_t position, Mark mark) {
  if (position < marks_.size()) marks_[position] = mark;
}

std::size_t Search::FirstBad() const {
  for (std::size_t i = 0; i < marks_.size(); ++i) {
    if (marks_[i] == Mark::kBad) return i;
  }
  return last();
}

std::size_t Search::LastGood() const {
  const std::size_t bad = FirstBad();
  for (std::size_t i = bad; i-- > 0;) {
    if (marks_[i] == Mark::kGood) return i;
  }
  return 0;
}

std::optional<std::size_t> Search::Next() const {
  const std::size_t lo = LastGood();
  const std::size_t hi = FirstBad();
  if (hi <= lo + 1) return std::nullopt;
  // The middle first, then outwards (the lower side first on ties): the measurable position
  // nearest the middle keeps the search close to halving the window.
  const std::size_t mid = lo + (hi - lo) / 2;
  for (std::size_t d = 0; d < hi - lo; ++d) {
    for (const std::size_t candidate : {mid - std::min(d, mid), mid + d}) {
      if (candidate > lo && candidate < hi && marks_[candidate] == Mark::kUnmeasured) {
        return candidate;
      }
    }
  }
  return std::nullopt;
}

std::size_t Search::ExpectedProbes(std::size_t last) {
  if (last <= 1) return 0;
  return static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(last))));
}

}  // namespace perfwarden::bisect
