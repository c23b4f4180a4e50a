#include "runner/report/analyze_format.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace perfgate::report {
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

}  // namespace

std::string FormatAnalyzeText(const AnalyzeResult& r) {
  const std::string points = std::to_string(r.points);
  if (r.change_points.empty()) {
    return "no change points in " + points + " points (" + Summary(r) + ")\n";
  }
  const std::size_t n = r.change_points.size();
  std::string out = std::to_string(n) + (n == 1 ? " change point" : " change points") + " in " +
                    points + " points (" + Summary(r) + "):\n";
  for (const ChangePointReport& cp : r.change_points) {
    out += "point " + std::to_string(cp.index) + ": " + Percent(cp.magnitude, "%+.1f%%") + " (p " +
           PValue(cp.p_value) + "), level " + Level(cp.level_before) + " -> " +
           Level(cp.level_after) + "\n";
  }
  return out;
}

std::string FormatAnalyzeMarkdown(const AnalyzeResult& r, const std::string& title) {
  std::string out = "### " + title + "\n\n";
  if (r.change_points.empty()) {
    return out + "No change points in " + std::to_string(r.points) + " points (" + Summary(r) +
           ").\n";
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
  return out;
}

namespace {

// `name` first when given (a batch's series).
nlohmann::ordered_json AnalyzeObject(const AnalyzeResult& r, const std::string* name = nullptr) {
  nlohmann::ordered_json out;
  if (name != nullptr) out["name"] = *name;
  out["points"] = r.points;
  out["parameters"] = {{"detector", r.raw ? "e-divisive" : "perfgate"},
                       {"window", r.options.window},
                       {"max_pvalue", r.options.max_pvalue},
                       {"threshold", r.options.threshold}};
  if (!r.raw) {
    out["parameters"]["level_points"] = r.options.level_points;
    out["parameters"]["min_segment"] = r.options.min_segment;
    out["parameters"]["rank_test"] = r.options.rank_test;
  }
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

}  // namespace perfgate::report
