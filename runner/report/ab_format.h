// SPDX-License-Identifier: Apache-2.0
// `perfwarden ab`'s answer for a terminal, a Markdown summary, or as JSON: B's speedup over A on
// the primary metric with its CI, then a row per metric (medians, change, CI, p, verdict).
#pragma once

#include <cstdint>
#include <string>

#include "runner/compare/ab.h"

namespace perfwarden::report {

std::string FormatAbText(const compare::AbReport& report);
std::string FormatAbMarkdown(const compare::AbReport& report);
// The JSON also names the two commands, the runs of each and the seed of their order, so that
// the comparison can be repeated.
std::string FormatAbJson(const compare::AbReport& report, const std::string& command_a,
                         const std::string& command_b, int runs, std::uint64_t seed);

}  // namespace perfwarden::report
