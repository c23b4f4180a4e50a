// SPDX-License-Identifier: Apache-2.0
// A sample prepared once for many comparisons: its values sorted, its median and noise, and the
// table of its resampled median (the costliest part of a bootstrap). A baseline that many pull
// requests are judged against is prepared once and shared, read-only, across threads.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/resampled_median.h"

namespace perfwarden::stats {

class PreparedSample {
 public:
  // Copies `values` (any order; NaN and infinities allowed, JudgeMetrics rejects them).
  explicit PreparedSample(std::span<const double> values);
  // Also prepares the base side of a bootstrap with these resamples and seed (the seed
  // JudgeMetrics derives for the metric: DeriveSeed(policy.seed, name)).
  PreparedSample(std::span<const double> values, int resamples, uint64_t seed);
  PreparedSample(const PreparedSample&) = delete;
  PreparedSample& operator=(const PreparedSample&) = delete;

  std::span<const double> values() const { return values_; }  // in the given order
  std::span<const double> sorted() const { return sorted_; }  // ascending
  size_t size() const { return values_.size(); }
  double median() const { return median_; }  // NaN when empty or a value is NaN
  double cv() const { return cv_; }          // Cv(values): NaN when size < 2
  bool all_finite() const { return all_finite_; }
  bool all_positive() const { return all_positive_; }
  // The bootstrap distribution of the median; only for a non-empty, finite sample.
  const ResampledMedian& resampled_median() const { return *resampled_median_; }
  // The prepared bootstrap, when asked for and the sample is finite and non-empty; else null.
  const PreparedBootstrap* bootstrap() const { return bootstrap_.get(); }

  // Bytes held (for caches that budget memory).
  size_t MemoryBytes() const;

 private:
  std::vector<double> values_;
  std::vector<double> sorted_;
  double median_ = 0;
  double cv_ = 0;
  bool all_finite_ = true;
  bool all_positive_ = true;
  std::unique_ptr<ResampledMedian> resampled_median_;  // reads sorted_
  std::unique_ptr<PreparedBootstrap> bootstrap_;
};

}  // namespace perfwarden::stats
