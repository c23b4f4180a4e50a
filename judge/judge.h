// SPDX-License-Identifier: Apache-2.0
// Two sides' series paired by their SeriesKey and judged together: the threshold rules (first
// match wins: a threshold and alpha, or IGNORED), NEW for a contender series the base lacks,
// which series gate (Gating: the others are REPORTED), the statistics (stats::JudgeMetrics, the
// correction across the gated pairs; the reported ones a family of their own), and the base's
// series left unpaired. Every caller that compares two sides goes through here:
// `perfwarden compare`, the gate's A/B confirmation, the server's verdict and its compare route.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "core/threshold_rule.h"
#include "judge/attribution.h"
#include "stats/prepared_sample.h"
#include "stats/verdict.h"

namespace perfwarden::judge {

// One side's series. Values are viewed, not copied: the caller keeps them alive while the
// Judgement is used.
struct Series {
  SeriesKey key;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::span<const double> values;
  // Base side: the values prepared once for many comparisons (a cached baseline); else null.
  std::shared_ptr<const stats::PreparedSample> prepared = nullptr;
  // Contender side: a threshold and alpha the caller has already resolved for this series
  // (> 0); they take precedence over the rules' and the policy's.
  double threshold = 0;
  double alpha = 0;
};

// What makes two series a pair: the key alone, or the key and the unit (a series stored in a
// second unit is another series).
enum class PairBy { kKey, kKeyAndUnit };

// The order of the rows: the contender's, or the base's (pairs in base order, then the
// contender's series without a base in contender order).
enum class RowOrder { kContender, kBase };

// The name the statistics know a pair by: its bootstrap seed derives from it, and comparison
// reports print it.
enum class StatsName {
  kBenchmark,       // "BM_Sort/1024"
  kSuiteBenchmark,  // "core/BM_Sort/1024"
  kSeries,          // "core/BM_Sort/1024 real_time" (see SeriesName)
};
std::string NameOf(const SeriesKey& key, StatsName style);
// "suite/benchmark metric": the name of a series in verdicts, and its bootstrap seed's source.
std::string SeriesName(const SeriesKey& key);

struct JudgeOptions {
  stats::VerdictPolicy policy;
  std::span<const ThresholdRule> rules;  // in order; the first that matches applies
  stats::JudgeOutputs outputs = stats::JudgeOutputs::kAll;
  PairBy pair_by = PairBy::kKey;
  RowOrder order = RowOrder::kContender;
  StatsName name = StatsName::kSeries;
};

enum class RowKind { kJudged, kIgnored, kNew };

inline constexpr std::string_view kIgnoredReason = "ignored by a threshold rule";
inline constexpr std::string_view kNoBaseReason = "no baseline";
inline constexpr std::string_view kNotInBaseReason = "not in the baseline";

// The threshold rule a series falls under (the first that matches its key) and what it is judged
// with: the series' own threshold and alpha when > 0, else the rule's, else the policy's threshold
// (alpha 0: the policy's).
struct AppliedRule {
  const ThresholdRule* rule = nullptr;
  double threshold = 0;
  double alpha = 0;
  bool ignored = false;
};
AppliedRule ApplyRules(std::span<const ThresholdRule> rules, const SeriesKey& key,
                       double own_threshold, double own_alpha, double policy_threshold);

// The metric a benchmark gates on by default: Google Benchmark's real_time, a training
// benchmark's step_time, a command's wall_time.
bool IsPrimaryMetric(std::string_view metric);

// Which series gate: the matching rule's `gate` where it says; else a benchmark's primary metric
// alone, or every metric of a benchmark that has none of them (a run posted with metrics of its
// own). The others are judged and REPORTED: shown with their change, never failing, outside the
// gated metrics' multiple-testing family. Built from every series of the run, then asked per
// series.
// A REPORTED row's reason: "not gated; shows REGRESSION: " + the statistics' reason.
std::string ReportedReason(std::string_view shows, std::string_view reason);

class Gating {
 public:
  void Add(const SeriesKey& key);  // before any Gates()
  bool Gates(const SeriesKey& key, const ThresholdRule* rule) const;

 private:
  std::set<std::pair<std::string, std::string>> with_primary_;  // suite, benchmark
};

// One contender series. A contender series whose key (and unit) the base lacks, or whose base
// series an earlier contender series of the same key already took, is NEW; a series a rule
// ignores is IGNORED whether or not the base has it (it still takes its base series).
struct Row {
  RowKind kind = RowKind::kNew;
  const Series* contender = nullptr;    // never null
  const Series* base = nullptr;         // the paired base series; null when none
  const ThresholdRule* rule = nullptr;  // the first rule that matched; null when none
  double threshold = 0;                 // the one applied: the series', the rule's, or the policy's
  double alpha = 0;                     // the series' or the rule's; 0: the policy's
  bool gated = true;                    // false: judged, REPORTED (Gating)
  // kJudged: index into Judgement::verdicts.metrics (gated) or Judgement::reported.metrics.
  size_t verdict = 0;
  std::string_view reason;  // kIgnored and kNew: why (a judged row's is its verdict's)
};

struct Judgement {
  std::vector<Row> rows;
  stats::ComparisonVerdicts verdicts;  // the gated judged rows', in row order
  // The reported rows', in row order: a family of their own (Holm among them), never gating.
  stats::ComparisonVerdicts reported;
  // Base series no contender series took, in base order. Of base series sharing a key (and
  // unit) only the first can pair; the others are in neither list.
  std::vector<const Series*> only_in_base;
  int ignored = 0;
  int added = 0;  // NEW rows

  // The verdict of a judged row; nullptr for IGNORED and NEW.
  const stats::MetricVerdict* VerdictOf(const Row& row) const {
    if (row.kind != RowKind::kJudged) return nullptr;
    return &(row.gated ? verdicts : reported).metrics[row.verdict];
  }
  // "REGRESSION", ..., "IGNORED" or "NEW".
  std::string_view VerdictName(const Row& row) const;
};

// Pairs and judges. `base` nullopt: there is no base at all (every row NEW with "no baseline",
// unless ignored). Errors: stats::JudgeMetrics's (an invalid policy, non-finite values).
Result<Judgement> JudgeSeries(std::optional<std::span<const Series>> base,
                              std::span<const Series> contender, const JudgeOptions& options);

// The rows as the attribution rules read them (one per row, in row order); they view the
// Judgement's series and strings.
std::vector<AttributionInput> AttributionInputs(const Judgement& judgement);

}  // namespace perfwarden::judge
