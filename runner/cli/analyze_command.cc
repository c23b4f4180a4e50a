// `perfgate analyze FILE|-`: change points of one series, offline, with the server's history
// detector (stats/history_detector.h: e-divisive means as Apache Otava runs it, then a
// confirmation on median levels), or with raw e-divisive (`--detector e-divisive`). Not a gate:
// exit 0 whatever it finds, 2 on bad input, so scripts and quality measurements can run it over a
// whole corpus.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "judge/threshold_rule.h"
#include "runner/cli/commands.h"
#include "runner/cli/series_input.h"
#include "stats/change_points.h"
#include "stats/descriptive.h"
#include "stats/history_detector.h"

namespace perfgate::cli {
namespace {

struct AnalyzeArgs {
  std::string file;
  std::string format = "text";
  std::string detector = "perfgate";
  std::size_t window = stats::HistoryOptions{}.window;
  double max_pvalue = stats::HistoryOptions{}.max_pvalue;
  std::string threshold = "5%";
  std::size_t level_points = stats::HistoryOptions{}.level_points;
  std::size_t min_segment = stats::HistoryOptions{}.min_segment;
  bool no_rank_test = false;
};

// One reported change, whichever detector found it.
struct Reported {
  std::size_t index = 0;
  double magnitude = 0;  // signed relative change of level
  double p_value = 1;
  double level_before = 0, level_after = 0;  // perfgate: medians; e-divisive: means
  double mean_before = 0, mean_after = 0;    // means of the segments up to the neighbours
  std::vector<std::string> detectors;
};

struct AnalyzeResult {
  std::size_t points = 0;
  bool raw = false;  // --detector e-divisive
  stats::HistoryOptions options;
  std::vector<Reported> change_points;
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
  std::string out = (r.raw ? "e-divisive, window " : "window ") + std::to_string(r.options.window) +
                    ", max p-value " + PValue(r.options.max_pvalue) + ", threshold " +
                    Percent(r.options.threshold, "%.4g%%");
  if (!r.raw) out += ", min segment " + std::to_string(r.options.min_segment);
  if (!r.raw && !r.options.rank_test) out += ", no rank test";
  return out;
}

std::string FormatText(const AnalyzeResult& r) {
  const std::string points = std::to_string(r.points);
  if (r.change_points.empty()) {
    return "no change points in " + points + " points (" + Summary(r) + ")\n";
  }
  const std::size_t n = r.change_points.size();
  std::string out = std::to_string(n) + (n == 1 ? " change point" : " change points") + " in " +
                    points + " points (" + Summary(r) + "):\n";
  for (const Reported& cp : r.change_points) {
    out += "point " + std::to_string(cp.index) + ": " + Percent(cp.magnitude, "%+.1f%%") + " (p " +
           PValue(cp.p_value) + "), level " + Level(cp.level_before) + " -> " +
           Level(cp.level_after) + "\n";
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
  for (const Reported& cp : r.change_points) {
    out += "| " + std::to_string(cp.index) + " | " + Percent(cp.magnitude, "%+.1f%%") + " | " +
           PValue(cp.p_value) + " | " + Level(cp.level_before) + " | " + Level(cp.level_after) +
           " |\n";
  }
  return out;
}

std::string FormatJson(const AnalyzeResult& r) {
  nlohmann::ordered_json out;
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
  for (const Reported& cp : r.change_points) {
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
  return out.dump(2) + "\n";
}

int Fail(const Error& error) {
  std::fprintf(stderr, "perfgate: error: %s\n", error.ToString().c_str());
  return kExitUsage;
}

// Raw e-divisive: Otava's answer, its merge step dropping changes below the threshold.
Result<std::vector<Reported>> RawEDivisive(std::span<const double> levels,
                                           const stats::HistoryOptions& options) {
  auto analysis = stats::DetectChangePoints(
      levels, stats::ChangePointOptions{options.window, options.max_pvalue, options.threshold});
  if (!analysis) return tl::unexpected(analysis.error());
  std::vector<Reported> out;
  for (const stats::ChangePoint& cp : analysis->change_points) {
    out.push_back({cp.index,
                   cp.forward_change,
                   cp.p_value,
                   cp.mean_before,
                   cp.mean_after,
                   cp.mean_before,
                   cp.mean_after,
                   {"e-divisive"}});
  }
  return out;
}

Result<std::vector<Reported>> Perfgate(std::span<const double> levels,
                                       const stats::HistoryOptions& options) {
  auto steps = stats::DetectSteps(levels, options);
  if (!steps) return tl::unexpected(steps.error());
  std::vector<Reported> out;
  for (std::size_t k = 0; k < steps->size(); ++k) {
    const stats::Step& s = (*steps)[k];
    const std::size_t lo = k == 0 ? 0 : (*steps)[k - 1].index;
    const std::size_t hi = k + 1 == steps->size() ? levels.size() : (*steps)[k + 1].index;
    out.push_back({s.index, s.magnitude, s.p_value, s.level_before, s.level_after,
                   stats::Mean(levels.subspan(lo, s.index - lo)),
                   stats::Mean(levels.subspan(s.index, hi - s.index)), s.detectors});
  }
  return out;
}

int RunAnalyze(const AnalyzeArgs& args) {
  AnalyzeResult result;
  result.raw = args.detector == "e-divisive";
  result.options.window = args.window;
  result.options.max_pvalue = args.max_pvalue;
  result.options.level_points = args.level_points;
  result.options.min_segment = args.min_segment;
  result.options.rank_test = !args.no_rank_test;
  result.options.threshold = 0;
  // 0 keeps every significant change (Otava's own default); compare's parser refuses it.
  if (args.threshold != "0" && args.threshold != "0%") {
    auto threshold = judge::ParseThreshold(args.threshold);
    if (!threshold) return Fail(threshold.error());
    result.options.threshold = *threshold;
  }
  auto points = ReadSeries(args.file);
  if (!points) return Fail(points.error());
  const std::vector<double> levels = PointLevels(*points);
  result.points = levels.size();
  auto found = result.raw ? RawEDivisive(levels, result.options) : Perfgate(levels, result.options);
  if (!found) return Fail(found.error());
  result.change_points = std::move(*found);

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
      "Find the change points of one benchmark series, offline, with the server's history "
      "detector (e-divisive means with a t-test, as Apache Otava, then steps confirmed on median "
      "levels and a rank test). A point with several repetitions counts as their median. Exit 0 "
      "whatever is "
      "found, 2 on bad input");
  analyze
      ->add_option("file", args.file,
                   "Series: JSON [1.0, ...] or [[reps], ...], or CSV (a row per point, columns "
                   "are repetitions); - = stdin")
      ->required();
  analyze->add_option("--format", args.format, "Output format")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  analyze
      ->add_option("--detector", args.detector,
                   "perfgate (the server's) or e-divisive (raw Otava: the threshold is its "
                   "min_magnitude, no confirmation)")
      ->check(CLI::IsMember({"perfgate", "e-divisive"}))
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
  analyze
      ->add_option("--level-points", args.level_points,
                   "A level is the median of at most this many points each side of a step")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40))
      ->capture_default_str();
  analyze
      ->add_option("--min-segment", args.min_segment,
                   "Points a level must hold on each side of a step (a single outlier is not one)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40))
      ->capture_default_str();
  analyze->add_flag("--no-rank-test", args.no_rank_test,
                    "Do not also require a Mann-Whitney U p-value <= --max-pvalue between the "
                    "points of a step's two levels");
  analyze->callback([args_ptr, exit_code]() { *exit_code = RunAnalyze(*args_ptr); });
}

}  // namespace perfgate::cli
