// SPDX-License-Identifier: Apache-2.0
// Descriptive statistics over a sample (free functions over spans, as in google/benchmark).
// Empty or too-small input never throws: each function documents the value it returns then
// (NaN, as NumPy does). Non-finite input is the caller's job to reject (see AllFinite).
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace perfwarden::stats {

// True when every value is finite (no NaN, no +/-inf). True for an empty span.
bool AllFinite(std::span<const double> x);

// Arithmetic mean. NaN when empty. Accurate summation (compensated), so that 1e9-magnitude
// samples with tiny spreads keep their digits.
double Mean(std::span<const double> x);

// Variance with `ddof` delta degrees of freedom (1: sample variance). NaN when size <= ddof.
// Two-pass with a compensation term (accurate for near-constant samples).
double Variance(std::span<const double> x, int ddof = 1);

// Sample standard deviation (ddof 1). NaN when size < 2.
double StdDev(std::span<const double> x);

// Coefficient of variation: sample stddev / |mean|. NaN when size < 2 or mean == 0.
double Cv(std::span<const double> x);

// Median (NumPy's: mean of the two middle values for even sizes). NaN when empty.
double Median(std::span<const double> x);

// Median absolute deviation from the median, times `scale` (1.4826 makes it a consistent
// estimator of sigma for normal data). NaN when empty.
double Mad(std::span<const double> x, double scale = 1.0);

// The 13 methods of numpy.quantile (NumPy >= 1.22), by their NumPy names.
enum class QuantileMethod {
  kInvertedCdf,
  kAveragedInvertedCdf,
  kClosestObservation,
  kInterpolatedInvertedCdf,
  kHazen,
  kWeibull,
  kLinear,  // NumPy's default, R's type 7
  kMedianUnbiased,
  kNormalUnbiased,
  kLower,
  kHigher,
  kMidpoint,
  kNearest,
};

// Parses a NumPy method name ("linear", "hazen", ...). nullopt when unknown.
std::optional<QuantileMethod> ParseQuantileMethod(std::string_view numpy_name);

// The q-quantile (0 <= q <= 1) of an ascending-sorted sample, exactly as numpy.quantile
// computes it (including its interpolation formula). NaN when empty or q outside [0, 1].
double QuantileSorted(std::span<const double> sorted, double q,
                      QuantileMethod method = QuantileMethod::kLinear);

// As QuantileSorted, on an unsorted sample (sorts a copy).
double Quantile(std::span<const double> x, double q,
                QuantileMethod method = QuantileMethod::kLinear);

// A closed interval [lower, upper].
struct Interval {
  double lower = 0;
  double upper = 0;
};

// A t-based confidence interval (of a mean, or of a difference of means).
struct TInterval {
  double estimate = 0;
  double lower = 0;
  double upper = 0;
  double std_error = 0;
  double df = 0;
  double t_crit = 0;  // the two-sided critical value t_{(1+confidence)/2, df}
};

// Confidence interval of the mean: mean +/- t_{(1+c)/2, n-1} * s / sqrt(n).
// All fields NaN when size < 2 or confidence is not in (0, 1).
TInterval MeanConfidenceInterval(std::span<const double> x, double confidence);

}  // namespace perfwarden::stats
