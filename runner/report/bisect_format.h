// How `perfgate bisect` and `perfgate bisect status` print a bisect's answer: text for a
// terminal, Markdown for an issue or a PR comment (JSON is bisect::ReportJson).
#pragma once

#include <string>

#include "runner/bisect/report.h"

namespace perfgate::report {

std::string FormatBisectText(const bisect::Report& report);
std::string FormatBisectMarkdown(const bisect::Report& report);

}  // namespace perfgate::report
