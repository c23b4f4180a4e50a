// SPDX-License-Identifier: Apache-2.0
#include "stats/prepared_sample.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/descriptive.h"

namespace perfwarden::stats {

PreparedSample::PreparedSample(std::span<const double> values)
    : values_(values.begin(), values.end()) {
  all_finite_ = AllFinite(values_);
  all_positive_ = std::all_of(values_.begin(), values_.end(), [](double v) { return v > 0; });
  cv_ = Cv(values_);
  if (values_.empty() || !all_finite_) {
    // Median() answers NaN for a NaN and orders infinities; keep its answer without sorting
    // (std::sort needs a strict weak order, which NaN breaks).
    median_ = values_.empty() ? std::numeric_limits<double>::quiet_NaN() : Median(values_);
    return;
  }
  sorted_ = values_;
  std::sort(sorted_.begin(), sorted_.end());
  const size_t half = sorted_.size() / 2;
  // Median()'s arithmetic: the mean of the two middle values for an even size.
  median_ = sorted_.size() % 2 == 1 ? sorted_[half] : (sorted_[half - 1] + sorted_[half]) / 2;
  resampled_median_ = std::make_unique<ResampledMedian>(sorted_);
}

PreparedSample::PreparedSample(std::span<const double> values, int resamples, uint64_t seed)
    : PreparedSample(values) {
  if (resampled_median_) {
    bootstrap_ = std::make_unique<PreparedBootstrap>(*resampled_median_, resamples, seed);
  }
}

size_t PreparedSample::MemoryBytes() const {
  return sizeof(*this) + (values_.capacity() + sorted_.capacity()) * sizeof(double) +
         (resampled_median_ ? resampled_median_->MemoryBytes() : 0) +
         (bootstrap_ ? bootstrap_->MemoryBytes() : 0);
}

}  // namespace perfwarden::stats
