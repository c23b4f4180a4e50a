// SPDX-License-Identifier: Apache-2.0
#include "stats/mean_shift.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "stats/descriptive.h"

namespace perfwarden::stats {
namespace {

constexpr std::size_t kClipHalfWidth = 5;  // the clipping median is over 11 points

}  // namespace

double DifferenceSigma(std::span<const double> x) {
  if (x.size() < 3) return 0;
  std::vector<double> d(x.size() - 1);
  for (std::size_t i = 0; i + 1 < x.size(); ++i) d[i] = x[i + 1] - x[i];
  double sigma = Mad(d, 1.4826) / std::sqrt(2.0);
  if (!(sigma > 0)) {
    const double sd = StdDev(d);
    sigma = std::isfinite(sd) ? sd / std::sqrt(2.0) : 0.0;
  }
  return sigma > 0 ? sigma : 0.0;
}

std::vector<double> ClipOutliers(std::span<const double> x, double k, double sigma) {
  std::vector<double> out(x.begin(), x.end());
  std::array<double, 2 * kClipHalfWidth + 1> window;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::size_t lo = i > kClipHalfWidth ? i - kClipHalfWidth : 0;
    const std::size_t hi = std::min(x.size(), i + kClipHalfWidth + 1);
    const std::size_t w = hi - lo;
    // The median is within k * sigma of x[i] (nothing to clip) when more than half the window
    // is at most x[i] + k * sigma and more than half at least x[i] - k * sigma: counting is
    // cheap, the median only needed near outliers.
    std::size_t below = 0, above = 0;
    for (std::size_t j = lo; j < hi; ++j) {
      below += x[j] <= x[i] + k * sigma;
      above += x[j] >= x[i] - k * sigma;
    }
    if (below > w / 2 && above > w / 2) continue;
    std::copy(x.begin() + lo, x.begin() + hi, window.begin());
    // The median (the mean of the middle two for an even count, as Median()), without
    // allocating: this runs on every point of every analysis.
    const auto mid = window.begin() + w / 2;
    std::nth_element(window.begin(), mid, window.begin() + w);
    double m = *mid;
    if (w % 2 == 0) m = (m + *std::max_element(window.begin(), mid)) / 2;
    out[i] = std::clamp(x[i], m - k * sigma, m + k * sigma);
  }
  return out;
}

std::vector<std::size_t> MeanShiftChangePoints(std::span<const double> x,
                                               const MeanShiftOptions& options) {
  const std::size_t n = x.size();
  const std::size_t m = std::max<std::size_t>(options.min_segment, 1);
  if (n < 2 * m) return {};
  // The scale of the series as given: clipping moves a few differences, not their MAD.
  const double sigma = DifferenceSigma(x);
  if (!(sigma > 0)) return {};
  std::vector<double> clipped;
  if (options.clip_sigmas > 0) {
    clipped = ClipOutliers(x, options.clip_sigmas, sigma);
    x = clipped;
  }
  // Prefix sums of the standardised series (centred on its first point: the digits stay).
  const double centre = x[0];
  std::vector<double> s1(n + 1, 0.0), s2(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = (x[i] - centre) / sigma;
    s1[i + 1] = s1[i] + z;
    s2[i + 1] = s2[i] + z * z;
  }
  auto cost = [&](std::size_t s, std::size_t t) {  // segment [s, t)
    const double sum = s1[t] - s1[s];
    return std::max(0.0, s2[t] - s2[s] - sum * sum / static_cast<double>(t - s));
  };
  const double beta = options.penalty * std::log(static_cast<double>(n));
  // Binary segmentation: split [s, t) where the cost falls most, while it falls by more than
  // the penalty, then each part likewise.
  std::vector<std::size_t> out;
  std::vector<std::pair<std::size_t, std::size_t>> pending = {{0, n}};
  while (!pending.empty()) {
    const auto [s, t] = pending.back();
    pending.pop_back();
    if (t - s < 2 * m) continue;
    const double whole = cost(s, t);
    double best = 0;
    std::size_t arg = 0;
    for (std::size_t k = s + m; k + m <= t; ++k) {
      const double gain = whole - cost(s, k) - cost(k, t);
      if (gain > best) {
        best = gain;
        arg = k;
      }
    }
    if (!(best > beta)) continue;
    out.push_back(arg);
    pending.push_back({s, arg});
    pending.push_back({arg, t});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace perfwarden::stats
