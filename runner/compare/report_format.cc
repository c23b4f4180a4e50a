// SPDX-License-Identifier: Apache-2.0
#include "runner/compare/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace perfwarden::compare {
namespace {

using judge::CompareReport;
using judge::SideInfo;

std::string Format(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string SignedPercent(double fraction) {
  if (std::isnan(fraction)) return "n/a";
  return Format("%+.1f%%", fraction * 100);
}

std::string PValue(double p) {
  if (std::isnan(p)) return "-";
  if (p > 0 && p < 1e-4) return Format("%.1e", p);
  return Format("%.4f", p);
}

std::string Interval(const stats::Interval& ci) {
  if (std::isnan(ci.lower)) return "-";
  return "[" + SignedPercent(ci.lower) + ", " + SignedPercent(ci.upper) + "]";
}

std::string TestLongName(stats::VerdictTest test) {
  switch (test) {
    case stats::VerdictTest::kMannWhitney:
      return "Mann-Whitney U";
    case stats::VerdictTest::kWelch:
      return "Welch's t";
    case stats::VerdictTest::kWelchLog:
      return "Welch's t on log values";
  }
  return "";
}

std::string CorrectionName(stats::Correction correction) {
  switch (correction) {
    case stats::Correction::kNone:
      return "no correction";
    case stats::Correction::kBonferroni:
      return "Bonferroni";
    case stats::Correction::kSidak:
      return "Sidak";
    case stats::Correction::kHolm:
      return "Holm";
    case stats::Correction::kHolmSidak:
      return "Holm-Sidak";
    case stats::Correction::kBenjaminiHochberg:
      return "Benjamini-Hochberg";
    case stats::Correction::kBenjaminiYekutieli:
      return "Benjamini-Yekutieli";
  }
  return "";
}

// Regressions first, then improvements, inconclusive, equivalent; largest changes first.
std::vector<const stats::MetricVerdict*> Ordered(const CompareReport& report) {
  std::vector<const stats::MetricVerdict*> rows;
  for (const auto& m : report.verdicts.metrics) rows.push_back(&m);
  auto rank = [](stats::Verdict v) {
    switch (v) {
      case stats::Verdict::kRegression:
        return 0;
      case stats::Verdict::kImprovement:
        return 1;
      case stats::Verdict::kInconclusive:
        return 2;
      case stats::Verdict::kPass:
      case stats::Verdict::kEquivalent:
        return 3;
    }
    return 4;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
    if (rank(a->verdict) != rank(b->verdict)) return rank(a->verdict) < rank(b->verdict);
    return std::fabs(a->change) > std::fabs(b->change);
  });
  return rows;
}

std::string Header(const CompareReport& report) {
  std::ostringstream out;
  out << "metric " << report.metric << " (" << DirectionName(report.direction)
      << " is better), threshold " << Format("%g%%", report.policy.threshold * 100) << ", alpha "
      << Format("%g", report.policy.alpha) << ", " << TestLongName(report.policy.test)
      << " test with " << CorrectionName(report.policy.correction) << " correction across "
      << report.verdicts.metrics.size() << " benchmark(s)";
  return out.str();
}

std::string Counts(const CompareReport& report) {
  const auto& v = report.verdicts;
  std::ostringstream out;
  out << v.regressions << " regression(s), " << v.improvements << " improvement(s), "
      << v.equivalent << " equivalent, " << v.inconclusive << " inconclusive";
  return out.str();
}

std::string Repetitions(const SideInfo& side) {
  if (side.min_repetitions == side.max_repetitions) {
    return std::to_string(side.min_repetitions) + " repetitions";
  }
  return std::to_string(side.min_repetitions) + "-" + std::to_string(side.max_repetitions) +
         " repetitions";
}

}  // namespace

std::string FormatValue(double value, const std::string& unit) {
  if (std::isnan(value)) return "-";
  if (unit == "ns") {
    const double a = std::fabs(value);
    if (a < 1e3) return Format("%.4g ns", value);
    if (a < 1e6) return Format("%.4g us", value / 1e3);
    if (a < 1e9) return Format("%.4g ms", value / 1e6);
    return Format("%.4g s", value / 1e9);
  }
  const char* suffix = unit == "1/s" ? "/s" : "";
  const double a = std::fabs(value);
  if (a >= 1e12) return Format("%.4gT", value / 1e12) + suffix;
  if (a >= 1e9) return Format("%.4gG", value / 1e9) + suffix;
  if (a >= 1e6) return Format("%.4gM", value / 1e6) + suffix;
  if (a >= 1e3) return Format("%.4gk", value / 1e3) + suffix;
  return Format("%.4g", value) + suffix;
}

std::string FormatText(const CompareReport& report) {
  std::ostringstream out;
  out << "base:      " << report.base.source << " (" << report.base.benchmarks << " benchmarks, "
      << Repetitions(report.base) << ")\n";
  out << "contender: " << report.contender.source << " (" << report.contender.benchmarks
      << " benchmarks, " << Repetitions(report.contender) << ")\n";
  out << Header(report) << "\n\n";

  const auto rows = Ordered(report);
  size_t name_width = 15;
  for (const auto* m : rows) name_width = std::max(name_width, m->name.size());
  const std::string ci_label =
      std::to_string(static_cast<int>(std::lround(report.policy.confidence * 100))) + "% CI";
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %12s %12s %8s %-18s %9s %9s %9s  %s\n",
                static_cast<int>(name_width), "Benchmark", "Base", "Contender", "Change",
                ci_label.c_str(), "p(U)", "p(Welch)", "p(adj)", "Verdict");
  out << line;
  for (const auto* m : rows) {
    std::snprintf(line, sizeof line, "%-*s %12s %12s %8s %-18s %9s %9s %9s  %s\n",
                  static_cast<int>(name_width), m->name.c_str(),
                  FormatValue(m->base.median, report.unit).c_str(),
                  FormatValue(m->contender.median, report.unit).c_str(),
                  SignedPercent(m->change).c_str(), Interval(m->change_ci).c_str(),
                  PValue(m->p_utest).c_str(), PValue(m->p_welch).c_str(),
                  PValue(m->p_adjusted).c_str(), std::string(VerdictName(m->verdict)).c_str());
    out << line;
  }
  const auto& suite = report.verdicts.suite;
  if (suite.count > 0) {
    std::snprintf(
        line, sizeof line, "%-*s %12s %12s %8s %-18s\n", static_cast<int>(name_width),
        "OVERALL_GEOMEAN", "", "", SignedPercent(suite.geomean_ratio - 1).c_str(),
        ("[" + SignedPercent(suite.ci.lower - 1) + ", " + SignedPercent(suite.ci.upper - 1) + "]")
            .c_str());
    out << line;
  }
  out << "\n" << Counts(report) << "\n";
  bool any_detail = false;
  for (const auto* m : rows) {
    if (m->verdict == stats::Verdict::kEquivalent) continue;
    if (!any_detail) out << "\n";
    any_detail = true;
    out << "  " << VerdictName(m->verdict) << " " << m->name << ": " << m->reason << "\n";
  }
  if (!report.warnings.empty()) {
    out << "\nwarnings:\n";
    for (const auto& w : report.warnings) out << "  - " << w << "\n";
  }
  return out.str();
}

std::string FormatMarkdown(const CompareReport& report) {
  std::ostringstream out;
  const auto& v = report.verdicts;
  out << "### perfwarden compare: " << (v.regressions > 0 ? "regression found" : "no regression")
      << "\n\n";
  out << "`" << report.contender.source << "` (" << Repetitions(report.contender) << ") against `"
      << report.base.source << "` (" << Repetitions(report.base) << "); " << Header(report)
      << ".\n\n**" << Counts(report) << "**";
  if (v.suite.count > 0) {
    out << "; overall geometric mean " << SignedPercent(v.suite.geomean_ratio - 1) << " ["
        << SignedPercent(v.suite.ci.lower - 1) << ", " << SignedPercent(v.suite.ci.upper - 1)
        << "]";
  }
  out << ".\n\n";
  out << "| Benchmark | Base | Contender | Change | "
      << static_cast<int>(std::lround(report.policy.confidence * 100))
      << "% CI | p (U) | p (Welch) | p (adj.) | Verdict |\n";
  out << "|---|---:|---:|---:|---|---:|---:|---:|---|\n";
  for (const auto* m : Ordered(report)) {
    std::string verdict(VerdictName(m->verdict));
    if (m->verdict == stats::Verdict::kRegression || m->verdict == stats::Verdict::kImprovement) {
      verdict = "**" + verdict + "**";
    }
    out << "| `" << m->name << "` | " << FormatValue(m->base.median, report.unit) << " | "
        << FormatValue(m->contender.median, report.unit) << " | " << SignedPercent(m->change)
        << " | " << Interval(m->change_ci) << " | " << PValue(m->p_utest) << " | "
        << PValue(m->p_welch) << " | " << PValue(m->p_adjusted) << " | " << verdict << " |\n";
  }
  bool any_detail = false;
  for (const auto* m : Ordered(report)) {
    if (m->verdict == stats::Verdict::kEquivalent) continue;
    if (!any_detail) out << "\n";
    any_detail = true;
    out << "- **" << VerdictName(m->verdict) << "** `" << m->name << "`: " << m->reason << "\n";
  }
  if (!report.warnings.empty()) {
    out << "\n> [!WARNING]\n";
    for (const auto& w : report.warnings) out << "> - " << w << "\n";
  }
  return out.str();
}

}  // namespace perfwarden::compare
