// `perfgate analyze`'s answer: the change points one detector found in a series, with the
// parameters it ran with, as text, Markdown or JSON.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "stats/history_detector.h"

namespace perfgate::report {

// One reported change, whichever detector found it.
struct ChangePointReport {
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
  std::vector<ChangePointReport> change_points;
};

std::string FormatAnalyzeText(const AnalyzeResult& result);
std::string FormatAnalyzeMarkdown(const AnalyzeResult& result);
std::string FormatAnalyzeJson(const AnalyzeResult& result);

}  // namespace perfgate::report
