// SPDX-License-Identifier: Apache-2.0
// `perfwarden analyze`'s answer: the change points one detector found in a series and its creeps
// (drifts), with the parameters it ran with, as text, Markdown or JSON.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "stats/creep.h"
#include "stats/history_detector.h"

namespace perfwarden::report {

// One reported change, whichever detector found it.
struct ChangePointReport {
  std::size_t index = 0;
  double magnitude = 0;  // signed relative change of level
  double p_value = 1;
  double level_before = 0, level_after = 0;  // perfwarden: medians; e-divisive: means
  double mean_before = 0, mean_after = 0;    // means of the segments up to the neighbours
  std::vector<std::string> detectors;
};

struct AnalyzeResult {
  std::size_t points = 0;
  bool raw = false;  // --detector e-divisive
  stats::HistoryOptions options;
  std::vector<ChangePointReport> change_points;
  // Drifts (stats/creep.h), perfwarden's detector only; a creep's `steps` are change points above
  // that it explains (the detector cut the drift into them).
  bool creep_search = false;  // false: raw e-divisive, or a threshold of 0
  stats::CreepOptions creep_options;
  std::vector<stats::Creep> creeps;
};

std::string FormatAnalyzeText(const AnalyzeResult& result);
// `title` is the "### " heading's text.
std::string FormatAnalyzeMarkdown(const AnalyzeResult& result,
                                  const std::string& title = "perfwarden analyze");
std::string FormatAnalyzeJson(const AnalyzeResult& result);

// A batch (several series in one process): each series' output is the one-series output under its
// name. Text: "== NAME ==" then FormatAnalyzeText; Markdown: FormatAnalyzeMarkdown titled `NAME`.
std::string FormatAnalyzeNamedText(const std::string& name, const AnalyzeResult& result);
std::string FormatAnalyzeNamedMarkdown(const std::string& name, const AnalyzeResult& result);

struct NamedAnalyzeResult {
  std::string name;
  AnalyzeResult result;
};
struct AnalyzeError {
  std::string name;
  std::string message;
};
// {"series": [{"name": NAME, <FormatAnalyzeJson's object>}, ...], "errors": [{"name", "error"}]}
// in input order; "errors" is empty when every input was read.
std::string FormatAnalyzeBatchJson(const std::vector<NamedAnalyzeResult>& results,
                                   const std::vector<AnalyzeError>& errors);

}  // namespace perfwarden::report
