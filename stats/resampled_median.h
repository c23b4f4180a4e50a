// The bootstrap distribution of a sample median: the median of a resample with replacement of
// n values, drawn without building the resample. For n <= kExactMaxSize the exact
// distribution over the sorted values is tabulated once (closed forms in the .cc) and each
// draw is O(1) (Walker's alias method); larger samples draw n indices and count them.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "stats/bootstrap.h"

namespace perfgate::stats {

class ResampledMedian {
 public:
  static constexpr size_t kExactMaxSize = 200;

  // `sorted`: ascending, finite, non-empty; must outlive this object.
  explicit ResampledMedian(std::span<const double> sorted);

  // One bootstrap replicate of the median.
  double Draw(Rng& rng);

  // The exact distribution as (median value, probability) cells, in the order Draw uses;
  // empty when the size is above kExactMaxSize. For tests and for exact intervals.
  std::vector<std::pair<double, double>> Distribution() const;

 private:
  void BuildAliasTable();

  std::span<const double> sorted_;
  std::vector<double> values_;       // median value of each cell
  std::vector<double> probability_;  // of each cell
  std::vector<double> keep_;         // alias table: keep cell i with this probability...
  std::vector<uint32_t> alias_;      // ...else take cell alias_[i]
  std::vector<uint32_t> counts_;     // for the counting fallback
};

}  // namespace perfgate::stats
