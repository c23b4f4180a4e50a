// SPDX-License-Identifier: Apache-2.0
#include "runner/report/ab_format.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace perfwarden::report {
namespace {

using nlohmann::ordered_json;

std::string Number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

}  // namespace

std::string FormatAbText(const compare::AbReport& r) {
  std::string out;
  if (!r.rows.empty() && r.rows.front().name == r.primary) {
    char line[256];
    std::snprintf(line, sizeof line, "%s is %.3gx as fast as %s on %s [%.3g, %.3g] (95%% CI), %s\n",
                  r.name_b.c_str(), r.speedup, r.name_a.c_str(), r.primary.c_str(), r.speedup_low,
                  r.speedup_high, r.rows.front().verdict.c_str());
    out += line;
  }
  char header[256];
  std::snprintf(header, sizeof header, "\n  %-26s %10s %10s %9s   %-18s  %7s  %s\n", "metric",
                r.name_a.c_str(), r.name_b.c_str(), "change", "95% CI", "p", "verdict");
  out += header;
  for (const compare::AbRow& row : r.rows) {
    char line[320];
    std::snprintf(line, sizeof line, "  %-26s %10s %10s %9s   [%7s, %7s]  %7.2g  %s\n",
                  (row.name + (row.unit.empty() ? "" : " (" + row.unit + ")")).c_str(),
                  Number(row.median_a).c_str(), Number(row.median_b).c_str(),
                  SignedPercent(row.change).c_str(), SignedPercent(row.ci_low).c_str(),
                  SignedPercent(row.ci_high).c_str(), row.p_value, row.verdict.c_str());
    out += line;
  }
  out += "  (better or worse: significant at the U test and beyond +/-" +
         SignedPercent(r.threshold).substr(1) + "; no difference: the CI within it)\n";
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string FormatAbMarkdown(const compare::AbReport& r) {
  std::string out = "### perfwarden ab: " + r.name_b + " against " + r.name_a + "\n\n";
  if (!r.rows.empty() && r.rows.front().name == r.primary) {
    out += "**" + r.name_b + " is " + Number(r.speedup) + "x as fast** on " + r.primary + " [" +
           Number(r.speedup_low) + ", " + Number(r.speedup_high) + "] (95% CI), " +
           r.rows.front().verdict + ".\n\n";
  }
  out += "| metric | " + r.name_a + " | " + r.name_b +
         " | change | 95% CI | p | verdict |\n|---|---:|---:|---:|---|---:|---|\n";
  for (const compare::AbRow& row : r.rows) {
    out += "| " + row.name + (row.unit.empty() ? "" : " (" + row.unit + ")") + " | " +
           Number(row.median_a) + " | " + Number(row.median_b) + " | " + SignedPercent(row.change) +
           " | [" + SignedPercent(row.ci_low) + ", " + SignedPercent(row.ci_high) + "] | " +
           Number(row.p_value) + " | " + row.verdict + " |\n";
  }
  for (const std::string& w : r.warnings) out += "\n> " + w + "\n";
  return out;
}

std::string FormatAbJson(const compare::AbReport& r, const std::string& command_a,
                         const std::string& command_b, int runs, std::uint64_t seed) {
  ordered_json rows = ordered_json::array();
  for (const compare::AbRow& row : r.rows) {
    rows.push_back({{"metric", row.name},
                    {"unit", row.unit},
                    {"direction", std::string(DirectionName(row.direction))},
                    {"n_a", row.n_a},
                    {"n_b", row.n_b},
                    {"median_a", row.median_a},
                    {"median_b", row.median_b},
                    {"change", row.change},
                    {"change_ci", {row.ci_low, row.ci_high}},
                    {"p_value", row.p_value},
                    {"verdict", row.verdict}});
  }
  const ordered_json out = {{"a", {{"name", r.name_a}, {"command", command_a}}},
                            {"b", {{"name", r.name_b}, {"command", command_b}}},
                            {"runs", runs},
                            {"seed", seed},
                            {"primary", r.primary},
                            {"threshold", r.threshold},
                            {"speedup", r.speedup},
                            {"speedup_ci", {r.speedup_low, r.speedup_high}},
                            {"metrics", rows},
                            {"warnings", r.warnings}};
  return out.dump(2) + "\n";
}

}  // namespace perfwarden::report
