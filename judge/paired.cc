// SPDX-License-Identifier: Apache-2.0
#include "judge/paired.h"

#include <algorithm>
#include <string>

#include "stats/paired_design.h"

namespace perfwarden::judge {
namespace {

int CompleteBlocks(const wire::PairedSeries& series) {
  return static_cast<int>(
      std::count_if(series.blocks.begin(), series.blocks.end(),
                    [](const wire::PairedBlock& b) { return !b.base.empty() && !b.head.empty(); }));
}

}  // namespace

Result<stats::PairedPolicy> PairedPolicyOf(const wire::PairedMeasurement& measurement) {
  stats::PairedPolicy policy;
  const wire::VerdictRequest& p = measurement.parameters;
  if (p.threshold) policy.threshold = *p.threshold;
  if (p.alpha) policy.alpha = *p.alpha;
  if (p.power) policy.power = *p.power;
  if (p.confidence) policy.confidence = *p.confidence;
  if (p.bootstrap_resamples) policy.bootstrap_resamples = static_cast<int>(*p.bootstrap_resamples);
  if (p.seed) policy.seed = *p.seed;
  const wire::PairedDesign& d = measurement.design;
  const std::optional<stats::PairedTest> test = stats::ParsePairedTest(d.test);
  if (!test) return InvalidArgument("must be \"t\" or \"wilcoxon\"", "design.test");
  policy.test = *test;
  const std::optional<stats::Spending> spending = stats::ParseSpending(d.spending);
  if (!spending) {
    return InvalidArgument("must be \"pocock\", \"obf\" or \"bonferroni\"", "design.spending");
  }
  policy.spending = *spending;
  policy.min_blocks = static_cast<int>(d.min_blocks);
  policy.max_blocks = static_cast<int>(d.max_blocks);
  policy.growth = d.growth;
  return stats::ValidatePairedPolicy(policy);
}

int LookReached(const stats::PairedPolicy& policy, int blocks) {
  const std::vector<int> schedule =
      stats::PairedLookSchedule(policy.min_blocks, policy.max_blocks, policy.growth);
  int look = -1;
  for (size_t i = 0; i < schedule.size() && schedule[i] <= blocks; ++i) {
    look = static_cast<int>(i);
  }
  return look;
}

Result<PairedJudgement> JudgePaired(const wire::PairedMeasurement& measurement,
                                    const stats::PairedPolicy& policy, bool budget_exhausted) {
  PairedJudgement out;
  const std::span<const ThresholdRule> rules = measurement.parameters.rules;
  bool any_judged = false, any_gated = false;
  Gating gating;
  for (const wire::PairedSeries& series : measurement.series) gating.Add(series.key);
  for (const wire::PairedSeries& series : measurement.series) {
    PairedRow row;
    row.series = &series;
    const AppliedRule applied = ApplyRules(rules, series.key, 0, 0, policy.threshold);
    row.rule = applied.rule;
    row.threshold = applied.threshold;
    row.alpha = applied.alpha;
    row.gated = gating.Gates(series.key, applied.rule);
    row.complete_blocks = CompleteBlocks(series);
    if (applied.ignored) {
      row.kind = RowKind::kIgnored;
      row.reason = std::string(kIgnoredReason);
      ++out.ignored;
    } else if (row.complete_blocks < policy.min_blocks) {
      row.kind = RowKind::kNew;
      row.reason = "measured on both sides in " + std::to_string(row.complete_blocks) +
                   " block(s); the first look needs " + std::to_string(policy.min_blocks);
      ++out.added;
    } else {
      row.kind = RowKind::kJudged;
      any_judged = true;
      any_gated = any_gated || row.gated;
    }
    out.rows.push_back(std::move(row));
  }
  if (!any_judged) {
    return InvalidArgument("no series was measured on both sides in the " +
                               std::to_string(policy.min_blocks) + " blocks of the first look",
                           "series");
  }
  if (!any_gated) {
    return InvalidArgument(
        "no measured series gates: every one is reported (a threshold rule's gate: false)",
        "series");
  }

  // The complete blocks of each judged series, in measuring order, as the statistics take them
  // (reserved up front: each input views its series' blocks).
  std::vector<std::vector<stats::PairedBlock>> blocks;
  std::vector<stats::PairedMetricInput> inputs, reported;
  blocks.reserve(out.rows.size());
  for (PairedRow& row : out.rows) {
    if (row.kind != RowKind::kJudged) continue;
    std::vector<stats::PairedMetricInput>& family = row.gated ? inputs : reported;
    std::vector<stats::PairedBlock>& mine = blocks.emplace_back();
    for (const wire::PairedBlock& b : row.series->blocks) {
      if (!b.base.empty() && !b.head.empty()) mine.push_back({b.base, b.head});
    }
    row.verdict = family.size();
    stats::PairedMetricInput input;
    input.name = SeriesName(row.series->key);
    input.direction = row.series->direction;
    input.blocks = mine;
    input.threshold = row.threshold;
    input.alpha = row.alpha;
    family.push_back(std::move(input));
  }
  auto judged = stats::JudgePairedLook(inputs, policy, stats::kLookReached, budget_exhausted);
  if (!judged) return tl::unexpected(judged.error());
  out.verdicts = std::move(*judged);
  // A reported series stops where its benchmark stopped: judged alone (a family of one), at the
  // last look its blocks reach, final when the gated series' look is.
  for (const stats::PairedMetricInput& input : reported) {
    auto alone = stats::JudgePairedLook(std::span(&input, 1), policy, stats::kLookReached,
                                        out.verdicts.final);
    if (!alone) return tl::unexpected(alone.error());
    out.reported.push_back(std::move(alone->metrics.front()));
  }
  return out;
}

}  // namespace perfwarden::judge
