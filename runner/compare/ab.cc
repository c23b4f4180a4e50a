// SPDX-License-Identifier: Apache-2.0
#include "runner/compare/ab.h"

#include <algorithm>

#include "judge/ab_verdict.h"
#include "stats/bootstrap.h"
#include "stats/descriptive.h"
#include "stats/mann_whitney.h"

namespace perfwarden::compare {

std::vector<Arm> AbSchedule(int runs, std::uint64_t seed) {
  stats::Rng rng(seed);
  std::vector<Arm> out;
  out.reserve(static_cast<std::size_t>(2 * std::max(runs, 0)));
  for (int i = 0; i < runs; ++i) {
    const bool a_first = rng.Below(2) == 0;
    out.push_back(a_first ? Arm::kA : Arm::kB);
    out.push_back(a_first ? Arm::kB : Arm::kA);
  }
  return out;
}

AbReport AnalyzeAb(const std::vector<AbMetric>& metrics, const std::string& primary, double alpha,
                   double threshold) {
  AbReport report;
  report.primary = primary;
  report.threshold = threshold;
  for (const AbMetric& m : metrics) {
    if (m.a.empty() || m.b.empty()) {
      report.warnings.push_back(m.name + ": measured by " + (m.a.empty() ? "B" : "A") +
                                " only; left out");
      continue;
    }
    AbRow row;
    row.name = m.name;
    row.unit = m.unit;
    row.direction = m.direction;
    row.n_a = static_cast<int>(m.a.size());
    row.n_b = static_cast<int>(m.b.size());
    row.median_a = stats::Median(m.a);
    row.median_b = stats::Median(m.b);
    row.change = row.median_a != 0 ? row.median_b / row.median_a - 1 : 0;
    const stats::Interval ci = stats::BootstrapMedianChangeCi(m.a, m.b, {});
    row.ci_low = ci.lower;
    row.ci_high = ci.upper;
    row.p_value = stats::MannWhitneyU(m.a, m.b).p_two_sided;
    const judge::AbMetricStats judged{.n_a = row.n_a,
                                      .n_b = row.n_b,
                                      .change = row.change,
                                      .ci_low = row.ci_low,
                                      .ci_high = row.ci_high,
                                      .p_value = row.p_value,
                                      .direction = row.direction};
    row.verdict = std::string(judge::AbVerdictName(judge::JudgeAbMetric(judged, alpha, threshold)));
    report.rows.push_back(std::move(row));
  }
  std::stable_sort(report.rows.begin(), report.rows.end(), [&](const AbRow& x, const AbRow& y) {
    if ((x.name == primary) != (y.name == primary)) return x.name == primary;
    return x.name < y.name;
  });
  if (!report.rows.empty() && report.rows.front().name == primary) {
    const AbRow& p = report.rows.front();
    // change = b/a - 1; for a time, B is (1 / (1 + change)) times as fast as A.
    if (p.direction == Direction::kLowerIsBetter) {
      report.speedup = 1 / (1 + p.change);
      report.speedup_low = 1 / (1 + p.ci_high);
      report.speedup_high = 1 / (1 + p.ci_low);
    } else {
      report.speedup = 1 + p.change;
      report.speedup_low = 1 + p.ci_low;
      report.speedup_high = 1 + p.ci_high;
    }
    if (p.verdict == "too few runs") {
      report.warnings.push_back(std::to_string(p.n_a) + " and " + std::to_string(p.n_b) +
                                " runs cannot show a difference at alpha " +
                                std::to_string(alpha).substr(0, 5) + " (use --runs 5 or more)");
    }
  } else {
    report.warnings.push_back("the primary metric " + primary + " was not measured");
  }
  return report;
}

}  // namespace perfwarden::compare
