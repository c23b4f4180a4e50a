// SPDX-License-Identifier: Apache-2.0
#include "stats/trimmed.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/bootstrap.h"
#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool ValidTrim(double trim) { return trim >= 0 && trim < 0.5; }

size_t Cut(size_t n, double trim) {
  return static_cast<size_t>(std::floor(trim * static_cast<double>(n)));
}

// Mean of the sorted values [g, n - g).
double MiddleMean(const std::vector<double>& sorted, size_t g) {
  const size_t n = sorted.size();
  return Mean(std::span<const double>(sorted.data() + g, n - 2 * g));
}

}  // namespace

double TrimmedMean(std::span<const double> x, double trim) {
  if (x.empty() || !ValidTrim(trim)) return kNaN;
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  return MiddleMean(sorted, Cut(sorted.size(), trim));
}

TrimmedTTestResult TrimmedTTest(std::span<const double> x, double trim, double mu) {
  TrimmedTTestResult r;
  r.n = x.size();
  r.g = ValidTrim(trim) ? Cut(r.n, trim) : 0;
  r.estimate = r.std_error = r.winsorized_sd = r.t = r.df = kNaN;
  r.p_two_sided = r.p_less = r.p_greater = kNaN;
  if (!ValidTrim(trim) || r.n < 2 * r.g + 2) return r;
  if (std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); })) return r;
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  r.estimate = MiddleMean(sorted, r.g);
  // The winsorized sample: its values are the sorted ones with both tails clamped.
  const double low = sorted[r.g];
  const double high = sorted[r.n - r.g - 1];
  for (double& v : sorted) v = std::clamp(v, low, high);
  r.winsorized_sd = StdDev(sorted);
  r.std_error = r.winsorized_sd / ((1 - 2 * trim) * std::sqrt(static_cast<double>(r.n)));
  r.df = static_cast<double>(r.n - 2 * r.g - 1);
  const double diff = r.estimate - mu;
  if (!std::isfinite(r.estimate)) {
    r.t = kNaN;
  } else if (r.std_error == 0) {
    r.t = diff == 0 ? kNaN : std::copysign(std::numeric_limits<double>::infinity(), diff);
  } else {
    r.t = diff / r.std_error;
  }
  if (std::isnan(r.t)) return r;
  r.p_two_sided = StudentTTwoSidedP(r.t, r.df);
  r.p_less = StudentTCdf(r.t, r.df);
  r.p_greater = StudentTSf(r.t, r.df);
  return r;
}

TInterval TrimmedMeanInterval(std::span<const double> x, double trim, double confidence) {
  TInterval out{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  const TrimmedTTestResult t = TrimmedTTest(x, trim);
  if (std::isnan(t.df) || !(confidence > 0 && confidence < 1) || !std::isfinite(t.estimate)) {
    return out;
  }
  out.estimate = t.estimate;
  out.std_error = t.std_error;
  out.df = t.df;
  out.t_crit = StudentTQuantile((1 + confidence) / 2, t.df);
  out.lower = t.estimate - out.t_crit * t.std_error;
  out.upper = t.estimate + out.t_crit * t.std_error;
  return out;
}

std::vector<double> BootstrapTrimmedMeans(std::span<const double> x, double trim, int resamples,
                                          uint64_t seed) {
  std::vector<double> out;
  if (x.empty() || resamples <= 0 || !ValidTrim(trim)) return out;
  Rng rng(seed);
  const auto n = static_cast<uint32_t>(x.size());
  const size_t g = Cut(n, trim);
  // A resample drawn as indices into the sorted values is sorted by counting how often each
  // index was drawn: its middle n - 2g order statistics are summed in one pass, without a sort.
  std::vector<double> sorted(x.begin(), x.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint32_t> counts(n);
  out.reserve(static_cast<size_t>(resamples));
  const size_t keep_end = n - g;
  for (int b = 0; b < resamples; ++b) {
    std::fill(counts.begin(), counts.end(), 0u);
    for (uint32_t i = 0; i < n; ++i) ++counts[rng.Below(n)];
    double sum = 0;
    size_t position = 0;  // order statistics before index k
    for (uint32_t k = 0; k < n && position < keep_end; ++k) {
      const size_t from = std::max(position, g);
      position += counts[k];
      const size_t to = std::min(position, keep_end);
      if (to > from) sum += sorted[k] * static_cast<double>(to - from);
    }
    out.push_back(sum / static_cast<double>(n - 2 * g));
  }
  return out;
}

}  // namespace perfwarden::stats
