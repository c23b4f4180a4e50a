// SPDX-License-Identifier: Apache-2.0
// Group-sequential alpha spending for the paired gate's looks: a spending function (Lan & DeMets
// 1983: Pocock or O'Brien-Fleming type) says how much of a one-sided level is spent by each look,
// and the nominal per-look levels are solved so that a one-sided z statistic with independent
// increments (blocks) first crosses at look k with exactly the level spent there (Armitage,
// McPherson & Rowe's recursive integration). docs/statistics.md, "Looks and alpha spending".
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace perfwarden::stats {

enum class Spending {
  kPocock,         // "pocock": alpha * ln(1 + (e - 1) t), front-loaded (the default)
  kOBrienFleming,  // "obf": 2 (1 - Phi(z_{1-alpha/2} / sqrt t)), almost nothing early
  kBonferroni,     // "bonferroni": alpha / K at every look (needs nothing of the correlation)
};
std::string_view SpendingName(Spending spending);
std::optional<Spending> ParseSpending(std::string_view name);

// The one-sided level spent by information fraction t (0 <= t <= 1) out of `alpha`; for
// kBonferroni, alpha * t (its looks are equally spaced in spending, not in information).
double SpentAlpha(Spending spending, double alpha, double t);

// The nominal one-sided levels of the looks at `information` (block counts, increasing): a
// one-sided test at look k rejects when its p-value is at most levels[k]. For the Lan-DeMets
// functions the levels are solved on a Brownian statistic observed at the block counts, so
// that the probability under the null of a first rejection at look k is exactly
// SpentAlpha(t_k) - SpentAlpha(t_{k-1}), t_k = information[k] / information.back(), and the
// total over all looks is alpha; the correlation between looks makes each level larger than
// its increment (their sum). kBonferroni: alpha / K each. Empty when alpha is outside (0, 1)
// or the counts are not positive and increasing.
std::vector<double> NominalLevels(Spending spending, double alpha,
                                  std::span<const int> information);

// NominalLevels, remembered per alpha: the paired judge asks for the same few levels (Holm's
// alpha / m, alpha / (m - 1), ... and each metric's alpha) at every look.
class NominalLevelTable {
 public:
  NominalLevelTable(Spending spending, std::vector<int> information)
      : spending_(spending), information_(std::move(information)) {}
  // levels[look] for `alpha`; 0 for an invalid alpha or look.
  double Level(double alpha, int look);

 private:
  Spending spending_;
  std::vector<int> information_;
  std::vector<std::pair<double, std::vector<double>>> known_;
};

}  // namespace perfwarden::stats
