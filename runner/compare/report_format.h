// SPDX-License-Identifier: Apache-2.0
// Renderings of a comparison report for people: a terminal table and GitHub-flavoured Markdown
// (for job summaries and PR comments). judge/compare_json.h writes the JSON object.
#pragma once

#include <string>

#include "judge/compare_report.h"

namespace perfwarden::compare {

std::string FormatText(const judge::CompareReport& report);
std::string FormatMarkdown(const judge::CompareReport& report);

// A value of the report's metric with a readable unit: "12.3 us", "1.25 G/s", "0.981".
std::string FormatValue(double value, const std::string& unit);

}  // namespace perfwarden::compare
