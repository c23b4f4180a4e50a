// SPDX-License-Identifier: Apache-2.0
// A planted paired measurement (wire/paired.h) for the paired verdict's tests: blocks of a
// baseline commit and a pull request with known differences, deterministic (no RNG library: a
// fixed integer hash), with a drift of the machine between blocks that pairing cancels.
// Header-only; a test that includes it links perfwarden_wire.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wire/paired.h"

namespace perfwarden::testing {

struct PlantedSeries {
  std::string benchmark;
  double center = 1000;      // the baseline's typical value
  double head_factor = 1.0;  // the pull request's: 1.10 is 10% slower (lower is better)
  double block_noise = 0;    // relative spread of the head's factor from block to block
  int base_blocks = -1;      // blocks in which the baseline measured it; -1: all
};

// A number in [-1, 1] fixed by its arguments.
inline double PlantedUnit(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e5f5ULL) * 0xbf58476d1ce4e5b9ULL ^
               (c + 0x94d049bb133111ebULL) * 0xd6e8feb86659fd39ULL;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 29;
  return static_cast<double>(x >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

// The default planted series: BM_Slow's head 10% slower; BM_Same unchanged; BM_Noisy unchanged
// but 20% noise from block to block (undecidable in a few blocks); BM_Few measured at the
// baseline in only 3 blocks; BM_Skip, which the default measurement's rule ignores.
inline std::vector<PlantedSeries> DefaultPlantedSeries() {
  return {{"BM_Slow", 1000, 1.10, 0, -1},
          {"BM_Same", 2000, 1.0, 0, -1},
          {"BM_Noisy", 3000, 1.0, 0.20, -1},
          {"BM_Few", 4000, 1.0, 0, 3},
          {"BM_Skip", 5000, 2.0, 0, -1}};
}

// `blocks` blocks of `repetitions` each side (0.4% noise within a block, a 3% drift of the
// machine between blocks shared by both sides), one look at `blocks` (min = max), threshold 5%,
// the rule {benchmark: BM_Skip, ignore: true}, stopped at "max_blocks".
inline wire::PairedMeasurement PlantedMeasurement(
    const std::string& baseline_commit,
    const std::vector<PlantedSeries>& series = DefaultPlantedSeries(), int blocks = 6,
    int repetitions = 5) {
  wire::PairedMeasurement m;
  m.baseline_commit = baseline_commit;
  m.testbed.name = "paired-bed";
  m.testbed.fingerprint_json = R"({"cpu_model":"planted"})";
  m.parameters.threshold = 0.05;
  ThresholdRule skip;
  skip.benchmark = "BM_Skip";
  skip.ignore = true;
  m.parameters.rules = {skip};
  m.design.repetitions = repetitions;
  m.design.min_blocks = blocks;
  m.design.max_blocks = blocks;
  m.design.growth = 1.5;
  m.design.test = "t";
  m.design.seed = 7;
  m.design.stopped = "max_blocks";
  for (size_t s = 0; s < series.size(); ++s) {
    const PlantedSeries& p = series[s];
    wire::PairedSeries out;
    out.key = {"planted", p.benchmark, "real_time"};
    out.unit = "ns";
    out.direction = Direction::kLowerIsBetter;
    for (int b = 0; b < blocks; ++b) {
      wire::PairedBlock block;
      block.base_first = PlantedUnit(s, b, 0) > 0;
      const double drift = 1 + 0.03 * PlantedUnit(99, b, 1);
      const double head = p.head_factor * (1 + p.block_noise * PlantedUnit(s, b, 2));
      for (int r = 0; r < repetitions; ++r) {
        if (p.base_blocks < 0 || b < p.base_blocks) {
          block.base.push_back(p.center * drift * (1 + 0.004 * PlantedUnit(s, b, 10 + r)));
        }
        block.head.push_back(p.center * drift * head * (1 + 0.004 * PlantedUnit(s, b, 50 + r)));
      }
      out.blocks.push_back(std::move(block));
    }
    m.series.push_back(std::move(out));
  }
  return m;
}

}  // namespace perfwarden::testing
