// SPDX-License-Identifier: Apache-2.0
// The paired measurement: what `perfwarden gate --paired` measured on its host — the baseline
// commit and the pull request run interleaved in blocks, each block both sides (a few repetitions
// each) in an order drawn per block — with the parameters it was judged by, so that the server
// can judge it with the same rules, store it as the verdict of the pull request's run and replay
// it. Strict, like every request body: unknown keys and values out of range are
// kInvalidArgument naming the field ("series[2].blocks[4].head[1]"); nothing partial is accepted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "wire/run_upload.h"
#include "wire/verdict_request.h"

namespace perfwarden::wire {

// One block of one series: each side's repetitions, and which side ran first. A side that did
// not report the series in that block has no values there.
struct PairedBlock {
  bool base_first = false;
  std::vector<double> base;
  std::vector<double> head;

  bool operator==(const PairedBlock&) const = default;
};

struct PairedSeries {
  SeriesKey key;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<PairedBlock> blocks;  // in measuring order

  bool operator==(const PairedSeries&) const = default;
};

// How the blocks were measured and looked at (stats/paired_design.h's policy and the runner's).
struct PairedDesign {
  int64_t repetitions = 1;       // of each side per block, 1..10000
  int64_t min_blocks = 10;       // the first look
  int64_t max_blocks = 50;       // the last look, at most kMaxPairedBlocks
  double growth = 1.5;           // between looks, (1, 10]
  std::string test = "trimmed";  // "trimmed", "t" or "wilcoxon"
  // How alpha is spent over the looks: "pocock", "obf" or "bonferroni" (stats/group_sequential.h;
  // absent on the wire: "pocock").
  std::string spending = "pocock";
  uint64_t seed = 0;  // of the order drawn per block, 0..2^63-1
  // Why the measurement ended: "decided" (no metric left undecided), "max_blocks" (the last
  // look), "time_budget" (the runner's budget ran out first).
  std::string stopped = "decided";

  bool operator==(const PairedDesign&) const = default;
};

inline constexpr int64_t kMaxPairedBlocks = 10000;

struct PairedMeasurement {
  std::string baseline_commit;  // 40 hex, lowered when decoded
  // `perfwarden gate --confirm`: the id of the run's newest (unpaired) verdict whose rows this
  // measurement re-measured; the stored verdict is that one with these series' rows judged
  // paired. Absent: the measurement is the whole verdict (`perfwarden gate --paired`).
  std::optional<int64_t> amends;
  Testbed testbed;            // the host both sides ran on, with its fingerprint
  VerdictRequest parameters;  // threshold, alpha, rules (as POST .../verdict takes them)
  PairedDesign design;
  std::vector<PairedSeries> series;

  bool operator==(const PairedMeasurement&) const = default;
};

// The words PairedDesign::stopped takes.
bool IsPairedStop(std::string_view word);

Result<PairedMeasurement> DecodePairedMeasurement(std::string_view json_text,
                                                  const DecodeLimits& limits = {});
std::string EncodePairedMeasurement(const PairedMeasurement& measurement);
// The "design" object, as the measurement and the paired verdict's "paired" object write it.
nlohmann::json EncodePairedDesign(const PairedDesign& design);

}  // namespace perfwarden::wire
