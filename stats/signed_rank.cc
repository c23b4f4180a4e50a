// SPDX-License-Identifier: Apache-2.0
#include "stats/signed_rank.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Bounds of the exact distribution: steps (n * terms) and n, beyond which 2^-n leaves the normal
// doubles and the tails lose their digits.
constexpr uint64_t kMaxExactWork = uint64_t{1} << 28;
constexpr size_t kMaxExactN = 1000;

WilcoxonResult AllNaN(size_t zeros) {
  WilcoxonResult r;
  r.statistic = r.r_plus = r.r_minus = r.p_two_sided = r.z = kNaN;
  r.zeros = zeros;
  return r;
}

struct Ranks {
  double r_plus = 0;
  double r_minus = 0;
  double r_zero = 0;
  // Sum of t^3 - t over groups of tied |d|: with and without the group of zeros.
  double tie_term = 0;
  double tie_term_nonzero = 0;
};

// Mid-ranks of |d| (scipy.stats.rankdata "average"). Twice a mid-rank of the group at sorted
// positions [start, end) is start + 1 + end, an integer, so the sums are exact.
Ranks RankAbsolute(std::span<const double> d) {
  std::vector<size_t> order(d.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&d](size_t a, size_t b) { return std::fabs(d[a]) < std::fabs(d[b]); });
  uint64_t plus_twice = 0, minus_twice = 0, zero_twice = 0;
  Ranks ranks;
  size_t start = 0;
  while (start < order.size()) {
    const double magnitude = std::fabs(d[order[start]]);
    size_t end = start + 1;
    while (end < order.size() && std::fabs(d[order[end]]) == magnitude) ++end;
    const uint64_t twice_rank = start + 1 + end;
    for (size_t i = start; i < end; ++i) {
      const double v = d[order[i]];
      (v > 0 ? plus_twice : v < 0 ? minus_twice : zero_twice) += twice_rank;
    }
    const double t = static_cast<double>(end - start);
    if (end - start > 1) {
      ranks.tie_term += t * (t * t - 1);
      if (magnitude != 0) ranks.tie_term_nonzero += t * (t * t - 1);
    }
    start = end;
  }
  ranks.r_plus = static_cast<double>(plus_twice) / 2;
  ranks.r_minus = static_cast<double>(minus_twice) / 2;
  ranks.r_zero = static_cast<double>(zero_twice) / 2;
  return ranks;
}

// P(R+ <= k) under the null for n differences: SciPy's _get_wilcoxon_distr recursion (each
// step halves and shifts; exact in doubles for n <= 53) truncated at k, which only drops
// terms that lower ones never read.
double ExactLowerTail(size_t n, uint64_t k) {
  std::vector<double> c(k + 1, 0.0);
  c[0] = 1;
  for (uint64_t step = 1; step <= n; ++step) {
    for (uint64_t j = k + 1; j-- > 0;) {
      c[j] = c[j] * 0.5 + (j >= step ? c[j - step] * 0.5 : 0.0);
    }
  }
  double sum = 0;
  for (double v : c) sum += v;
  return sum;
}

}  // namespace

WilcoxonResult WilcoxonSignedRank(std::span<const double> d_in, const WilcoxonOptions& options) {
  const size_t zeros = static_cast<size_t>(std::count(d_in.begin(), d_in.end(), 0.0));
  if (d_in.empty() ||
      std::any_of(d_in.begin(), d_in.end(), [](double v) { return std::isnan(v); })) {
    return AllNaN(zeros);
  }
  bool exact = options.method == WilcoxonMethod::kExact ||
               (options.method == WilcoxonMethod::kAuto && d_in.size() <= 50);
  if (zeros > 0) exact = false;  // SciPy: the exact distribution knows no zeros

  std::vector<double> kept;
  std::span<const double> d = d_in;
  if (!exact) {
    if (options.zero_method != ZeroMethod::kZsplit && zeros == d_in.size()) {
      return AllNaN(zeros);  // SciPy raises: nothing is left to rank
    }
    if (options.zero_method == ZeroMethod::kWilcox && zeros > 0) {
      kept.reserve(d_in.size() - zeros);
      for (double v : d_in) {
        if (v != 0) kept.push_back(v);
      }
      d = kept;
    }
  }

  const Ranks ranks = RankAbsolute(d);
  WilcoxonResult r;
  r.zeros = zeros;
  r.ranked = d.size();
  r.r_plus = ranks.r_plus;
  r.r_minus = ranks.r_minus;
  if (options.zero_method == ZeroMethod::kZsplit) {
    r.r_plus += ranks.r_zero / 2;
    r.r_minus += ranks.r_zero / 2;
  }
  r.statistic = std::min(r.r_plus, r.r_minus);

  const size_t n = d.size();
  if (exact) {
    const uint64_t total = static_cast<uint64_t>(n) * (n + 1) / 2;
    // SciPy truncates R+ to an integer (with ties it may end in .5).
    const auto r_plus = static_cast<uint64_t>(r.r_plus);
    const uint64_t k = std::min(r_plus, total - r_plus);
    if (n <= kMaxExactN && static_cast<uint64_t>(n) * (k + 1) <= kMaxExactWork) {
      r.exact = true;
      r.z = kNaN;
      // At the centre SciPy answers 1; elsewhere twice the smaller tail (the distribution is
      // symmetric: P(R+ >= r) = P(R+ <= total - r)), capped at 1.
      r.p_two_sided = r_plus == total / 2 ? 1.0 : std::min(1.0, 2 * ExactLowerTail(n, k));
      return r;
    }
  }

  // The normal approximation, in the floating-point steps of SciPy's.
  const double count = static_cast<double>(n);
  double mn = count * (count + 1.) * 0.25;
  double se = count * (count + 1.) * (2. * count + 1.);
  double tie_term = ranks.tie_term;
  if (options.zero_method == ZeroMethod::kPratt) {
    const double z0 = static_cast<double>(zeros);
    mn -= z0 * (z0 + 1.) * 0.25;
    se -= z0 * (z0 + 1.) * (2. * z0 + 1.);
    tie_term = ranks.tie_term_nonzero;
  }
  se -= 0.5 * tie_term;
  se = std::sqrt(se / 24);
  double shift = 0;
  if (options.correction && r.statistic != mn) shift = r.statistic > mn ? 0.5 : -0.5;
  r.z = (r.statistic - mn - shift) / se;
  r.p_two_sided = 2. * NormalSf(std::fabs(r.z));
  r.exact = false;
  return r;
}

Result<WilcoxonResult> WilcoxonSignedRankPaired(std::span<const double> y,
                                                std::span<const double> x,
                                                const WilcoxonOptions& options) {
  if (y.size() != x.size()) {
    return InvalidArgument("the paired samples differ in length (" + std::to_string(y.size()) +
                           " and " + std::to_string(x.size()) + " values)");
  }
  std::vector<double> d(y.size());
  for (size_t i = 0; i < y.size(); ++i) d[i] = y[i] - x[i];
  return WilcoxonSignedRank(d, options);
}

double WilcoxonMinTwoSidedP(int n) {
  if (n < 1) return kNaN;
  return std::min(1.0, std::ldexp(2.0, -n));
}

}  // namespace perfwarden::stats
