// SPDX-License-Identifier: Apache-2.0
// The bootstrap distribution of a sample median: the median of a resample with replacement of
// n values, drawn without building the resample. For n <= kExactMaxSize the exact
// distribution over the sorted values is tabulated once (closed forms in the .cc) and each
// draw is O(1) (Walker's alias method); larger samples draw n indices and count them.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "stats/bootstrap.h"

namespace perfwarden::stats {

class ResampledMedian {
 public:
  static constexpr size_t kExactMaxSize = 200;

  // `sorted`: ascending, finite, non-empty; must outlive this object.
  explicit ResampledMedian(std::span<const double> sorted);

  // One bootstrap replicate of the median. Const and thread-safe: one table (a baseline's) may
  // serve many threads' bootstraps at once.
  double Draw(Rng& rng) const {
    if (cells_.empty()) return CountedDraw(rng);
    return Read(RandomPick(rng));
  }

  // Draw in two steps, for callers that take many random numbers before reading the table:
  // Draw(rng) == Read(RandomPick(rng)). Only when tabulated().
  struct Pick {
    uint32_t cell;
    double uniform;
  };
  bool tabulated() const { return !cells_.empty(); }
  size_t cells() const { return cells_.size(); }
  Pick RandomPick(Rng& rng) const {
    const uint32_t cell = rng.Below(static_cast<uint32_t>(cells_.size()));
    return {cell, rng.Uniform()};
  }
  double Read(Pick pick) const {
    // An index instead of a branch: which side is taken is a coin flip the CPU cannot predict.
    const Cell& cell = cells_[pick.cell];
    return cell.values[pick.uniform < cell.keep ? 0 : 1];
  }

  // Bytes held (for caches that budget memory).
  size_t MemoryBytes() const;

  // The exact distribution as (median value, probability) cells, in the order Draw uses;
  // empty when the size is above kExactMaxSize. For tests and for exact intervals.
  std::vector<std::pair<double, double>> Distribution() const;

  // What a table is for n values whatever they are (positions, probabilities, alias table):
  // built once per n and shared.
  struct Layout;

 private:
  double CountedDraw(Rng& rng) const;  // the fallback above kExactMaxSize

  std::span<const double> sorted_;
  // Walker's alias table, one record a cell so that a draw reads one cache line.
  struct Cell {
    double keep;       // keep this cell's median value, values[0], with this probability,
    double values[2];  // else take its alias cell's, values[1]
  };
  const Layout* layout_ = nullptr;  // null above kExactMaxSize
  std::vector<Cell> cells_;
};

}  // namespace perfwarden::stats
