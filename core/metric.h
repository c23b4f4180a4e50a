// SPDX-License-Identifier: Apache-2.0
// What a metric is: its direction (is a smaller or a larger value better?) and unit.
// Every comparison in perfwarden is oriented by the direction, so "worse" means the same thing
// for a time (lower is better) and for a throughput (higher is better).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfwarden {

enum class Direction { kLowerIsBetter, kHigherIsBetter };

// "lower" / "higher".
std::string_view DirectionName(Direction direction);
// Accepts "lower", "higher" (and "lower_is_better", "higher_is_better"); nullopt otherwise.
std::optional<Direction> ParseDirection(std::string_view text);

// perfwarden always reports the plain relative change contender/base - 1; IsWorse() gives its
// sign a meaning. True when a plain relative change (contender/base - 1) is a change for the worse.
inline bool IsWorse(double change, Direction direction) {
  return direction == Direction::kLowerIsBetter ? change > 0 : change < 0;
}

}  // namespace perfwarden
