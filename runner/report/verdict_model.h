// SPDX-License-Identifier: Apache-2.0
// What the gate reads in the server's verdict (wire/verdict.h) before rendering it: whether it
// fails, whether the host rather than the code is to blame, and the one order every report lists
// results in.
#pragma once

#include <string_view>
#include <vector>

#include "wire/verdict.h"

namespace perfwarden::report {

// True when the server's outcome is a regression or any result is one: an inconsistent verdict
// fails the gate rather than passing it. A noisy_environment verdict has regressions too.
bool HasRegression(const wire::Verdict& verdict);

// True when the server says noisy_environment and every regression carries an environment note:
// the run measured the host, so it must be repeated rather than judged. A regression without a
// note makes it false (it fails as a regression), so an inconsistent verdict cannot excuse one.
bool IsNoisyEnvironment(const wire::Verdict& verdict);

// The order every report lists results in: REGRESSION by how much worse (largest first), then
// INCONCLUSIVE, UNSTABLE, IMPROVEMENT, NEW, EQUIVALENT, PASS, REPORTED, IGNORED, each by benchmark
// name (digit runs compared as numbers, so BM_Sort/8 precedes BM_Sort/1024), then metric and suite.
std::vector<const wire::MetricResult*> OrderedResults(const wire::Verdict& verdict);
// The pointers point into the verdict: a temporary one would leave them dangling.
std::vector<const wire::MetricResult*> OrderedResults(const wire::Verdict&& verdict) = delete;

// Natural order of names: digit runs compare by value, everything else byte-wise; a strict weak
// order that is total (names differing only in leading zeros fall back to byte order).
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace perfwarden::report
