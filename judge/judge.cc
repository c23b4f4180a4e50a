// SPDX-License-Identifier: Apache-2.0
#include "judge/judge.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <map>

namespace perfwarden::judge {
namespace {

// A series' pairing identity: its key, pointed to (no copies on the verdict's hot path), and
// its unit where the unit tells series apart.
struct PairKey {
  const SeriesKey* key;
  std::string_view unit;  // "" unless PairBy::kKeyAndUnit

  std::strong_ordering operator<=>(const PairKey& other) const {
    if (auto by_key = *key <=> *other.key; by_key != 0) return by_key;
    return unit <=> other.unit;
  }
};

PairKey PairKeyOf(const Series& s, PairBy by) {
  return {&s.key, by == PairBy::kKeyAndUnit ? std::string_view(s.unit) : std::string_view()};
}

}  // namespace

std::string SeriesName(const SeriesKey& key) {
  return key.suite + "/" + key.benchmark + " " + key.metric;
}

std::string NameOf(const SeriesKey& key, StatsName style) {
  switch (style) {
    case StatsName::kBenchmark:
      return key.benchmark;
    case StatsName::kSuiteBenchmark:
      return key.suite + "/" + key.benchmark;
    case StatsName::kSeries:
      break;
  }
  return SeriesName(key);
}

std::string_view Judgement::VerdictName(const Row& row) const {
  switch (row.kind) {
    case RowKind::kJudged:
      return stats::VerdictName(VerdictOf(row)->verdict);
    case RowKind::kIgnored:
      return "IGNORED";
    case RowKind::kNew:
      break;
  }
  return "NEW";
}

AppliedRule ApplyRules(std::span<const ThresholdRule> rules, const SeriesKey& key,
                       double own_threshold, double own_alpha, double policy_threshold) {
  AppliedRule out;
  out.rule = FirstMatch(rules, key.suite, key.benchmark, key.metric);
  out.threshold = own_threshold > 0 ? own_threshold
                  : out.rule != nullptr && out.rule->percent.value_or(0) > 0
                      ? *out.rule->percent / 100
                      : policy_threshold;
  out.alpha = own_alpha > 0 ? own_alpha : out.rule != nullptr ? out.rule->alpha.value_or(0) : 0;
  out.ignored = out.rule != nullptr && out.rule->ignore;
  return out;
}

bool IsPrimaryMetric(std::string_view metric) {
  return metric == "real_time" || metric == "step_time" || metric == "wall_time";
}

std::string ReportedReason(std::string_view shows, std::string_view reason) {
  return "not gated; shows " + std::string(shows) + ": " + std::string(reason);
}

void Gating::Add(const SeriesKey& key) {
  if (IsPrimaryMetric(key.metric)) with_primary_.emplace(key.suite, key.benchmark);
}

bool Gating::Gates(const SeriesKey& key, const ThresholdRule* rule) const {
  if (rule != nullptr && rule->gate) return *rule->gate;
  return IsPrimaryMetric(key.metric) ||
         with_primary_.count(std::pair(key.suite, key.benchmark)) == 0;
}

Result<Judgement> JudgeSeries(std::optional<std::span<const Series>> base,
                              std::span<const Series> contender, const JudgeOptions& options) {
  Judgement out;
  const std::span<const Series> base_series = base.value_or(std::span<const Series>());
  // The first base series of each key; later ones of the same key never pair.
  std::map<PairKey, size_t> base_index;
  for (size_t i = 0; i < base_series.size(); ++i) {
    base_index.emplace(PairKeyOf(base_series[i], options.pair_by), i);
  }
  std::vector<bool> taken(base_series.size(), false);
  std::vector<size_t> base_of(contender.size(), base_series.size());  // size(): none
  Gating gating;
  for (const Series& series : contender) gating.Add(series.key);

  out.rows.reserve(contender.size());
  for (size_t c = 0; c < contender.size(); ++c) {
    const Series& series = contender[c];
    Row row;
    row.contender = &series;
    const AppliedRule applied = ApplyRules(options.rules, series.key, series.threshold,
                                           series.alpha, options.policy.threshold);
    row.rule = applied.rule;
    row.threshold = applied.threshold;
    row.alpha = applied.alpha;
    row.gated = gating.Gates(series.key, applied.rule);
    if (auto it = base_index.find(PairKeyOf(series, options.pair_by)); it != base_index.end()) {
      if (!taken[it->second]) {  // a series twice in the contender: the first takes the base
        taken[it->second] = true;
        base_of[c] = it->second;
        row.base = &base_series[it->second];
      }
    }
    if (applied.ignored) {
      row.kind = RowKind::kIgnored;
      row.reason = kIgnoredReason;
      ++out.ignored;
    } else if (row.base == nullptr) {
      row.kind = RowKind::kNew;
      row.reason = base ? kNotInBaseReason : kNoBaseReason;
      ++out.added;
    } else {
      row.kind = RowKind::kJudged;
    }
    out.rows.push_back(row);
  }
  if (options.order == RowOrder::kBase) {
    // Pairs by their base position, then the unpaired by their contender position.
    std::vector<size_t> rank(contender.size());
    for (size_t c = 0; c < contender.size(); ++c) {
      rank[c] = base_of[c] < base_series.size() ? base_of[c] : base_series.size() + c;
    }
    std::stable_sort(out.rows.begin(), out.rows.end(), [&](const Row& a, const Row& b) {
      return rank[a.contender - contender.data()] < rank[b.contender - contender.data()];
    });
  }
  for (size_t i = 0; i < base_series.size(); ++i) {
    if (taken[i]) continue;
    auto it = base_index.find(PairKeyOf(base_series[i], options.pair_by));
    if (it->second == i) out.only_in_base.push_back(&base_series[i]);
  }

  std::vector<stats::MetricInput> inputs, reported;
  for (Row& row : out.rows) {
    if (row.kind != RowKind::kJudged) continue;
    std::vector<stats::MetricInput>& family = row.gated ? inputs : reported;
    stats::MetricInput input;
    input.name = NameOf(row.contender->key, options.name);
    input.direction = row.contender->direction;
    input.base = row.base->values;
    input.prepared_base = row.base->prepared;
    input.contender = row.contender->values;
    input.threshold = row.threshold;
    input.alpha = row.alpha;
    row.verdict = family.size();
    family.push_back(std::move(input));
  }
  auto judged = stats::JudgeMetrics(inputs, options.policy, options.outputs);
  if (!judged) return tl::unexpected(judged.error());
  out.verdicts = std::move(*judged);
  if (!reported.empty()) {
    auto also = stats::JudgeMetrics(reported, options.policy, options.outputs);
    if (!also) return tl::unexpected(also.error());
    out.reported = std::move(*also);
  }
  return out;
}

std::vector<AttributionInput> AttributionInputs(const Judgement& judgement) {
  std::vector<AttributionInput> out;
  out.reserve(judgement.rows.size());
  for (const Row& row : judgement.rows) {
    const stats::MetricVerdict* v = judgement.VerdictOf(row);
    const Series& s = *row.contender;
    AttributionInput input{s.key.suite,
                           s.key.benchmark,
                           s.key.metric,
                           s.unit,
                           s.direction,
                           judgement.VerdictName(row),
                           v != nullptr ? v->change : NAN,
                           v != nullptr ? v->p_adjusted : NAN,
                           row.threshold,
                           s.values,
                           std::nullopt,
                           row.gated};
    if (row.base != nullptr) input.base = row.base->values;
    out.push_back(input);
  }
  return out;
}

}  // namespace perfwarden::judge
