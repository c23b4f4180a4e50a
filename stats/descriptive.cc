// SPDX-License-Identifier: Apache-2.0
#include "stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "stats/compensated.h"
#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool HasNaN(std::span<const double> x) {
  return std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
}

// NumPy's _lerp: the second form for t >= 0.5 makes t == 1 return b exactly.
// Kept as two separate roundings (multiply, then add); GCC does not contract to FMA in ISO mode.
double NumpyLerp(double a, double b, double t) {
  const double diff_b_a = b - a;
  if (t >= 0.5) return b - diff_b_a * (1 - t);
  return a + diff_b_a * t;
}

// numpy's _compute_virtual_index, operation for operation.
double VirtualIndex(double n, double q, double alpha, double beta) {
  return n * q + (alpha + q * (1 - alpha - beta)) - 1;
}

// numpy's _discret_interpolation_to_boundaries: floor(index), or the next index unless
// `take_previous` holds; negative results clip to 0.
template <typename TakePrevious>
double DiscreteIndex(double index, TakePrevious take_previous) {
  const double previous = std::floor(index);
  const double gamma = index - previous;
  const double result = take_previous(gamma, previous) ? previous : previous + 1;
  return result < 0 ? 0 : result;
}

double MedianOfCopy(std::vector<double>& v) {
  if (v.empty() || HasNaN(v)) return kNaN;
  const size_t half = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half), v.end());
  const double upper = v[half];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half));
  return (lower + upper) / 2;  // np.mean of the two middle values
}

}  // namespace

bool AllFinite(std::span<const double> x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

double Mean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  const DoubleDouble mean = MeanDd(x);
  return mean.hi + mean.lo;  // hi alone is rounded twice (sum, then division)
}

double Variance(std::span<const double> x, int ddof) {
  if (static_cast<std::ptrdiff_t>(x.size()) <= ddof) return kNaN;
  const DoubleDouble mean = MeanDd(x);
  if (!std::isfinite(mean.hi)) return kNaN;
  // Corrected two-pass (Chan, Golub & LeVeque): sum(d^2) - sum(d)^2 / n removes what is left of
  // the mean's rounding; deviations subtract the double-double mean.
  double sum_sq = 0;
  double sum_sq_c = 0;
  double sum_d = 0;
  for (double v : x) {
    const double d = (v - mean.hi) - mean.lo;
    const double sq = d * d;
    const double t = sum_sq + sq;
    sum_sq_c += sum_sq >= sq ? (sum_sq - t) + sq : (sq - t) + sum_sq;
    sum_sq = t;
    sum_d += d;
  }
  const double n = static_cast<double>(x.size());
  const double ss = (sum_sq + sum_sq_c) - sum_d * sum_d / n;
  return std::max(0.0, ss) / (n - ddof);
}

double StdDev(std::span<const double> x) { return std::sqrt(Variance(x, 1)); }

double Cv(std::span<const double> x) {
  if (x.size() < 2) return kNaN;
  const double mean = Mean(x);
  if (mean == 0) return kNaN;
  return StdDev(x) / std::fabs(mean);
}

double Median(std::span<const double> x) {
  std::vector<double> copy(x.begin(), x.end());
  return MedianOfCopy(copy);
}

double Mad(std::span<const double> x, double scale) {
  std::vector<double> copy(x.begin(), x.end());
  const double median = MedianOfCopy(copy);
  if (std::isnan(median)) return kNaN;
  for (double& v : copy) v = std::fabs(v - median);
  return MedianOfCopy(copy) * scale;
}

std::optional<QuantileMethod> ParseQuantileMethod(std::string_view numpy_name) {
  static constexpr std::pair<std::string_view, QuantileMethod> kNames[] = {
      {"inverted_cdf", QuantileMethod::kInvertedCdf},
      {"averaged_inverted_cdf", QuantileMethod::kAveragedInvertedCdf},
      {"closest_observation", QuantileMethod::kClosestObservation},
      {"interpolated_inverted_cdf", QuantileMethod::kInterpolatedInvertedCdf},
      {"hazen", QuantileMethod::kHazen},
      {"weibull", QuantileMethod::kWeibull},
      {"linear", QuantileMethod::kLinear},
      {"median_unbiased", QuantileMethod::kMedianUnbiased},
      {"normal_unbiased", QuantileMethod::kNormalUnbiased},
      {"lower", QuantileMethod::kLower},
      {"higher", QuantileMethod::kHigher},
      {"midpoint", QuantileMethod::kMidpoint},
      {"nearest", QuantileMethod::kNearest},
  };
  for (const auto& [name, method] : kNames) {
    if (name == numpy_name) return method;
  }
  return std::nullopt;
}

double QuantileSorted(std::span<const double> sorted, double q, QuantileMethod method) {
  if (sorted.empty() || !(q >= 0 && q <= 1)) return kNaN;
  // NumPy sorts NaN last and answers NaN for any slice holding one.
  if (std::isnan(sorted.back())) return kNaN;
  const double n = static_cast<double>(sorted.size());
  const double last = n - 1;
  auto at = [&](double index) { return sorted[static_cast<size_t>(std::clamp(index, 0.0, last))]; };

  // Methods whose virtual index is an integer: NumPy takes the element, no interpolation.
  switch (method) {
    case QuantileMethod::kInvertedCdf:
      return at(DiscreteIndex(n * q - 1, [](double gamma, double) { return gamma == 0; }));
    case QuantileMethod::kClosestObservation:
      return at(DiscreteIndex(n * q - 1 - 0.5, [](double gamma, double previous) {
        return gamma == 0 && std::fmod(previous, 2) == 0;
      }));
    case QuantileMethod::kLower:
      return at(std::floor(last * q));
    case QuantileMethod::kHigher:
      return at(std::ceil(last * q));
    case QuantileMethod::kNearest:
      return at(std::nearbyint(last * q));  // np.around: halves to even
    default:
      break;
  }

  double index = 0;
  switch (method) {
    case QuantileMethod::kAveragedInvertedCdf:
      index = n * q - 1;
      break;
    case QuantileMethod::kInterpolatedInvertedCdf:
      index = VirtualIndex(n, q, 0, 1);
      break;
    case QuantileMethod::kHazen:
      index = VirtualIndex(n, q, 0.5, 0.5);
      break;
    case QuantileMethod::kWeibull:
      index = VirtualIndex(n, q, 0, 0);
      break;
    case QuantileMethod::kMedianUnbiased:
      index = VirtualIndex(n, q, 1 / 3.0, 1 / 3.0);
      break;
    case QuantileMethod::kNormalUnbiased:
      index = VirtualIndex(n, q, 3 / 8.0, 3 / 8.0);
      break;
    case QuantileMethod::kMidpoint:
      index = 0.5 * (std::floor(last * q) + std::ceil(last * q));
      break;
    default:  // kLinear; NumPy prefers (n - 1) * q to the alpha = beta = 1 formula
      index = last * q;
      break;
  }

  // numpy's _get_indexes: out-of-range indexes take the end element (index -1 or 0), and gamma
  // is measured from that adjusted previous index, as NumPy does.
  double previous = std::floor(index);
  double next = previous + 1;
  double previous_for_gamma = previous;
  if (index >= last) {
    previous = next = last;
    previous_for_gamma = -1;
  }
  if (index < 0) previous = next = previous_for_gamma = 0;
  double gamma = index - previous_for_gamma;
  if (method == QuantileMethod::kAveragedInvertedCdf) {
    gamma = gamma == 0 ? 0.5 : 1.0;
  } else if (method == QuantileMethod::kMidpoint) {
    gamma = std::fmod(index, 1.0) == 0 ? 0.0 : 0.5;
  }
  return NumpyLerp(at(previous), at(next), gamma);
}

double Quantile(std::span<const double> x, double q, QuantileMethod method) {
  if (x.empty() || !(q >= 0 && q <= 1) || HasNaN(x)) return kNaN;
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  return QuantileSorted(sorted, q, method);
}

TInterval MeanConfidenceInterval(std::span<const double> x, double confidence) {
  if (x.size() < 2 || !(confidence > 0 && confidence < 1)) {
    return {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  }
  const double n = static_cast<double>(x.size());
  TInterval ci;
  ci.estimate = Mean(x);
  ci.std_error = StdDev(x) / std::sqrt(n);
  ci.df = n - 1;
  // For c >= 0.5 the lower tail (1 - c) / 2 is exact in binary; (1 + c) / 2 would round.
  // The quantile depends only on (confidence, df) and costs ~10 us (Boost's inverse incomplete
  // beta in long double); a series of 10,000 points of one size asks for the same one 10,000
  // times, so each thread keeps the last one.
  thread_local double last_confidence = kNaN, last_df = kNaN, last_t = kNaN;
  if (confidence != last_confidence || ci.df != last_df) {
    last_t = -StudentTQuantile((1 - confidence) / 2, ci.df);
    last_confidence = confidence;
    last_df = ci.df;
  }
  ci.t_crit = last_t;
  ci.lower = ci.estimate - ci.t_crit * ci.std_error;
  ci.upper = ci.estimate + ci.t_crit * ci.std_error;
  return ci;
}

}  // namespace perfwarden::stats
