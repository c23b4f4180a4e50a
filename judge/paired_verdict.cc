// SPDX-License-Identifier: Apache-2.0
#include "judge/paired_verdict.h"

#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "judge/judge.h"
#include "judge/paired.h"
#include "judge/run_verdict.h"
#include "stats/descriptive.h"
#include "stats/paired_verdict.h"

namespace perfwarden::judge {
namespace {

wire::Summary Summarize(std::span<const double> values) {
  return SummaryOf(
      {values.size(), stats::Median(values), values.size() >= 2 ? stats::Cv(values) : NAN});
}

// One side's values pooled over the blocks (only the complete ones when `complete`).
std::vector<double> Pooled(const wire::PairedSeries& series, bool base, bool complete) {
  std::vector<double> out;
  for (const wire::PairedBlock& b : series.blocks) {
    if (complete && (b.base.empty() || b.head.empty())) continue;
    const std::vector<double>& side = base ? b.base : b.head;
    out.insert(out.end(), side.begin(), side.end());
  }
  return out;
}

std::optional<wire::Interval> FiniteInterval(const stats::Interval& i) {
  if (!std::isfinite(i.lower) || !std::isfinite(i.upper)) return std::nullopt;
  return wire::Interval{i.lower, i.upper};
}

wire::PairedDetail DetailOf(const stats::PairedMetricVerdict& v) {
  wire::PairedDetail d;
  d.blocks = v.blocks;
  d.noise = v.noise;
  d.drift = v.drift;
  d.t_ci = FiniteInterval(v.t_ci);
  d.bootstrap_ci = FiniteInterval(v.bootstrap_ci);
  d.median_change = v.median_change;
  d.hodges_lehmann = v.hodges_lehmann;
  d.p_t = v.p_t;
  d.p_wilcoxon = v.p_wilcoxon;
  d.p_sign = v.p_sign;
  d.blocks_needed = v.blocks_needed;
  d.decided_at_look = v.decided_at_look;
  return d;
}

wire::MetricResult ResultOf(const PairedRow& row, const stats::PairedMetricVerdict* v,
                            const wire::PairedDesign& design) {
  const wire::PairedSeries& s = *row.series;
  wire::MetricResult r;
  r.key = s.key;
  r.unit = s.unit;
  r.direction = s.direction;
  r.threshold = row.threshold;
  if (v == nullptr) {
    r.kind = row.kind == RowKind::kIgnored ? wire::ResultKind::kIgnored : wire::ResultKind::kNew;
    // What was measured of the pull request, for the report (a NEW series may lack a base).
    r.current = Summarize(Pooled(s, /*base=*/false, /*complete=*/false));
    r.reason = row.reason;
    return r;
  }
  const wire::ResultKind shows = v->unstable ? wire::ResultKind::kUnstable : KindOf(v->verdict);
  r.kind = row.gated ? shows : wire::ResultKind::kReported;
  r.base = Summarize(Pooled(s, /*base=*/true, /*complete=*/true));
  r.current = Summarize(Pooled(s, /*base=*/false, /*complete=*/true));
  r.change = Finite(v->change);
  // Kept as computed: a bound that is not finite is written as null inside the interval.
  r.change_ci = wire::Interval{v->decision_ci.lower, v->decision_ci.upper};
  r.p_value = Finite(v->p_test);
  r.p_adjusted = Finite(v->p_adjusted);
  r.paired = DetailOf(*v);
  r.reason = row.gated ? v->reason : ReportedReason(wire::ResultKindName(shows), v->reason);
  // Blocks needed, in repetitions of each side (-1: the noise could not be estimated).
  r.repetitions_needed = !v->unstable           ? 0
                         : v->blocks_needed < 0 ? -1
                                                : int64_t{v->blocks_needed} * design.repetitions;
  return r;
}

// The statistics name a series by its name when they refuse a value of it; the body's path
// names the value (series[i].blocks[b].head[r]), as every other refusal of the body does.
Error AtValuePath(Error error, const wire::PairedMeasurement& m) {
  for (size_t i = 0; i < m.series.size(); ++i) {
    if (SeriesName(m.series[i].key) != error.field) continue;
    const std::vector<wire::PairedBlock>& blocks = m.series[i].blocks;
    for (size_t b = 0; b < blocks.size(); ++b) {
      for (const auto& [side, values] :
           {std::pair{"base", &blocks[b].base}, std::pair{"head", &blocks[b].head}}) {
        for (size_t r = 0; r < values->size(); ++r) {
          if ((*values)[r] > 0) continue;
          error.field = "series[" + std::to_string(i) + "].blocks[" + std::to_string(b) + "]." +
                        side + "[" + std::to_string(r) + "]";
          error.message =
              "must be a positive number: paired judging takes the logarithm of "
              "each block's ratio (" +
              SeriesName(m.series[i].key) + ")";
          return error;
        }
      }
    }
  }
  return error;
}

wire::PairedSummary PairedSummaryOf(const wire::PairedMeasurement& m,
                                    const stats::PairedLookVerdicts& look) {
  wire::PairedSummary s;
  s.baseline_commit = m.baseline_commit;
  s.design = m.design;
  s.amends = m.amends;
  s.measured = static_cast<int64_t>(look.metrics.size());
  s.look = look.look;
  s.looks = look.looks;
  s.blocks = look.blocks;
  if (look.suite.count > 0 && std::isfinite(look.suite.geomean_ratio)) {
    s.geomean_change = look.suite.geomean_ratio - 1;
  }
  if (std::isfinite(look.suite.ci.lower) && std::isfinite(look.suite.ci.upper)) {
    s.geomean_ci = wire::Interval{look.suite.ci.lower - 1, look.suite.ci.upper - 1};
  }
  return s;
}

}  // namespace

Result<wire::Verdict> JudgeMeasurement(const wire::PairedMeasurement& m) {
  auto policy = PairedPolicyOf(m);
  if (!policy) return tl::unexpected(policy.error());
  const bool budget_exhausted = m.design.stopped == "time_budget";
  auto judged = JudgePaired(m, *policy, budget_exhausted);
  if (!judged) return tl::unexpected(AtValuePath(judged.error(), m));
  const stats::PairedLookVerdicts& look = judged->verdicts;

  wire::Verdict out;
  std::vector<std::string> too_few;
  out.results.reserve(judged->rows.size());
  for (const PairedRow& row : judged->rows) {
    out.results.push_back(ResultOf(row, judged->VerdictOf(row), m.design));
    if (row.kind == RowKind::kNew) too_few.push_back(SeriesName(row.series->key));
  }
  out.counts = wire::CountResults(out.results);
  out.outcome = look.regressions > 0 ? wire::Outcome::kRegression : wire::Outcome::kPass;

  if (budget_exhausted) {
    out.warnings.push_back("the time budget ended the measurement at " +
                           std::to_string(look.blocks) + " blocks (look " +
                           std::to_string(look.look + 1) + " of " + std::to_string(look.looks) +
                           "): a metric still undecided there is UNSTABLE, which does not gate");
  }
  if (!too_few.empty()) {
    out.warnings.push_back(std::to_string(too_few.size()) +
                           " series measured on both sides in fewer than the first look's " +
                           std::to_string(policy->min_blocks) +
                           " blocks are NEW, not judged: " + FirstNames(too_few));
  }
  out.paired = PairedSummaryOf(m, look);
  return out;
}

wire::Verdict Amend(const wire::Verdict& amended, const wire::Verdict& paired) {
  wire::Verdict out = amended;
  std::map<SeriesKey, size_t> at;
  for (size_t i = 0; i < out.results.size(); ++i) at.emplace(out.results[i].key, i);

  int remeasured = 0, confirmed = 0;
  std::vector<std::string> kept;
  for (const wire::MetricResult& row : paired.results) {
    if (!row.paired) {
      // Too few blocks (or ignored) is no evidence either way: the row stands as it was.
      if (row.kind == wire::ResultKind::kNew) kept.push_back(SeriesName(row.key));
      continue;
    }
    auto found = at.find(row.key);
    if (found == at.end()) {
      out.results.push_back(row);
      continue;
    }
    if (out.results[found->second].kind == wire::ResultKind::kRegression) {
      ++remeasured;
      if (row.kind == wire::ResultKind::kRegression) ++confirmed;
    }
    out.results[found->second] = row;
  }

  out.warnings.insert(out.warnings.end(), paired.warnings.begin(), paired.warnings.end());
  if (!kept.empty()) {
    out.warnings.push_back(
        std::to_string(kept.size()) +
        " series measured side by side in too few blocks keep their rows: " + FirstNames(kept));
  }
  const std::string baseline = paired.paired ? paired.paired->baseline_commit : "";
  out.warnings.push_back(std::to_string(remeasured) +
                         " regression(s) re-measured side by side against " +
                         baseline.substr(0, 12) + ": " + std::to_string(confirmed) +
                         " confirmed, " + std::to_string(remeasured - confirmed) + " withdrawn");

  bool any_regression = false, all_unpaired = true;
  for (const wire::MetricResult& row : out.results) {
    if (row.kind != wire::ResultKind::kRegression) continue;
    any_regression = true;
    if (row.paired) all_unpaired = false;
  }
  out.outcome = !any_regression ? wire::Outcome::kPass
                : amended.outcome == wire::Outcome::kNoisyEnvironment && all_unpaired
                    ? wire::Outcome::kNoisyEnvironment
                    : wire::Outcome::kRegression;
  out.counts = wire::CountResults(out.results);
  out.paired = paired.paired;
  return out;
}

}  // namespace perfwarden::judge
