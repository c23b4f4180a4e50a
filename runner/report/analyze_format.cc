// SPDX-License-Identifier: Apache-2.0
#include "runner/report/analyze_format.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace perfwarden::report {
namespace {

// Levels of any scale: nanoseconds (26705.0) and seconds (0.001234) both keep their digits.
std::string Level(double x) {
  char buffer[64];
  const double magnitude = std::fabs(x);
  if (magnitude >= 100 && magnitude < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.1f", x);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4g", x);
  }
  return buffer;
}

std::string Percent(double fraction, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, fraction * 100);
  return buffer;
}

std::string PValue(double p) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2g", p);
  return buffer;
}

std::string Summary(const AnalyzeResult& r) {
  std::string out = (r.raw ? "e-divisive, window " : "window ") + std::to_string(r.options.window) +
                    ", max p-value " + PValue(r.options.max_pvalue) + ", threshold " +
                    Percent(r.options.threshold, "%.4g%%");
  if (!r.raw) out += ", min segment " + std::to_string(r.options.min_segment);
  if (!r.raw && !r.options.rank_test) out += ", no rank test";
  return out;
}

std::string Points(const std::vector<std::size_t>& indices) {
  std::string out;
  for (std::size_t i : indices) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

std::string CreepRange(const stats::Creep& c) {
  return std::to_string(c.start) + "-" + std::to_string(c.end);
}

std::string CreepSlope(const stats::Creep& c) { return Percent(c.slope, "%+.3g%%"); }

std::string CreepInterval(const stats::Creep& c, const char* separator) {
  return Percent(c.slope_low, "%+.3g%%") + separator + Percent(c.slope_high, "%+.3g%%");
}

// The creeps, after the change points: "1 creep (window 60, ...):\npoints 10-90: ...".
std::string CreepsText(const AnalyzeResult& r) {
  if (r.creeps.empty()) return "";
  const std::size_t n = r.creeps.size();
  const int confidence = static_cast<int>(std::lround(r.creep_options.confidence * 100));
  std::string out = std::to_string(n) + (n == 1 ? " creep" : " creeps") + " (drift beyond " +
                    Percent(r.creep_options.threshold, "%.4g%%") +
                    " with no step beyond it; window " + std::to_string(r.creep_options.window) +
                    ", max p-value " + PValue(r.creep_options.max_pvalue) + "):\n";
  for (const stats::Creep& c : r.creeps) {
    out += "points " + CreepRange(c) + ": " + Percent(c.total_change, "%+.1f%%") + ", " +
           CreepSlope(c) + " per point (" + std::to_string(confidence) + "% CI " +
           CreepInterval(c, " to ") + ", p " + PValue(c.p_value) + "), level " +
           Level(c.level_start) + " -> " + Level(c.level_end);
    if (!c.steps.empty()) out += "; replaces the change points at " + Points(c.steps);
    out += "\n";
  }
  return out;
}

}  // namespace

std::string FormatAnalyzeText(const AnalyzeResult& r) {
  const std::string points = std::to_string(r.points);
  if (r.change_points.empty()) {
    return "no change points in " + points + " points (" + Summary(r) + ")\n" + CreepsText(r);
  }
  const std::size_t n = r.change_points.size();
  std::string out = std::to_string(n) + (n == 1 ? " change point" : " change points") + " in " +
                    points + " points (" + Summary(r) + "):\n";
  for (const ChangePointReport& cp : r.change_points) {
    out += "point " + std::to_string(cp.index) + ": " + Percent(cp.magnitude, "%+.1f%%") + " (p " +
           PValue(cp.p_value) + "), level " + Level(cp.level_before) + " -> " +
           Level(cp.level_after) + "\n";
  }
  return out + CreepsText(r);
}

namespace {

std::string CreepsMarkdown(const AnalyzeResult& r) {
  if (r.creeps.empty()) return "";
  const int confidence = static_cast<int>(std::lround(r.creep_options.confidence * 100));
  std::string out = "\n" + std::to_string(r.creeps.size()) + " creep(s): drift beyond " +
                    Percent(r.creep_options.threshold, "%.4g%%") +
                    " with no step beyond it (window " + std::to_string(r.creep_options.window) +
                    ", max p-value " + PValue(r.creep_options.max_pvalue) + ").\n\n";
  out += "| Points | Change | Per point | " + std::to_string(confidence) +
         "% CI per point | p-value | Level start | Level end | Replaces change points |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const stats::Creep& c : r.creeps) {
    out += "| " + CreepRange(c) + " | " + Percent(c.total_change, "%+.1f%%") + " | " +
           CreepSlope(c) + " | " + CreepInterval(c, " .. ") + " | " + PValue(c.p_value) + " | " +
           Level(c.level_start) + " | " + Level(c.level_end) + " | " + Points(c.steps) + " |\n";
  }
  return out;
}

}  // namespace

std::string FormatAnalyzeMarkdown(const AnalyzeResult& r, const std::string& title) {
  std::string out = "### " + title + "\n\n";
  if (r.change_points.empty()) {
    return out + "No change points in " + std::to_string(r.points) + " points (" + Summary(r) +
           ").\n" + CreepsMarkdown(r);
  }
  out += std::to_string(r.change_points.size()) + " change point(s) in " +
         std::to_string(r.points) + " points (" + Summary(r) + ").\n\n";
  out += "| Point | Change | p-value | Level before | Level after |\n";
  out += "|---:|---:|---:|---:|---:|\n";
  for (const ChangePointReport& cp : r.change_points) {
    out += "| " + std::to_string(cp.index) + " | " + Percent(cp.magnitude, "%+.1f%%") + " | " +
           PValue(cp.p_value) + " | " + Level(cp.level_before) + " | " + Level(cp.level_after) +
           " |\n";
  }
  return out + CreepsMarkdown(r);
}

namespace {

// `name` first when given (a batch's series).
nlohmann::ordered_json AnalyzeObject(const AnalyzeResult& r, const std::string* name = nullptr) {
  nlohmann::ordered_json out;
  if (name != nullptr) out["name"] = *name;
  out["points"] = r.points;
  out["parameters"] = {{"detector", r.raw ? "e-divisive" : "perfwarden"},
                       {"window", r.options.window},
                       {"max_pvalue", r.options.max_pvalue},
                       {"threshold", r.options.threshold}};
  if (!r.raw) {
    out["parameters"]["level_points"] = r.options.level_points;
    out["parameters"]["min_segment"] = r.options.min_segment;
    out["parameters"]["rank_test"] = r.options.rank_test;
    out["parameters"]["rank_pvalue"] = r.options.rank_pvalue;
    out["parameters"]["serial_correction"] = r.options.serial_correction;
    out["parameters"]["mean_shift"] = r.options.mean_shift;
    out["parameters"]["mean_shift_penalty"] = r.options.mean_shift_penalty;
    out["parameters"]["clip_sigmas"] = r.options.clip_sigmas;
  }
  if (r.creep_search) out["parameters"]["creep_window"] = r.creep_options.window;
  out["change_points"] = nlohmann::ordered_json::array();
  for (const ChangePointReport& cp : r.change_points) {
    // magnitude is the signed relative change of level; Otava's own `magnitude` is an unsigned
    // max-ratio, which would report a 20% drop as +25%.
    out["change_points"].push_back({{"index", cp.index},
                                    {"magnitude", cp.magnitude},
                                    {"p_value", cp.p_value},
                                    {"mean_before", cp.mean_before},
                                    {"mean_after", cp.mean_after},
                                    {"level_before", cp.level_before},
                                    {"level_after", cp.level_after},
                                    {"detectors", cp.detectors}});
  }
  // total_change and slope are relative (0.09 = +9%); slope is per point, its interval Sen's.
  out["creeps"] = nlohmann::ordered_json::array();
  for (const stats::Creep& c : r.creeps) {
    out["creeps"].push_back({{"start", c.start},
                             {"end", c.end},
                             {"total_change", c.total_change},
                             {"slope", c.slope},
                             {"slope_low", c.slope_low},
                             {"slope_high", c.slope_high},
                             {"p_value", c.p_value},
                             {"level_start", c.level_start},
                             {"level_end", c.level_end},
                             {"replaces", c.steps}});
  }
  return out;
}

}  // namespace

std::string FormatAnalyzeJson(const AnalyzeResult& r) { return AnalyzeObject(r).dump(2) + "\n"; }

std::string FormatAnalyzeNamedText(const std::string& name, const AnalyzeResult& r) {
  return "== " + name + " ==\n" + FormatAnalyzeText(r);
}

std::string FormatAnalyzeNamedMarkdown(const std::string& name, const AnalyzeResult& r) {
  return FormatAnalyzeMarkdown(r, "`" + name + "`");
}

std::string FormatAnalyzeBatchJson(const std::vector<NamedAnalyzeResult>& results,
                                   const std::vector<AnalyzeError>& errors) {
  nlohmann::ordered_json out;
  out["series"] = nlohmann::ordered_json::array();
  for (const NamedAnalyzeResult& named : results) {
    out["series"].push_back(AnalyzeObject(named.result, &named.name));
  }
  out["errors"] = nlohmann::ordered_json::array();
  for (const AnalyzeError& e : errors) {
    out["errors"].push_back({{"name", e.name}, {"error", e.message}});
  }
  return out.dump(2) + "\n";
}

}  // namespace perfwarden::report
