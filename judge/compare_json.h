// SPDX-License-Identifier: Apache-2.0
// A CompareReport as the JSON object documented in docs/cli.md ("perfwarden compare --format
// json"), which GET /api/v1/projects/{project}/compare answers too, so that scripts read one
// shape from either.
#pragma once

#include <string>

#include "judge/compare_report.h"

namespace perfwarden::judge {

// Pretty-printed (2 spaces), with a final newline; NaN and infinities are null.
std::string CompareReportJson(const CompareReport& report);

}  // namespace perfwarden::judge
