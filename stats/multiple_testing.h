// SPDX-License-Identifier: Apache-2.0
// Multiple-comparison corrections of p-values, as statsmodels' multipletests computes them.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace perfwarden::stats {

enum class Correction {
  kNone,
  kBonferroni,
  kSidak,
  kHolm,  // Holm step-down (family-wise error rate)
  kHolmSidak,
  kBenjaminiHochberg,   // "fdr_bh" (false discovery rate)
  kBenjaminiYekutieli,  // "fdr_by"
};

// Parses statsmodels' names: "bonferroni", "sidak", "holm", "holm-sidak", "fdr_bh", "fdr_by",
// and "none". nullopt when unknown.
std::optional<Correction> ParseCorrection(std::string_view name);

// Adjusted p-values in input order, capped at 1 and monotone in the method's order.
// NaN entries stay NaN and do not count towards the number of tests m. Empty in, empty out.
std::vector<double> AdjustPValues(std::span<const double> p_values, Correction method);

}  // namespace perfwarden::stats
