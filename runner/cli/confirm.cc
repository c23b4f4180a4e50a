#include "runner/cli/confirm.h"

#include <cstdio>
#include <map>
#include <set>

#include "core/series_key.h"
#include "core/text.h"
#include "judge/judge.h"
#include "runner/run/baseline_tree.h"
#include "runner/run/paired_measure.h"
#include "stats/verdict.h"

namespace perfgate::cli {
namespace {

void Progress(const std::string& line) { std::fprintf(stderr, "perfgate: %s\n", line.c_str()); }

}  // namespace

ConfirmCall CallOf(stats::Verdict side_by_side) {
  switch (side_by_side) {
    case stats::Verdict::kRegression:
      return ConfirmCall::kConfirmed;
    case stats::Verdict::kInconclusive:
      return ConfirmCall::kUndecided;
    case stats::Verdict::kEquivalent:
    case stats::Verdict::kImprovement:
      return ConfirmCall::kWithdrawn;
  }
  return ConfirmCall::kUndecided;
}

Result<ConfirmReport> ConfirmRegressions(const config::RunnerConfig& config,
                                         const ConfirmOptions& options, wire::Verdict* verdict) {
  ConfirmReport report;
  std::map<std::string, std::set<std::string>> regressed;
  for (const wire::MetricResult& r : verdict->results) {
    if (r.kind == wire::ResultKind::kRegression) regressed[r.key.suite].insert(r.key.benchmark);
  }
  if (regressed.empty()) return report;
  if (!verdict->baseline || verdict->baseline->commit.empty()) {
    return InvalidArgument("the verdict names no baseline commit to confirm against");
  }
  const std::string base_commit = verdict->baseline->commit;

  std::set<std::string> suites;
  for (const auto& [suite_name, benchmarks] : regressed) suites.insert(suite_name);
  Progress("confirming " + std::to_string(regressed.size()) + " suite(s) with regressions " +
           "against the baseline " + base_commit.substr(0, 12));
  auto tree = run::BaselineTree::Prepare(config, base_commit, suites, Progress);
  if (!tree) return tl::unexpected(tree.error());
  run::PairedOptions paired;
  paired.repetitions = options.repetitions_per_round;
  run::PairedMeasurer measurer(config, *tree, paired);
  for (int round = 0; round < options.rounds; ++round) {
    Progress("confirm: A/B round " + std::to_string(round + 1) + "/" +
             std::to_string(options.rounds));
    if (auto measured = measurer.MeasureBlock(regressed, Progress); !measured) {
      return tl::unexpected(measured.error());
    }
  }
  std::map<SeriesKey, std::vector<double>> base_values, head_values;
  for (const run::PairedSeries& series : measurer.Series()) {
    for (const run::PairedBlock& block : series.blocks) {
      auto& base = base_values[series.key];
      base.insert(base.end(), block.base.begin(), block.base.end());
      auto& head = head_values[series.key];
      head.insert(head.end(), block.head.begin(), block.head.end());
    }
  }

  // Judge the regressed metrics again, side by side, with their thresholds; Holm across them.
  std::vector<judge::Series> base_side, head_side;
  for (const auto& [key, values] : base_values) {
    base_side.push_back({.key = key, .unit = "", .values = values});
  }
  std::vector<wire::MetricResult*> targets;  // the verdict's row of each head series
  for (wire::MetricResult& r : verdict->results) {
    if (r.kind != wire::ResultKind::kRegression) continue;
    auto h = head_values.find(r.key);
    if (h == head_values.end()) continue;
    judge::Series series{
        .key = r.key, .unit = r.unit, .direction = r.direction, .values = h->second};
    series.threshold = r.threshold.value_or(verdict->parameters.threshold);
    series.alpha = config.Resolve(r.key).alpha;
    head_side.push_back(std::move(series));
    targets.push_back(&r);
  }
  judge::JudgeOptions judge_options;
  judge_options.policy.threshold = verdict->parameters.threshold;
  auto judged = judge::JudgeSeries(base_side, head_side, judge_options);
  if (!judged) return tl::unexpected(judged.error());
  std::set<const wire::MetricResult*> judged_rows;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (judged->rows[i].kind == judge::RowKind::kJudged) judged_rows.insert(targets[i]);
  }
  for (const wire::MetricResult& r : verdict->results) {
    if (r.kind == wire::ResultKind::kRegression && judged_rows.count(&r) == 0) {
      report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": not measured again; kept");
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const stats::MetricVerdict* judged_verdict = judged->VerdictOf(judged->rows[i]);
    if (judged_verdict == nullptr) continue;  // not measured again at the baseline
    const stats::MetricVerdict& v = *judged_verdict;
    wire::MetricResult& r = *targets[i];
    ++report.checked;
    const std::string measured = SignedPercent(v.change) + " [" + SignedPercent(v.change_ci.lower) +
                                 ", " + SignedPercent(v.change_ci.upper) + "]";
    const ConfirmCall call = CallOf(v.verdict);
    if (call == ConfirmCall::kConfirmed) {
      ++report.confirmed;
      report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": confirmed, " + measured +
                             " side by side");
      r.reason += "; confirmed by an interleaved A/B rerun against " + base_commit.substr(0, 12) +
                  ": " + measured;
      continue;
    }
    if (call == ConfirmCall::kUndecided) {
      // Withdrawing it on a point estimate just under the threshold would let the noise hide a
      // real regression; it stands.
      ++report.undecided;
      report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": not decided side by side (" +
                             measured + ", INCONCLUSIVE); kept");
      r.reason += "; an interleaved A/B rerun against " + base_commit.substr(0, 12) + " measured " +
                  measured + ", which does not rule it out";
      continue;
    }
    ++report.withdrawn;
    report.lines.push_back(r.key.benchmark + " " + r.key.metric + ": not confirmed (" + measured +
                           ", " + std::string(stats::VerdictName(v.verdict)) + ")");
    r.kind = wire::ResultKind::kInconclusive;
    r.reason = "first measured " + (r.change ? SignedPercent(*r.change) : std::string("?")) +
               ", but an interleaved A/B rerun against " + base_commit.substr(0, 12) +
               " measured " + measured + " (" + std::string(stats::VerdictName(v.verdict)) +
               "): the machine's speed drifted between the runs, not the code";
    --verdict->counts.regression;
    ++verdict->counts.inconclusive;
  }
  if (verdict->outcome == wire::Outcome::kRegression && verdict->counts.regression == 0) {
    verdict->outcome = wire::Outcome::kPass;
  }
  if (report.withdrawn > 0) {
    verdict->warnings.push_back(std::to_string(report.withdrawn) +
                                " regression(s) of the server's verdict did not reproduce in an "
                                "interleaved A/B rerun on this machine and were withdrawn");
  }
  return report;
}

}  // namespace perfgate::cli
