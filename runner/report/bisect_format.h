// SPDX-License-Identifier: Apache-2.0
// How `perfwarden bisect` and `perfwarden bisect status` print a bisect's answer: text for a
// terminal, Markdown for an issue or a PR comment (JSON is bisect::ReportJson); and a remote
// bisect's progress while it runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bisect/report.h"
#include "wire/bisect.h"

namespace perfwarden::report {

std::string FormatBisectText(const bisect::Report& report);
std::string FormatBisectMarkdown(const bisect::Report& report);

// What a remote bisect (the server's GET .../bisects/{id}) has done so far, for `bisect status`
// while it runs: its state, the step being measured and by which agent, and the probes decided
// so far.
std::string FormatBisectProgress(const wire::Bisect& bisect);

}  // namespace perfwarden::report
