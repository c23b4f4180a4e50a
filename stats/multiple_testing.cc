// SPDX-License-Identifier: Apache-2.0
#include "stats/multiple_testing.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace perfwarden::stats {
namespace {

// numpy's pairwise summation (np.sum on a contiguous float64 array), for statsmodels' BY
// harmonic number.
double NumpySum(const double* a, size_t n) {
  if (n < 8) {
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  size_t half = n / 2;
  half -= half % 8;
  return NumpySum(a, half) + NumpySum(a + half, n - half);
}

// The adjustments on ascending p-values, with statsmodels 0.13's floating-point steps
// (multipletests and fdrcorrection), so results agree to the last bit or two.
std::vector<double> AdjustSorted(const std::vector<double>& p, Correction method) {
  const size_t m = p.size();
  const double m_d = static_cast<double>(m);
  std::vector<double> adjusted(m);
  switch (method) {
    case Correction::kNone:
      adjusted = p;
      break;
    case Correction::kBonferroni:
      for (size_t i = 0; i < m; ++i) adjusted[i] = p[i] * m_d;
      break;
    case Correction::kSidak:
      // -expm1(m log1p(-p)) rather than 1 - (1 - p)^m keeps tiny p-values (1e-300 -> 4e-300).
      for (size_t i = 0; i < m; ++i) adjusted[i] = -std::expm1(m_d * std::log1p(-p[i]));
      break;
    case Correction::kHolm:
      for (size_t i = 0; i < m; ++i) adjusted[i] = p[i] * static_cast<double>(m - i);
      for (size_t i = 1; i < m; ++i) adjusted[i] = std::max(adjusted[i], adjusted[i - 1]);
      break;
    case Correction::kHolmSidak:
      for (size_t i = 0; i < m; ++i) {
        adjusted[i] = -std::expm1(static_cast<double>(m - i) * std::log1p(-p[i]));
      }
      for (size_t i = 1; i < m; ++i) adjusted[i] = std::max(adjusted[i], adjusted[i - 1]);
      break;
    case Correction::kBenjaminiHochberg:
    case Correction::kBenjaminiYekutieli: {
      // statsmodels divides by the ecdf factor (i + 1) / m, itself divided by the harmonic
      // number for BY, rather than multiplying by m / (i + 1): the last bits differ.
      double harmonic = 1.0;
      if (method == Correction::kBenjaminiYekutieli) {
        std::vector<double> reciprocals(m);
        for (size_t i = 0; i < m; ++i) reciprocals[i] = 1.0 / static_cast<double>(i + 1);
        harmonic = NumpySum(reciprocals.data(), m);
      }
      for (size_t i = 0; i < m; ++i) {
        double ecdf = static_cast<double>(i + 1) / m_d;
        if (method == Correction::kBenjaminiYekutieli) ecdf /= harmonic;
        adjusted[i] = p[i] / ecdf;
      }
      for (size_t i = m; i-- > 1;) adjusted[i - 1] = std::min(adjusted[i - 1], adjusted[i]);
      break;
    }
  }
  for (double& a : adjusted) a = std::min(a, 1.0);
  return adjusted;
}

}  // namespace

std::optional<Correction> ParseCorrection(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "none") return Correction::kNone;
  if (lower == "bonferroni") return Correction::kBonferroni;
  if (lower == "sidak") return Correction::kSidak;
  if (lower == "holm") return Correction::kHolm;
  if (lower == "holm-sidak") return Correction::kHolmSidak;
  if (lower == "fdr_bh") return Correction::kBenjaminiHochberg;
  if (lower == "fdr_by") return Correction::kBenjaminiYekutieli;
  return std::nullopt;
}

std::vector<double> AdjustPValues(std::span<const double> p_values, Correction method) {
  std::vector<double> result(p_values.begin(), p_values.end());
  std::vector<size_t> order;
  order.reserve(p_values.size());
  for (size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i])) order.push_back(i);
  }
  // Ties get equal adjusted values whatever their order, so a stable sort suffices to match
  // numpy's argsort.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p_values[a] < p_values[b]; });
  std::vector<double> sorted(order.size());
  for (size_t i = 0; i < order.size(); ++i) sorted[i] = p_values[order[i]];
  const std::vector<double> adjusted = AdjustSorted(sorted, method);
  for (size_t i = 0; i < order.size(); ++i) result[order[i]] = adjusted[i];
  return result;
}

}  // namespace perfwarden::stats
