// SPDX-License-Identifier: Apache-2.0
#include "judge/compare_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace perfwarden::judge {
namespace {

SideInfo Describe(const std::string& source, std::span<const Series> series) {
  SideInfo info;
  info.source = source;
  info.benchmarks = series.size();
  info.min_repetitions = series.empty() ? 0 : SIZE_MAX;
  for (const Series& s : series) {
    info.min_repetitions = std::min(info.min_repetitions, s.values.size());
    info.max_repetitions = std::max(info.max_repetitions, s.values.size());
  }
  return info;
}

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", fraction * 100);
  return buffer;
}

// Too few repetitions: how many power analysis asks for at this comparison's typical noise.
void AdviseRepetitions(const Judgement& judged, const stats::VerdictPolicy& policy,
                       std::vector<std::string>& warnings) {
  std::vector<double> cvs;
  size_t pairs = 0, too_few = 0;
  for (const Row& row : judged.rows) {
    if (row.kind != RowKind::kJudged) continue;
    ++pairs;
    const std::span<const double> base = row.base->values, contender = row.contender->values;
    double cv = stats::PooledCv(base, contender);
    if (std::isfinite(cv)) cvs.push_back(cv);
    if (std::min(base.size(), contender.size()) < kRecommendedMinRepetitions) ++too_few;
  }
  if (too_few == 0) return;
  std::string warning = std::to_string(too_few) + " of " + std::to_string(pairs) +
                        " benchmark(s) have fewer than " +
                        std::to_string(kRecommendedMinRepetitions) + " repetitions on a side";
  if (!cvs.empty()) {
    double typical_cv = stats::Median(cvs);
    int needed = stats::RecommendedRepetitions(policy, policy.threshold, typical_cv, pairs);
    if (needed > 0) {
      warning += "; at the median noise of this comparison (CV " + Percent(typical_cv) +
                 ") power analysis asks for about " + std::to_string(needed) +
                 " per side to detect a " + Percent(policy.threshold) +
                 " change (--benchmark_repetitions=" + std::to_string(needed) + ")";
    }
  }
  warnings.push_back(warning);
}

}  // namespace

Result<CompareReport> Compare(const std::string& base_source, std::span<const Series> base,
                              const std::string& contender_source,
                              std::span<const Series> contender, const CompareOptions& options) {
  JudgeOptions judge_options;
  judge_options.policy = options.policy;
  judge_options.order = RowOrder::kBase;
  judge_options.name = options.name;
  auto judged = JudgeSeries(base, contender, judge_options);
  if (!judged) return tl::unexpected(judged.error());

  CompareReport report;
  report.metric = options.metric;
  report.direction = options.direction;
  report.policy = options.policy;
  report.base = Describe(base_source, base);
  report.contender = Describe(contender_source, contender);
  for (const Row& row : judged->rows) {
    if (row.kind == RowKind::kJudged) {
      if (report.unit.empty()) report.unit = row.base->unit;
    } else {
      report.only_in_contender.push_back(NameOf(row.contender->key, options.name));
    }
  }
  for (const Series* s : judged->only_in_base) {
    report.only_in_base.push_back(NameOf(s->key, options.name));
  }
  if (options.advise_repetitions) AdviseRepetitions(*judged, options.policy, report.warnings);
  if (!report.only_in_base.empty() || !report.only_in_contender.empty()) {
    report.warnings.push_back(std::to_string(report.only_in_base.size()) +
                              " benchmark(s) only in the base and " +
                              std::to_string(report.only_in_contender.size()) +
                              " only in the contender are not compared");
  }
  report.verdicts = std::move(judged->verdicts);
  return report;
}

int ExitCode(const CompareReport& report) { return report.verdicts.regressions > 0 ? 1 : 0; }

}  // namespace perfwarden::judge
