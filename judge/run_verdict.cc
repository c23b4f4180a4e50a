// SPDX-License-Identifier: Apache-2.0
#include "judge/run_verdict.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "judge/attribution.h"
#include "stats/descriptive.h"
#include "stats/environment_shift.h"

namespace perfwarden::judge {
namespace {

wire::Attribution WireAttribution(const Attribution& a) {
  wire::Attribution out;
  for (const MovedMetric& m : a.moved) out.moved.push_back({m.metric, m.verdict, Finite(m.change)});
  if (a.roofline) {
    out.roofline = wire::Roofline{std::string(a.roofline->bound), Finite(a.roofline->intensity),
                                  Finite(a.roofline->ridge)};
  }
  out.hint = a.hint;
  return out;
}

// The baseline's series that this run did not measure: worth a line, not a verdict.
std::string UnmatchedWarning(std::vector<const Series*> unmatched) {
  std::sort(unmatched.begin(), unmatched.end(), [](const Series* a, const Series* b) {
    return std::tie(a->key, a->unit) < std::tie(b->key, b->unit);
  });
  std::string names;
  for (size_t i = 0; i < unmatched.size() && i < 5; ++i) {
    names +=
        (names.empty() ? "" : ", ") + unmatched[i]->key.benchmark + " " + unmatched[i]->key.metric;
  }
  return std::to_string(unmatched.size()) +
         " benchmark metric(s) of the baseline are not in this run: " + names +
         (unmatched.size() > 5 ? ", ..." : "");
}

// A drift of the machine between the sides moves the run's metrics together.
std::optional<wire::EnvironmentShift> ShiftOf(const stats::ComparisonVerdicts& verdicts,
                                              double threshold) {
  std::vector<double> worse;
  for (const stats::MetricVerdict& v : verdicts.metrics) {
    const double log_ratio = std::log1p(v.change);
    worse.push_back(v.direction == Direction::kHigherIsBetter ? -log_ratio : log_ratio);
  }
  stats::ShiftPolicy shift_policy;
  shift_policy.threshold = threshold;
  const stats::ShiftEvidence shift = stats::DetectEnvironmentShift(worse, shift_policy);
  if (!shift.shifted) return std::nullopt;
  return wire::EnvironmentShift{static_cast<int64_t>(shift.metrics), shift.median_change,
                                shift.geomean_change, shift.same_sign_share, shift.reason};
}

wire::MetricResult ResultOf(const Judgement& judged, const Row& row, const RowNotes& notes) {
  const Series& set = *row.contender;
  const stats::MetricVerdict* v = judged.VerdictOf(row);
  wire::MetricResult r;
  r.key = set.key;
  r.unit = set.unit;
  r.direction = set.direction;
  r.threshold = row.threshold;
  if (v != nullptr) {
    r.kind = row.gated ? KindOf(v->verdict) : wire::ResultKind::kReported;
    r.base = SummaryOf(v->base);
    r.current = SummaryOf(v->contender);
    r.change = Finite(v->change);
    // Kept as computed: a bound that is not finite is written as null inside the interval.
    r.change_ci = wire::Interval{v->change_ci.lower, v->change_ci.upper};
    r.p_value = Finite(v->p_test);
    r.p_adjusted = Finite(v->p_adjusted);
    r.repetitions_needed = v->repetitions_needed;
    r.reason = row.gated ? v->reason : ReportedReason(judged.VerdictName(row), v->reason);
  } else {
    r.kind = row.kind == RowKind::kIgnored ? wire::ResultKind::kIgnored : wire::ResultKind::kNew;
    // The current side of NEW and IGNORED series, for the report.
    r.current = SummaryOf({set.values.size(), stats::Median(set.values),
                           set.values.size() >= 2 ? stats::Cv(set.values) : NAN});
    r.reason = std::string(row.reason);
  }
  if (notes.attribution) r.attribution = WireAttribution(*notes.attribution);
  r.environment = notes.environment;
  return r;
}

}  // namespace

std::optional<double> Finite(double value) {
  return std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
}

wire::ResultKind KindOf(stats::Verdict verdict) {
  switch (verdict) {
    case stats::Verdict::kRegression:
      return wire::ResultKind::kRegression;
    case stats::Verdict::kImprovement:
      return wire::ResultKind::kImprovement;
    case stats::Verdict::kEquivalent:
      return wire::ResultKind::kEquivalent;
    case stats::Verdict::kInconclusive:
      return wire::ResultKind::kInconclusive;
    case stats::Verdict::kPass:
      return wire::ResultKind::kPass;
  }
  return wire::ResultKind::kInconclusive;
}

wire::Summary SummaryOf(const stats::SampleSummary& side) {
  return {static_cast<int64_t>(side.n), Finite(side.median), Finite(side.cv)};
}

std::string FirstNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i == 0 ? "" : ", ") + names[i];
  return out + (names.size() > 5 ? ", ..." : "");
}

Result<wire::Verdict> JudgeRun(std::optional<std::span<const Series>> base,
                               std::span<const Series> contender,
                               const stats::VerdictPolicy& policy,
                               std::span<const ThresholdRule> rules) {
  JudgeOptions options;
  options.policy = policy;
  options.rules = rules;
  // Only what the verdict object reports (no Hodges-Lehmann, Cohen's d, other tests).
  options.outputs = stats::JudgeOutputs::kVerdictOnly;
  options.pair_by = PairBy::kKeyAndUnit;
  options.order = RowOrder::kContender;
  options.name = StatsName::kSeries;
  auto judged = JudgeSeries(base, contender, options);
  if (!judged) return tl::unexpected(judged.error());

  wire::Verdict out;
  if (base && !judged->only_in_base.empty()) {
    out.warnings.push_back(UnmatchedWarning(judged->only_in_base));
  }
  if (base) {
    out.environment_shift = ShiftOf(judged->verdicts, policy.threshold);
    if (out.environment_shift) {
      out.warnings.push_back("environment shift: " + out.environment_shift->reason);
    }
  }

  const Attributions notes = Attribute(AttributionInputs(*judged));
  out.results.reserve(judged->rows.size());
  for (size_t i = 0; i < judged->rows.size(); ++i) {
    out.results.push_back(ResultOf(*judged, judged->rows[i], notes.rows[i]));
  }
  out.counts = wire::CountResults(out.results);
  if (!base) {
    out.outcome = wire::Outcome::kNoBaseline;
  } else {
    // Regressions that a throttled host explains, all of them: the run must be repeated, not
    // fixed. One regression on a healthy suite still makes it a regression.
    out.outcome = out.counts.regression == 0 ? wire::Outcome::kPass
                  : notes.noisy_environment  ? wire::Outcome::kNoisyEnvironment
                                             : wire::Outcome::kRegression;
  }
  return out;
}

}  // namespace perfwarden::judge
