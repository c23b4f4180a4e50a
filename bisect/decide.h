// How `perfgate bisect` judges a probe: its samples against those of the good and the bad end.
// A probe is GOOD when it differs significantly from the bad end and sits nearer the good one,
// BAD symmetrically; when it differs from neither (too few repetitions for the noise) it is
// UNKNOWN and the caller measures more, doubling as Pinpoint does. A probe that differs from
// both ends sits on a partial step: it is classified by the side it is nearer to, and the answer
// will say that the culprit explains only part of the change.
#pragma once

#include <span>
#include <string>

#include "core/metric.h"

namespace perfgate::bisect {

enum class Side { kGood, kBad, kUnknown };

struct Decision {
  Side side = Side::kUnknown;
  double median = 0;
  double fraction = 0;   // (median - good) / (bad - good): 0 at the good level, 1 at the bad
  double p_vs_good = 1;  // two-sided Mann-Whitney U
  double p_vs_bad = 1;
  bool partial = false;  // differs from both ends
  std::string reason;    // one line for the evidence table
};

struct DecideOptions {
  double alpha = 0.01;  // per comparison
};

Decision Decide(std::span<const double> good, std::span<const double> bad,
                std::span<const double> probe, const DecideOptions& options);

// The endpoints: whether the bad end is worse than the good end by at least `threshold` (a
// fraction, 0.05 for 5%) and significantly (U test at `alpha`), in the metric's direction.
struct EndpointCheck {
  bool reproduced = false;
  double change = 0;  // median(bad) / median(good) - 1
  double p_value = 1;
  std::string reason;
};
EndpointCheck CheckEndpoints(std::span<const double> good, std::span<const double> bad,
                             Direction direction, double threshold, double alpha);

}  // namespace perfgate::bisect
