// SPDX-License-Identifier: Apache-2.0
#include "stats/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool HasNaN(std::span<const double> v) {
  return std::any_of(v.begin(), v.end(), [](double d) { return std::isnan(d); });
}

// Counts of the exact null distribution are integers up to C(n1 + n2, n1); 128 bits hold them
// exactly whenever the auto rule picks the exact method (8 vs up to ~2.4e5 values); beyond
// that a scaled long double recurrence takes over.
__extension__ typedef unsigned __int128 Uint128;

// The exact distribution costs min(n1, n2) * (min(U1, U2) + 1) steps and min(U1, U2) + 1
// coefficients of memory. Past these bounds (e.g. 8 vs millions with equal medians) the
// asymptotic method is used instead, so a caller can never stall the gate or exhaust memory.
constexpr uint64_t kMaxExactTerms = uint64_t{1} << 22;
constexpr uint64_t kMaxExactWork = uint64_t{1} << 31;

struct Ranking {
  double u1 = 0;
  bool has_ties = false;
  bool all_equal = false;
  double tie_term = 0;  // sum over tie groups of t^3 - t
};

// Midranks of the pooled sample (scipy.stats.rankdata "average"), merging the two sorted sides.
// Twice the midrank of a group at pooled positions [i, j) is i + 1 + j, an integer, so R1 and
// U1 are computed exactly.
Ranking RankSorted(std::span<const double> x, std::span<const double> y) {
  Ranking ranking;
  const size_t n = x.size() + y.size();
  Uint128 r1_twice = 0;
  Uint128 tie_term = 0;
  size_t i = 0, j = 0, start = 0;
  while (start < n) {
    const double value = (j == y.size() || (i < x.size() && x[i] <= y[j])) ? x[i] : y[j];
    uint64_t from_x = 0;
    while (i < x.size() && x[i] == value) ++i, ++from_x;
    uint64_t from_y = 0;
    while (j < y.size() && y[j] == value) ++j, ++from_y;
    const size_t end = start + from_x + from_y;
    r1_twice += Uint128{from_x} * (start + 1 + end);
    const Uint128 t = end - start;
    if (t > 1) {
      ranking.has_ties = true;
      tie_term += t * t * t - t;
    }
    ranking.all_equal = (start == 0 && end == n);
    start = end;
  }
  const Uint128 n1 = x.size();
  ranking.u1 = static_cast<double>(r1_twice - n1 * (n1 + 1)) / 2.0;
  ranking.tie_term = static_cast<double>(tie_term);
  return ranking;
}

// Coefficients 0..k_max of the Gaussian binomial [n + m choose m]_q: coefficient k counts the
// arrangements with U = k. Built as prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); every step only
// reads lower coefficients, so truncating at k_max is exact. In Uint128 the intermediate
// negative values wrap modulo 2^128 and the final counts (all < 2^128) come out exact. In
// long double each step is scaled by i / (n + i), so the final coefficients are probabilities
// and nothing overflows; low coefficients (the small tails) never see a subtraction.
template <typename T>
std::vector<T> UDistributionPrefix(uint64_t m, uint64_t n, uint64_t k_max) {
  std::vector<T> c(k_max + 1, T{0});
  c[0] = T{1};
  for (uint64_t i = 1; i <= m; ++i) {
    const uint64_t shift = n + i;
    if (k_max >= shift) {
      for (uint64_t k = k_max; k >= shift; --k) c[k] -= c[k - shift];
    }
    for (uint64_t k = i; k <= k_max; ++k) c[k] += c[k - i];
    if constexpr (std::is_floating_point_v<T>) {
      const T scale = static_cast<T>(i) / static_cast<T>(shift);
      for (T& v : c) v *= scale;
    }
  }
  return c;
}

// C(n + m, m) when it fits in 128 bits.
bool BinomialFits(uint64_t m, uint64_t n, Uint128* out) {
  Uint128 c = 1;
  for (uint64_t i = 1; i <= m; ++i) {
    // c * (n + i) / i is an integer; dividing c by g = gcd(c, i) first leaves i / g dividing
    // n + i, so no intermediate exceeds the result.
    uint64_t a = static_cast<uint64_t>(c % i);
    uint64_t g = i;
    while (a != 0) {
      const uint64_t r = g % a;
      g = a;
      a = r;
    }
    const Uint128 factor = (n + i) / (i / g);
    if (__builtin_mul_overflow(c / g, factor, &c)) return false;
  }
  *out = c;
  return true;
}

// P(U >= u) for u in 0..mn from the lower cdf known up to index k_max = min(U1, U2): by
// symmetry P(U >= u) = P(U <= mn - u), else 1 - P(U <= u - 1).
struct ExactTail {
  uint64_t mn;
  std::vector<long double> cdf_prob;  // long double path
  std::vector<Uint128> cdf_count;     // integer path
  Uint128 total = 0;
  bool integer = false;

  double Sf(uint64_t u) const {
    if (mn - u < Size()) return Cdf(mn - u, false);
    if (u == 0) return 1.0;
    return Cdf(u - 1, true);
  }
  size_t Size() const { return integer ? cdf_count.size() : cdf_prob.size(); }
  double Cdf(uint64_t k, bool complement) const {
    if (integer) {
      const Uint128 count = complement ? total - cdf_count[k] : cdf_count[k];
      return static_cast<double>(static_cast<long double>(count) / static_cast<long double>(total));
    }
    const long double p = complement ? 1.0L - cdf_prob[k] : cdf_prob[k];
    return static_cast<double>(std::clamp(p, 0.0L, 1.0L));
  }
};

ExactTail BuildExactTail(uint64_t n1, uint64_t n2, uint64_t k_max) {
  const uint64_t m = std::min(n1, n2);
  const uint64_t n = std::max(n1, n2);
  ExactTail tail;
  tail.mn = n1 * n2;
  if (BinomialFits(m, n, &tail.total)) {
    tail.integer = true;
    tail.cdf_count = UDistributionPrefix<Uint128>(m, n, k_max);
    for (size_t k = 1; k < tail.cdf_count.size(); ++k) {
      tail.cdf_count[k] += tail.cdf_count[k - 1];
    }
  } else {
    tail.cdf_prob = UDistributionPrefix<long double>(m, n, k_max);
    for (size_t k = 1; k < tail.cdf_prob.size(); ++k) tail.cdf_prob[k] += tail.cdf_prob[k - 1];
  }
  return tail;
}

bool ExactAffordable(uint64_t n1, uint64_t n2, uint64_t k_max) {
  const uint64_t terms = k_max + 1;
  if (terms > kMaxExactTerms) return false;
  return std::min(n1, n2) <= kMaxExactWork / terms;
}

}  // namespace

double MannWhitneyResult::PValue(Alternative alternative) const {
  switch (alternative) {
    case Alternative::kTwoSided:
      return p_two_sided;
    case Alternative::kLess:
      return p_less;
    case Alternative::kGreater:
      return p_greater;
  }
  return kNaN;
}

MannWhitneyResult MannWhitneyU(std::span<const double> x, std::span<const double> y,
                               MwuMethod method, bool continuity) {
  if (HasNaN(x) || HasNaN(y)) return MannWhitneyUSorted(x, y, method, continuity);  // all NaN
  std::vector<double> sorted_x(x.begin(), x.end());
  std::vector<double> sorted_y(y.begin(), y.end());
  std::sort(sorted_x.begin(), sorted_x.end());
  std::sort(sorted_y.begin(), sorted_y.end());
  return MannWhitneyUSorted(sorted_x, sorted_y, method, continuity);
}

MannWhitneyResult MannWhitneyUSorted(std::span<const double> x, std::span<const double> y,
                                     MwuMethod method, bool continuity) {
  MannWhitneyResult result;
  if (x.empty() || y.empty() || HasNaN(x) || HasNaN(y)) {
    result.u1 = result.u2 = kNaN;
    result.p_two_sided = result.p_less = result.p_greater = kNaN;
    return result;
  }

  const uint64_t n1 = x.size();
  const uint64_t n2 = y.size();
  const Ranking ranking = RankSorted(x, y);
  const double mn = static_cast<double>(n1) * static_cast<double>(n2);
  result.u1 = ranking.u1;
  result.u2 = mn - ranking.u1;
  result.has_ties = ranking.has_ties;

  bool exact = false;
  if (method == MwuMethod::kAuto) {
    exact = std::min(n1, n2) <= 8 && !ranking.has_ties;
  } else if (method == MwuMethod::kExact) {
    exact = !ranking.has_ties;
  }
  // Without ties U1 and U2 are integers.
  const uint64_t u_min = static_cast<uint64_t>(std::min(result.u1, result.u2));
  if (exact && ExactAffordable(n1, n2, u_min)) {
    const ExactTail tail = BuildExactTail(n1, n2, u_min);
    const uint64_t u1 = static_cast<uint64_t>(result.u1);
    const uint64_t u2 = static_cast<uint64_t>(result.u2);
    result.exact = true;
    result.p_greater = tail.Sf(u1);
    result.p_less = tail.Sf(u2);
    // SciPy doubles the tail at max(U1, U2) and clips; at U1 == U2 that exceeds 1.
    result.p_two_sided = std::min(1.0, 2.0 * tail.Sf(std::max(u1, u2)));
    return result;
  }

  // Normal approximation with SciPy's tie-corrected variance; the same floating-point steps as
  // scipy.stats._mannwhitneyu._get_mwu_z.
  const double n = static_cast<double>(n1 + n2);
  const double variance_factor =
      ranking.all_equal ? 0.0 : (n + 1) - ranking.tie_term / (n * (n - 1));
  const double s = std::sqrt(mn / 12 * variance_factor);
  const double mu = mn / 2;
  // With zero variance (all values equal) z is -inf with the continuity correction (p = 1)
  // and 0/0 = NaN without it, exactly as SciPy returns.
  const auto z = [&](double u) { return (u - mu - (continuity ? 0.5 : 0.0)) / s; };
  result.p_greater = std::clamp(NormalSf(z(result.u1)), 0.0, 1.0);
  result.p_less = std::clamp(NormalSf(z(result.u2)), 0.0, 1.0);
  result.p_two_sided = std::clamp(2.0 * NormalSf(z(std::max(result.u1, result.u2))), 0.0, 1.0);
  return result;
}

double MannWhitneyMinTwoSidedP(int n1, int n2) {
  if (n1 < 1 || n2 < 1) return kNaN;
  const int m = std::min(n1, n2);
  const long double n = std::max(n1, n2);
  long double binomial = 1;
  for (int i = 1; i <= m && std::isfinite(binomial); ++i) {
    binomial = binomial * (n + static_cast<long double>(i)) / static_cast<long double>(i);
  }
  return static_cast<double>(std::min(1.0L, 2.0L / binomial));
}

}  // namespace perfwarden::stats
