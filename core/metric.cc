// SPDX-License-Identifier: Apache-2.0
#include "core/metric.h"

namespace perfwarden {

std::string_view DirectionName(Direction direction) {
  return direction == Direction::kLowerIsBetter ? "lower" : "higher";
}

std::optional<Direction> ParseDirection(std::string_view text) {
  if (text == "lower" || text == "lower_is_better") return Direction::kLowerIsBetter;
  if (text == "higher" || text == "higher_is_better") return Direction::kHigherIsBetter;
  return std::nullopt;
}

}  // namespace perfwarden
