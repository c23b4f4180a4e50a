// SPDX-License-Identifier: Apache-2.0
// The `results` of a run upload for e2e tests of history and verdicts: suite "s", one real_time
// series (ns, lower is better) per (benchmark, level), ten repetitions spread ±0.5% around the
// level by a fixed pattern. Tests put their own run-to-run noise and steps into the levels.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace perfwarden::testing {

inline nlohmann::json LevelResults(const std::vector<std::pair<std::string, double>>& levels) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& [name, level] : levels) {
    std::vector<double> values;
    for (int i = 0; i < 10; ++i) values.push_back(level * (1 + 0.001 * ((i * 7) % 11 - 5)));
    results.push_back({{"suite", "s"},
                       {"benchmark", name},
                       {"metric", "real_time"},
                       {"unit", "ns"},
                       {"direction", "lower"},
                       {"values", values}});
  }
  return results;
}

}  // namespace perfwarden::testing
