// Renderings of a CompareReport: a terminal table, GitHub-flavoured Markdown (for job
// summaries and PR comments), and the JSON object documented in docs/cli.md.
#pragma once

#include <string>

#include "runner/compare/compare.h"

namespace perfgate::compare {

std::string FormatText(const CompareReport& report);
std::string FormatMarkdown(const CompareReport& report);
std::string FormatJson(const CompareReport& report);

// A value of the report's metric with a readable unit: "12.3 us", "1.25 G/s", "0.981".
std::string FormatValue(double value, const std::string& unit);

}  // namespace perfgate::compare
