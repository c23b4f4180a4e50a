// SPDX-License-Identifier: Apache-2.0
#include "core/threshold_rule.h"

#include <fnmatch.h>

#include <charconv>
#include <cmath>

namespace perfwarden {

bool Glob(std::string_view pattern, std::string_view text) {
  return fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

bool ThresholdRule::Matches(std::string_view suite_name, std::string_view benchmark_name,
                            std::string_view metric_name) const {
  return (suite.empty() || Glob(suite, suite_name)) && Glob(benchmark, benchmark_name) &&
         Glob(metric, metric_name);
}

const ThresholdRule* FirstMatch(std::span<const ThresholdRule> rules, std::string_view suite,
                                std::string_view benchmark, std::string_view metric) {
  for (const ThresholdRule& rule : rules) {
    if (rule.Matches(suite, benchmark, metric)) return &rule;
  }
  return nullptr;
}

Result<double> ParseThreshold(std::string_view text) {
  std::string_view number = text;
  bool percent = false;
  if (!number.empty() && number.back() == '%') {
    percent = true;
    number.remove_suffix(1);
  }
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || number.empty() ||
      !std::isfinite(value) || value <= 0) {
    return InvalidArgument("'" + std::string(text) +
                               "' is not a positive percentage such as 5% or "
                               "a fraction such as 0.05",
                           "threshold");
  }
  if (!percent && value >= 1) {
    return InvalidArgument("'" + std::string(text) + "' is ambiguous: write " + std::string(text) +
                               "% for percent, or a fraction below 1",
                           "threshold");
  }
  return percent ? value / 100 : value;
}

}  // namespace perfwarden
