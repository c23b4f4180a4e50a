// SPDX-License-Identifier: Apache-2.0
#include "stats/group_sequential.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "stats/distributions.h"

namespace perfwarden::stats {
namespace {

// Grid points of the sub-density of the partial sum at each look (odd, for Simpson's rule: 201
// points put the levels within 1e-6 relative of a 601-point grid's, and the published
// Lan-DeMets boundaries within 1e-4 in z), and how many standard deviations below zero the grid
// starts (the mass left out is ~1e-15).
constexpr int kGridPoints = 201;
constexpr double kSpan = 8.0;

double NormalDensity(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }

// The sub-density of S_k = the sum of the first I_k unit-variance increments on the part of the
// line where no look so far has rejected, on an even grid with Simpson weights.
struct Density {
  std::vector<double> x;
  std::vector<double> weighted;  // f(x_j) times the integration weight of x_j

  void Fill(double lower, double upper, const auto& density) {
    x.resize(kGridPoints);
    weighted.resize(kGridPoints);
    const double h = (upper - lower) / (kGridPoints - 1);
    for (int j = 0; j < kGridPoints; ++j) {
      x[j] = lower + h * j;
      const double simpson = (j == 0 || j == kGridPoints - 1) ? 1.0 : (j % 2 == 1 ? 4.0 : 2.0);
      weighted[j] = density(x[j]) * simpson * h / 3;
    }
  }
};

// P(no earlier rejection, S_k >= b) for S_k = S_{k-1} + N(0, sd^2).
double Crossing(const Density& previous, double b, double sd) {
  double sum = 0;
  for (size_t j = 0; j < previous.x.size(); ++j) {
    sum += previous.weighted[j] * NormalSf((b - previous.x[j]) / sd);
  }
  return sum;
}

}  // namespace

std::string_view SpendingName(Spending spending) {
  switch (spending) {
    case Spending::kPocock:
      return "pocock";
    case Spending::kOBrienFleming:
      return "obf";
    case Spending::kBonferroni:
      return "bonferroni";
  }
  return "pocock";
}

std::optional<Spending> ParseSpending(std::string_view name) {
  if (name == "pocock") return Spending::kPocock;
  if (name == "obf" || name == "obrien-fleming") return Spending::kOBrienFleming;
  if (name == "bonferroni") return Spending::kBonferroni;
  return std::nullopt;
}

double SpentAlpha(Spending spending, double alpha, double t) {
  t = std::clamp(t, 0.0, 1.0);
  if (t == 0) return 0;
  switch (spending) {
    case Spending::kPocock:
      return alpha * std::log1p((M_E - 1) * t);
    case Spending::kOBrienFleming:
      return std::min(alpha, 2 * NormalSf(-NormalQuantile(alpha / 2) / std::sqrt(t)));
    case Spending::kBonferroni:
      return alpha * t;
  }
  return 0;
}

// NominalLevels without the memo.
static std::vector<double> ComputeLevels(Spending spending, double alpha,
                                         std::span<const int> information) {
  const size_t looks = information.size();
  if (!(alpha > 0 && alpha < 1) || looks == 0 || information.front() <= 0) return {};
  for (size_t k = 1; k < looks; ++k) {
    if (information[k] <= information[k - 1]) return {};
  }
  std::vector<double> levels(looks);
  if (spending == Spending::kBonferroni) {
    std::fill(levels.begin(), levels.end(), alpha / static_cast<double>(looks));
    return levels;
  }
  const double total = information.back();
  double spent_before = 0;
  Density density;
  for (size_t k = 0; k < looks; ++k) {
    const double info = information[k];
    const double spent = SpentAlpha(spending, alpha, info / total);
    const double target = std::max(0.0, spent - spent_before);
    spent_before = spent;
    const double lower = -kSpan * std::sqrt(info);
    double b = 0;  // the rejection boundary of S_k
    if (k == 0) {
      levels[0] = target;
      b = target > 0 ? -NormalQuantile(target) * std::sqrt(info) : kSpan * std::sqrt(info);
      density.Fill(lower, b,
                   [&](double s) { return NormalDensity(s / std::sqrt(info)) / std::sqrt(info); });
      continue;
    }
    const double sd = std::sqrt(info - information[k - 1]);
    const double top = density.x.back() + kSpan * sd;  // above it nothing is left to cross
    if (target > 0) {
      // Crossing() falls from the mass still undecided to 0 as b rises: bisect.
      double low = density.x.front() - kSpan * sd, high = top;
      for (int i = 0; i < 80 && high - low > 1e-9 * (1 + std::fabs(high)); ++i) {
        const double mid = 0.5 * (low + high);
        (Crossing(density, mid, sd) > target ? low : high) = mid;
      }
      b = 0.5 * (low + high);
      levels[k] = NormalSf(b / std::sqrt(info));
    } else {
      b = top;
      levels[k] = 0;
    }
    if (k + 1 == looks) break;
    const Density previous = density;
    density.Fill(std::min(lower, b - 1), b, [&](double s) {
      double sum = 0;
      for (size_t j = 0; j < previous.x.size(); ++j) {
        sum += previous.weighted[j] * NormalDensity((s - previous.x[j]) / sd);
      }
      return sum / sd;
    });
  }
  return levels;
}

std::vector<double> NominalLevels(Spending spending, double alpha,
                                  std::span<const int> information) {
  // Pure, and asked the same few questions again and again (every look of every gate, every
  // replay): remembered process-wide, a bounded memo behind a mutex.
  struct Key {
    Spending spending;
    double alpha;
    std::vector<int> information;
    bool operator<(const Key& o) const {
      return std::tie(spending, alpha, information) < std::tie(o.spending, o.alpha, o.information);
    }
  };
  static std::mutex mutex;
  static std::map<Key, std::vector<double>> memo;
  Key key{spending, alpha, std::vector<int>(information.begin(), information.end())};
  {
    std::lock_guard lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  std::vector<double> levels = ComputeLevels(spending, alpha, information);
  std::lock_guard lock(mutex);
  if (memo.size() >= 4096) memo.clear();
  memo.emplace(std::move(key), levels);
  return levels;
}

double NominalLevelTable::Level(double alpha, int look) {
  if (look < 0 || look >= static_cast<int>(information_.size())) return 0;
  for (const auto& [known_alpha, levels] : known_) {
    if (known_alpha == alpha) return levels.empty() ? 0 : levels[static_cast<size_t>(look)];
  }
  known_.emplace_back(alpha, NominalLevels(spending_, alpha, information_));
  const std::vector<double>& levels = known_.back().second;
  return levels.empty() ? 0 : levels[static_cast<size_t>(look)];
}

}  // namespace perfwarden::stats
