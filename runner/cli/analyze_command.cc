// SPDX-License-Identifier: Apache-2.0
// `perfwarden analyze FILE|DIR|- ...`: change points of benchmark series, offline, with the
// server's history detector (stats/history_detector.h: e-divisive means as Apache Otava runs it,
// then a confirmation on median levels), or with raw e-divisive (`--detector e-divisive`). Many
// series (several files, a directory, JSON lines) run in one process, each with the output it would
// have alone. Not a gate: exit 0 whatever it finds, 2 on bad input (after analysing every good
// series), so scripts and quality measurements can run it over a whole corpus.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/threshold_rule.h"
#include "runner/adapters/series_batch.h"
#include "runner/adapters/series_input.h"
#include "runner/cli/commands.h"
#include "runner/report/analyze_format.h"
#include "stats/change_points.h"
#include "stats/creep.h"
#include "stats/descriptive.h"
#include "stats/history_detector.h"

namespace perfwarden::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  bool jsonl = false;
  std::string format = "text";
  std::string detector = "perfwarden";
  std::size_t window = stats::HistoryOptions{}.window;
  double max_pvalue = stats::HistoryOptions{}.max_pvalue;
  double rank_pvalue = stats::HistoryOptions{}.rank_pvalue;
  std::string threshold = "5%";
  std::size_t level_points = stats::HistoryOptions{}.level_points;
  std::size_t min_segment = stats::HistoryOptions{}.min_segment;
  bool no_rank_test = false;
  std::size_t creep_window = stats::CreepOptions{}.window;
};

int Fail(const Error& error) {
  std::fprintf(stderr, "perfwarden: error: %s\n", error.ToString().c_str());
  return kExitUsage;
}

// Raw e-divisive: Otava's answer, its merge step dropping changes below the threshold.
Result<std::vector<report::ChangePointReport>> RawEDivisive(std::span<const double> levels,
                                                            const stats::HistoryOptions& options) {
  auto analysis = stats::DetectChangePoints(
      levels, stats::ChangePointOptions{options.window, options.max_pvalue, options.threshold});
  if (!analysis) return tl::unexpected(analysis.error());
  std::vector<report::ChangePointReport> out;
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

Result<std::vector<report::ChangePointReport>> Perfwarden(std::span<const double> levels,
                                                          const stats::HistoryOptions& options) {
  auto steps = stats::DetectSteps(levels, options);
  if (!steps) return tl::unexpected(steps.error());
  std::vector<report::ChangePointReport> out;
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

Result<report::AnalyzeResult> AnalyzeOne(const adapters::SeriesPoints& points,
                                         const report::AnalyzeResult& settings) {
  report::AnalyzeResult result = settings;
  const std::vector<double> levels = adapters::PointLevels(points);
  result.points = levels.size();
  auto found =
      result.raw ? RawEDivisive(levels, result.options) : Perfwarden(levels, result.options);
  if (!found) return tl::unexpected(found.error());
  result.change_points = std::move(*found);
  if (result.creep_search) {
    std::vector<std::size_t> steps;
    for (const report::ChangePointReport& cp : result.change_points) steps.push_back(cp.index);
    auto creeps = stats::DetectCreeps(levels, steps, result.creep_options);
    if (!creeps) return tl::unexpected(creeps.error());
    result.creeps = std::move(*creeps);
  }
  return result;
}

void Write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// "analyze: 37/160 series" on a terminal's stderr, for batches long enough to wait for.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), shown_(total >= 20 && isatty(2) == 1) {}
  void Step(std::size_t done) const {
    if (shown_) std::fprintf(stderr, "\ranalyze: %zu/%zu series", done, total_);
  }
  void Clear() const {
    if (shown_) std::fputs("\r\033[K", stderr);
  }

 private:
  std::size_t total_;
  bool shown_;
};

int RunAnalyze(const AnalyzeArgs& args) {
  report::AnalyzeResult settings;
  settings.raw = args.detector == "e-divisive";
  settings.options.window = args.window;
  settings.options.max_pvalue = args.max_pvalue;
  settings.options.rank_pvalue = args.rank_pvalue;
  settings.options.level_points = args.level_points;
  settings.options.min_segment = args.min_segment;
  settings.options.rank_test = !args.no_rank_test;
  settings.options.threshold = 0;
  // 0 keeps every significant change (Otava's own default); compare's parser refuses it.
  if (args.threshold != "0" && args.threshold != "0%") {
    auto threshold = ParseThreshold(args.threshold);
    if (!threshold) return Fail(threshold.error());
    settings.options.threshold = *threshold;
  }
  // Creeps need a threshold to drift beyond; raw e-divisive is Otava's answer alone.
  settings.creep_search = !settings.raw && settings.options.threshold > 0;
  settings.creep_options.threshold = settings.options.threshold;
  settings.creep_options.window = args.creep_window;
  settings.creep_options.min_points =
      std::min(settings.creep_options.min_points, args.creep_window);
  settings.creep_options.min_segment = settings.options.min_segment;
  const adapters::SeriesBatch batch = adapters::ReadSeriesBatch(args.inputs, args.jsonl);
  if (!batch.many) {  // one series: exactly the one-series output
    const adapters::NamedSeries& only = batch.series.front();
    if (!only.points) return Fail(only.points.error());
    auto result = AnalyzeOne(*only.points, settings);
    if (!result) return Fail(result.error());
    Write(args.format == "json"       ? report::FormatAnalyzeJson(*result)
          : args.format == "markdown" ? report::FormatAnalyzeMarkdown(*result)
                                      : report::FormatAnalyzeText(*result));
    std::fflush(stdout);
    return kExitPass;
  }

  // Every series is analysed; a bad one is reported (stderr, and "errors" in JSON) and makes the
  // exit code 2 at the end. Text and Markdown stream as each series is done.
  std::vector<report::NamedAnalyzeResult> results;
  std::vector<report::AnalyzeError> errors;
  const Progress progress(batch.series.size());
  bool first = true;
  for (std::size_t i = 0; i < batch.series.size(); ++i) {
    const adapters::NamedSeries& series = batch.series[i];
    progress.Step(i);
    Result<report::AnalyzeResult> result = series.points ? AnalyzeOne(*series.points, settings)
                                                         : tl::unexpected(series.points.error());
    if (!result) {
      progress.Clear();
      std::fflush(stdout);
      std::fprintf(stderr, "perfwarden: error: %s\n", result.error().ToString().c_str());
      errors.push_back({series.name, result.error().ToString()});
      continue;
    }
    if (args.format == "json") {
      results.push_back({series.name, std::move(*result)});
      continue;
    }
    if (!first) Write("\n");
    first = false;
    Write(args.format == "markdown" ? report::FormatAnalyzeNamedMarkdown(series.name, *result)
                                    : report::FormatAnalyzeNamedText(series.name, *result));
  }
  progress.Clear();
  if (args.format == "json") Write(report::FormatAnalyzeBatchJson(results, errors));
  std::fflush(stdout);
  if (!errors.empty()) {
    std::fprintf(stderr, "perfwarden: error: %zu of %zu series could not be analysed\n",
                 errors.size(), batch.series.size());
    return kExitUsage;
  }
  return kExitPass;
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto args_ptr = std::make_shared<AnalyzeArgs>();
  AnalyzeArgs& args = *args_ptr;
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Find the change points of benchmark series, offline, with the server's history "
      "detector (e-divisive means with a t-test, as Apache Otava, then steps confirmed on median "
      "levels and a rank test). A point with several repetitions counts as their median. Exit 0 "
      "whatever is found, 2 on bad input (every other series is still analysed)");
  analyze
      ->add_option("inputs", args.inputs,
                   "Series files: JSON [1.0, ...] or [[reps], ...], or CSV (a row per point, "
                   "columns are repetitions); - = stdin; a directory = its *.csv, *.json and "
                   "*.jsonl files, sorted; *.jsonl = JSON lines, a series per line "
                   "({\"name\": ..., \"values\": [...]} or a bare array). Several series are "
                   "printed each under its name")
      ->required();
  analyze->add_flag("--jsonl", args.jsonl,
                    "Read every input (stdin too) as JSON lines, whatever its name");
  analyze->add_option("--format", args.format, "Output format")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  analyze
      ->add_option("--detector", args.detector,
                   "perfwarden (the server's) or e-divisive (raw Otava: the threshold is its "
                   "min_magnitude, no confirmation)")
      ->check(CLI::IsMember({"perfwarden", "e-divisive"}))
      ->capture_default_str();
  analyze
      ->add_option("--window", args.window, "Points per detection window (windows overlap by half)")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 40))
      ->capture_default_str();
  analyze->add_option("--max-pvalue", args.max_pvalue, "Largest e-divisive p-value of a candidate")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  analyze
      ->add_option("--rank-pvalue", args.rank_pvalue,
                   "Largest Mann-Whitney U p-value (serially corrected) of a confirmed step")
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
  analyze
      ->add_option("--creep-window", args.creep_window,
                   "Points per window of the creep search: a drift beyond the threshold within "
                   "this many points, with no step beyond it, is one creep (not with "
                   "--detector e-divisive or --threshold 0)")
      ->check(CLI::Range(std::size_t{10}, std::size_t{100000}))
      ->capture_default_str();
  analyze->add_flag("--no-rank-test", args.no_rank_test,
                    "Do not also require a Mann-Whitney U p-value <= --rank-pvalue between the "
                    "points of a step's two levels");
  analyze->callback([args_ptr, exit_code]() { *exit_code = RunAnalyze(*args_ptr); });
}

}  // namespace perfwarden::cli
