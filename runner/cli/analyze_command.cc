// `perfgate analyze FILE|-`: change points of one series, offline, with the server's detector
// (e-divisive means as Apache Otava runs it). Not a gate: exit 0 whatever it finds, 2 on bad
// input, so scripts and quality measurements can run it over a whole corpus.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/cli/commands.h"
#include "runner/cli/series_input.h"
#include "runner/compare/compare.h"
#include "stats/change_points.h"

namespace perfgate::cli {
namespace {

struct AnalyzeArgs {
  std::string file;
  std::string format = "text";
  std::size_t window = 50;
  double max_pvalue = 0.001;
  std::string threshold = "5%";
};

struct AnalyzeResult {
  std::size_t points = 0;
  stats::ChangePointOptions options;
  std::vector<stats::ChangePoint> change_points;
};

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
  return "window " + std::to_string(r.options.window_len) + ", max p-value " +
         PValue(r.options.max_pvalue) + ", threshold " + Percent(r.options.min_magnitude, "%.4g%%");
}

std::string FormatText(const AnalyzeResult& r) {
  const std::string points = std::to_string(r.points);
  if (r.change_points.empty()) {
    return "no change points in " + points + " points (" + Summary(r) + ")\n";
  }
  const std::size_t n = r.change_points.size();
  std::string out = std::to_string(n) + (n == 1 ? " change point" : " change points") + " in " +
                    points + " points (" + Summary(r) + "):\n";
  for (const stats::ChangePoint& cp : r.change_points) {
    out += "point " + std::to_string(cp.index) + ": " + Percent(cp.forward_change, "%+.1f%%") +
           " (p " + PValue(cp.p_value) + "), level " + Level(cp.mean_before) + " -> " +
           Level(cp.mean_after) + "\n";
  }
  return out;
}

std::string FormatMarkdown(const AnalyzeResult& r) {
  std::string out = "### perfgate analyze\n\n";
  if (r.change_points.empty()) {
    return out + "No change points in " + std::to_string(r.points) + " points (" + Summary(r) +
           ").\n";
  }
  out += std::to_string(r.change_points.size()) + " change point(s) in " +
         std::to_string(r.points) + " points (" + Summary(r) + ").\n\n";
  out += "| Point | Change | p-value | Level before | Level after |\n";
  out += "|---:|---:|---:|---:|---:|\n";
  for (const stats::ChangePoint& cp : r.change_points) {
    out += "| " + std::to_string(cp.index) + " | " + Percent(cp.forward_change, "%+.1f%%") + " | " +
           PValue(cp.p_value) + " | " + Level(cp.mean_before) + " | " + Level(cp.mean_after) +
           " |\n";
  }
  return out;
}

std::string FormatJson(const AnalyzeResult& r) {
  nlohmann::ordered_json out;
  out["points"] = r.points;
  out["parameters"] = {{"window", r.options.window_len},
                       {"max_pvalue", r.options.max_pvalue},
                       {"threshold", r.options.min_magnitude}};
  out["change_points"] = nlohmann::ordered_json::array();
  for (const stats::ChangePoint& cp : r.change_points) {
    // magnitude is the signed relative change of level; the detector's own `magnitude` is
    // Otava's unsigned max-ratio, which would report a 20% drop as +25%.
    out["change_points"].push_back({{"index", cp.index},
                                    {"magnitude", cp.forward_change},
                                    {"p_value", cp.p_value},
                                    {"mean_before", cp.mean_before},
                                    {"mean_after", cp.mean_after},
                                    {"detectors", {"e-divisive"}}});
  }
  return out.dump(2) + "\n";
}

int Fail(const Error& error) {
  std::fprintf(stderr, "perfgate: error: %s\n", error.ToString().c_str());
  return kExitUsage;
}

int RunAnalyze(const AnalyzeArgs& args) {
  AnalyzeResult result;
  result.options.window_len = args.window;
  result.options.max_pvalue = args.max_pvalue;
  // 0 is Otava's own default (keep every significant change); compare's parser refuses it.
  if (args.threshold != "0" && args.threshold != "0%") {
    auto threshold = compare::ParseThreshold(args.threshold);
    if (!threshold) return Fail(threshold.error());
    result.options.min_magnitude = *threshold;
  }
  auto points = ReadSeries(args.file);
  if (!points) return Fail(points.error());
  const std::vector<double> levels = PointLevels(*points);
  result.points = levels.size();
  auto analysis = stats::DetectChangePoints(levels, result.options);
  if (!analysis) return Fail(analysis.error());
  result.change_points = std::move(analysis->change_points);

  std::string text;
  if (args.format == "json") {
    text = FormatJson(result);
  } else if (args.format == "markdown") {
    text = FormatMarkdown(result);
  } else {
    text = FormatText(result);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return kExitPass;
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto args_ptr = std::make_shared<AnalyzeArgs>();
  AnalyzeArgs& args = *args_ptr;
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Find the change points of one benchmark series, offline (e-divisive means with a t-test, "
      "as Apache Otava). A point with several repetitions counts as their median. Exit 0 "
      "whatever is found, 2 on bad input");
  analyze
      ->add_option("file", args.file,
                   "Series: JSON [1.0, ...] or [[reps], ...], or CSV (a row per point, columns "
                   "are repetitions); - = stdin")
      ->required();
  analyze->add_option("--format", args.format, "Output format")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  analyze
      ->add_option("--window", args.window, "Points per detection window (windows overlap by half)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 40))
      ->capture_default_str();
  analyze->add_option("--max-pvalue", args.max_pvalue, "Largest p-value of a kept change point")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  analyze
      ->add_option("--threshold", args.threshold,
                   "Smallest change of level kept: 5% or 0.05 (0 keeps every significant one)")
      ->capture_default_str();
  analyze->callback([args_ptr, exit_code]() { *exit_code = RunAnalyze(*args_ptr); });
}

}  // namespace perfgate::cli
