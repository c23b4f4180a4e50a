// SPDX-License-Identifier: Apache-2.0
// How `perfwarden bisect` judges what it measures: a call is made only when an interval clears it,
// never on a point estimate alone (docs/bisect.md, "How it decides"). The ends: REPRODUCED when
// the bad end is worse by at least the threshold and significantly, NOT REPRODUCED when the
// interval of the change lies below the threshold (the data rule out a regression of that size),
// otherwise UNDECIDED and the caller measures more. A probe: GOOD when the interval of its
// position between the two ends lies below the midpoint, BAD when above it, otherwise UNKNOWN
// (the caller measures more, doubling as Pinpoint does). Each call is a one-sided test at
// `alpha`: the intervals are (1 - 2 alpha) bootstrap intervals of medians.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/metric.h"

namespace perfwarden::bisect {

enum class Side { kGood, kBad, kUnknown };

struct Decision {
  Side side = Side::kUnknown;
  double median = 0;
  double fraction = 0;  // (median - good) / (bad - good): 0 at the good level, 1 at the bad
  double fraction_low = 0, fraction_high = 0;  // its bootstrap interval
  double p_vs_good = 1;                        // two-sided Mann-Whitney U, for the evidence table
  double p_vs_bad = 1;
  bool partial = false;  // the interval excludes both ends' levels: a partial step
  std::string reason;    // one line for the evidence table
};

struct DecideOptions {
  double alpha = 0.01;  // per call (one-sided); alpha above 0.25 counts as 0.25
};

// The confidence of the intervals for a call at `alpha`: 1 - 2 alpha (0.98 at 0.01).
double CallConfidence(double alpha);

Decision Decide(std::span<const double> good, std::span<const double> bad,
                std::span<const double> probe, const DecideOptions& options);

// What the measurements of the two ends say.
enum class Reproduction { kReproduced, kNotReproduced, kUndecided };
std::string_view ReproductionName(Reproduction outcome);  // "reproduced", "not_reproduced",
                                                          // "undecided"
std::optional<Reproduction> ParseReproduction(std::string_view name);

// The endpoints: whether the bad end is worse than the good end by at least `threshold` (a
// fraction, 0.05 for 5%) in the metric's direction, and significantly (U test at `alpha`).
struct EndpointCheck {
  Reproduction outcome = Reproduction::kNotReproduced;
  bool reproduced = false;         // outcome == kReproduced
  double change = 0;               // median(bad) / median(good) - 1
  double ci_low = 0, ci_high = 0;  // bootstrap interval of `change` at `confidence`
  double confidence = 0;
  double p_value = 1;
  int repetitions = 0;  // per end (the smaller side)
  // Undecided: repetitions per end that would decide if the change is what was measured, at the
  // noise measured (power analysis, 80%); at least the next doubling. -1 when the noise cannot
  // be estimated or the change sits on the threshold. 0 when decided.
  int repetitions_needed = 0;
  std::string reason;
};
EndpointCheck CheckEndpoints(std::span<const double> good, std::span<const double> bad,
                             Direction direction, double threshold, double alpha);

}  // namespace perfwarden::bisect
