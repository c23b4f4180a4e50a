// SPDX-License-Identifier: Apache-2.0
// Prints the detection-quality tables of docs/statistics.md ("History detection quality"):
// perfwarden's history detector and the peers' default methods on the labelled corpus.
//
//   history_quality [CORPUS_DIR] [--threshold X --window N --max-pvalue P --level-points N
//                    --min-segment N --rank-test 0|1 --serial-correction 0|1
//                 --rank-pvalue P --mean-shift 0|1 --mean-shift-penalty X --clip-sigmas X]
//                   (perfwarden's; defaults: HistoryOptions{})
//                   [--subset even|odd]  (every other series: tune on one half, check on the other)
//                   [--list CATEGORY]    (perfwarden's detections, series by series)
#include "tests/testing/history_quality.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::string dir = PERFWARDEN_FIXTURES_DIR "/history";
  std::string list;    // --list CATEGORY
  std::string subset;  // --subset even|odd
  perfwarden::stats::HistoryOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      dir = arg;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "history_quality: %s needs a value\n", arg.c_str());
      return 2;
    }
    const char* value = argv[++i];
    if (perfwarden::quality::SetDetectorOption(options, arg, value)) continue;
    if (arg == "--subset") {
      subset = value;
    } else if (arg == "--list") {
      list = value;
    } else {
      std::fprintf(stderr, "history_quality: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  auto corpus = perfwarden::quality::LoadCorpus(dir);
  if (!corpus) {
    std::fprintf(stderr, "history_quality: %s\n", corpus.error().ToString().c_str());
    return 1;
  }
  if (!subset.empty()) {
    std::vector<perfwarden::quality::LabelledSeries> half;
    for (std::size_t i = 0; i < corpus->size(); ++i) {
      if ((i % 2 == 0) == (subset == "even")) half.push_back((*corpus)[i]);
    }
    *corpus = std::move(half);
  }
  if (!list.empty()) {
    for (const auto& series : *corpus) {
      if (series.category != list) continue;
      auto steps = perfwarden::stats::DetectSteps(series.levels, options);
      if (!steps) return 1;
      const auto score = perfwarden::quality::ScoreSeries(series, [&] {
        std::vector<std::size_t> indices;
        for (const auto& step : *steps) indices.push_back(step.index);
        return indices;
      }());
      std::printf("%s (%zu points): TP %zu FP %zu FN %zu; truth", series.name.c_str(),
                  series.levels.size(), score.tp, score.fp, score.fn);
      for (const auto& step : series.steps) std::printf(" %zu:%+.3f", step.index, step.size);
      std::printf("; found");
      for (const auto& step : *steps) {
        std::printf(" %zu:%+.3f(p %.1g)", step.index, step.magnitude, step.p_value);
      }
      std::printf("\n");
    }
    return 0;
  }
  auto scores = perfwarden::quality::Evaluate(*corpus, perfwarden::quality::Methods(options));
  if (!scores) {
    std::fprintf(stderr, "history_quality: %s\n", scores.error().ToString().c_str());
    return 1;
  }
  std::printf(
      "%zu series; perfwarden: threshold %g, window %zu, max p-value %g, level points %zu, "
      "min segment %zu, rank test %s at %g, mean-shift candidates %s (penalty %g, clip %g)\n\n%s",
      corpus->size(), options.threshold, options.window, options.max_pvalue, options.level_points,
      options.min_segment, options.rank_test ? "on" : "off", options.rank_pvalue,
      options.mean_shift ? "on" : "off", options.mean_shift_penalty, options.clip_sigmas,
      perfwarden::quality::FormatTables(*scores).c_str());
  return 0;
}
