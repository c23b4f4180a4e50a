#include "server/gate/paired_rows.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <span>

#include "judge/paired.h"
#include "server/gate/results_writer.h"
#include "stats/descriptive.h"
#include "stats/paired_verdict.h"
#include "wire/verdict_keys.h"

namespace perfgate::server::gate {
namespace {

using nlohmann::json;
namespace keys = wire::keys;

// The order a paired row's keys are written in: nlohmann's (sorted), as ResultsWriter requires.
constexpr std::array kPairedResultOrder = {
    keys::result::kBase,     keys::result::kBenchmark, keys::result::kChange,
    keys::result::kChangeCi, keys::result::kCurrent,   keys::result::kDirection,
    keys::result::kMetric,   keys::result::kPAdjusted, keys::result::kPValue,
    keys::result::kPaired,   keys::result::kReason,    keys::result::kRepetitionsNeeded,
    keys::result::kSuite,    keys::result::kThreshold, keys::result::kUnit,
    keys::result::kVerdict};
static_assert(std::ranges::is_sorted(kPairedResultOrder));

constexpr std::string_view kRegressionWord = "REGRESSION";

stats::SampleSummary Summarize(std::span<const double> values) {
  return {values.size(), stats::Median(values), values.size() >= 2 ? stats::Cv(values) : NAN};
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

void WriteRow(ResultsWriter& writer, const judge::PairedRow& row,
              const stats::PairedMetricVerdict* v, const wire::PairedDesign& design) {
  const wire::PairedSeries& s = *row.series;
  writer.Open();
  if (v != nullptr) {
    writer.Side(keys::result::kBase, Summarize(Pooled(s, /*base=*/true, /*complete=*/true)));
  } else {
    writer.Null(keys::result::kBase);
  }
  writer.String(keys::result::kBenchmark, s.key.benchmark);
  if (v != nullptr) {
    writer.Number(keys::result::kChange, v->change);
    writer.Interval(keys::result::kChangeCi, v->decision_ci);
    writer.Side(keys::result::kCurrent, Summarize(Pooled(s, /*base=*/false, /*complete=*/true)));
  } else {
    writer.Null(keys::result::kChange);
    writer.Null(keys::result::kChangeCi);
    // What was measured of the pull request, for the report (a NEW series may lack a base).
    writer.Side(keys::result::kCurrent, Summarize(Pooled(s, /*base=*/false, /*complete=*/false)));
  }
  writer.String(keys::result::kDirection, DirectionName(s.direction));
  writer.String(keys::result::kMetric, s.key.metric);
  if (v != nullptr) {
    writer.Number(keys::result::kPAdjusted, v->p_adjusted);
    writer.Number(keys::result::kPValue, v->p_test);
    writer.Raw(keys::result::kPaired, wire::EncodePairedDetail(DetailOf(*v)).dump());
    writer.String(keys::result::kReason, v->reason);
    // Blocks needed, in repetitions of each side (-1: the noise could not be estimated).
    const long long needed = !v->unstable ? 0
                             : v->blocks_needed < 0
                                 ? -1
                                 : static_cast<long long>(v->blocks_needed) * design.repetitions;
    writer.Integer(keys::result::kRepetitionsNeeded, needed);
  } else {
    writer.Null(keys::result::kPAdjusted);
    writer.Null(keys::result::kPValue);
    writer.String(keys::result::kReason, row.reason);
    writer.Integer(keys::result::kRepetitionsNeeded, 0);
  }
  writer.String(keys::result::kSuite, s.key.suite);
  writer.Number(keys::result::kThreshold, row.threshold);
  writer.String(keys::result::kUnit, s.unit);
  std::string_view word = row.kind == judge::RowKind::kIgnored ? "IGNORED" : "NEW";
  if (v != nullptr) {
    word = v->unstable ? wire::ResultKindName(wire::ResultKind::kUnstable)
                       : stats::VerdictName(v->verdict);
  }
  writer.String(keys::result::kVerdict, word);
  writer.Close();
}

std::string Names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 5; ++i) out += (i == 0 ? "" : ", ") + names[i];
  return out + (names.size() > 5 ? ", ..." : "");
}

SeriesKey KeyOf(const json& row) {
  return {row.value(keys::result::kSuite, ""), row.value(keys::result::kBenchmark, ""),
          row.value(keys::result::kMetric, "")};
}

bool IsRegression(const json& row) {
  return row.value(keys::result::kVerdict, "") == kRegressionWord;
}

// The statistics name a series by its name when they refuse a value of it; the body's path
// names the value (series[i].blocks[b].head[r]), as every other refusal of the body does.
Error AtValuePath(Error error, const wire::PairedMeasurement& m) {
  for (size_t i = 0; i < m.series.size(); ++i) {
    if (judge::SeriesName(m.series[i].key) != error.field) continue;
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
              judge::SeriesName(m.series[i].key) + ")";
          return error;
        }
      }
    }
  }
  return error;
}

}  // namespace

Result<PairedParts> JudgeMeasurement(const wire::PairedMeasurement& m) {
  auto policy = judge::PairedPolicyOf(m);
  if (!policy) return tl::unexpected(policy.error());
  const bool budget_exhausted = m.design.stopped == "time_budget";
  auto judged = judge::JudgePaired(m, *policy, budget_exhausted);
  if (!judged) return tl::unexpected(AtValuePath(judged.error(), m));
  const stats::PairedLookVerdicts& look = judged->verdicts;

  PairedParts out;
  ResultsWriter writer;
  std::vector<std::string> too_few;
  for (const judge::PairedRow& row : judged->rows) {
    WriteRow(writer, row, judged->VerdictOf(row), m.design);
    out.kinds.push_back(row.kind);
    if (row.kind == judge::RowKind::kNew) too_few.push_back(judge::SeriesName(row.series->key));
  }
  out.results_json = writer.Finish();
  out.counts = CountResults(json::parse(out.results_json));
  out.outcome = look.regressions > 0 ? "regression" : "pass";

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
                           " blocks are NEW, not judged: " + Names(too_few));
  }

  wire::PairedSummary& s = out.summary;
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
  return out;
}

json CountResults(const json& results) {
  std::map<std::string, int64_t, std::less<>> by_word;
  for (const json& row : results) {
    if (row.is_object()) ++by_word[row.value(keys::result::kVerdict, "")];
  }
  auto count = [&](wire::ResultKind kind) {
    auto it = by_word.find(wire::ResultKindName(kind));
    return it == by_word.end() ? int64_t{0} : it->second;
  };
  return {{keys::counts::kRegression, count(wire::ResultKind::kRegression)},
          {keys::counts::kImprovement, count(wire::ResultKind::kImprovement)},
          {keys::counts::kEquivalent, count(wire::ResultKind::kEquivalent)},
          {keys::counts::kInconclusive, count(wire::ResultKind::kInconclusive)},
          {keys::counts::kIgnored, count(wire::ResultKind::kIgnored)},
          {keys::counts::kNew, count(wire::ResultKind::kNew)},
          {keys::counts::kUnstable, count(wire::ResultKind::kUnstable)},
          {keys::counts::kPass, count(wire::ResultKind::kPass)}};
}

Result<AmendedParts> Amend(const store::NewVerdict& amended, const PairedParts& paired,
                           const wire::PairedMeasurement& m) {
  json rows = json::parse(amended.results_json, nullptr, false);
  const json paired_rows = json::parse(paired.results_json, nullptr, false);
  if (!rows.is_array() || !paired_rows.is_array() || paired_rows.size() != paired.kinds.size()) {
    return MakeError(ErrorCode::kInternal, "the amended verdict's results are not readable");
  }
  std::map<SeriesKey, size_t> at;
  for (size_t i = 0; i < rows.size(); ++i) at.emplace(KeyOf(rows[i]), i);

  int remeasured = 0, confirmed = 0;
  std::vector<std::string> kept;
  for (size_t i = 0; i < paired_rows.size(); ++i) {
    const json& row = paired_rows[i];
    if (paired.kinds[i] != judge::RowKind::kJudged) {
      // Too few blocks (or ignored) is no evidence either way: the row stands as it was.
      if (paired.kinds[i] == judge::RowKind::kNew) kept.push_back(judge::SeriesName(KeyOf(row)));
      continue;
    }
    auto found = at.find(KeyOf(row));
    if (found == at.end()) {
      rows.push_back(row);
      continue;
    }
    if (IsRegression(rows[found->second])) {
      ++remeasured;
      if (IsRegression(row)) ++confirmed;
    }
    rows[found->second] = row;
  }

  AmendedParts out;
  const json summary = json::parse(amended.summary_json, nullptr, false);
  if (summary.is_object() && summary.contains(keys::verdict::kWarnings) &&
      summary[keys::verdict::kWarnings].is_array()) {
    for (const json& w : summary[keys::verdict::kWarnings]) {
      if (w.is_string()) out.warnings.push_back(w.get<std::string>());
    }
  }
  out.warnings.insert(out.warnings.end(), paired.warnings.begin(), paired.warnings.end());
  if (!kept.empty()) {
    out.warnings.push_back(
        std::to_string(kept.size()) +
        " series measured side by side in too few blocks keep their rows: " + Names(kept));
  }
  out.warnings.push_back(std::to_string(remeasured) +
                         " regression(s) re-measured side by side against " +
                         m.baseline_commit.substr(0, 12) + ": " + std::to_string(confirmed) +
                         " confirmed, " + std::to_string(remeasured - confirmed) + " withdrawn");

  bool any_regression = false, all_unpaired = true;
  for (const json& row : rows) {
    if (!IsRegression(row)) continue;
    any_regression = true;
    if (row.contains(keys::result::kPaired)) all_unpaired = false;
  }
  out.outcome = !any_regression                                          ? "pass"
                : amended.outcome == "noisy_environment" && all_unpaired ? "noisy_environment"
                                                                         : "regression";
  out.counts = CountResults(rows);
  out.results_json = rows.dump(-1, ' ', false, json::error_handler_t::replace);
  return out;
}

}  // namespace perfgate::server::gate
