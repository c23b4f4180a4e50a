// SPDX-License-Identifier: Apache-2.0
#include "bisect/decide.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/text.h"
#include "stats/bootstrap.h"
#include "stats/descriptive.h"
#include "stats/mann_whitney.h"
#include "stats/power.h"
#include "stats/verdict.h"

namespace perfwarden::bisect {
namespace {

// The bootstraps' seeds are fixed: a decision is a function of the samples, so that a log of
// measurements replays to the same decisions.
constexpr uint64_t kEndsSeed = 0x5eed;
constexpr uint64_t kProbeSeed = 0x5eed + 1;
constexpr int kResamples = 2000;
constexpr double kPower = 0.8;  // of the repetitions-needed advice

std::string Number(const char* format, double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, x);
  return buffer;
}

std::string Percent(double fraction) { return Number("%.0f%%", 100 * fraction); }

double TwoSidedP(std::span<const double> x, std::span<const double> y) {
  const stats::MannWhitneyResult r = stats::MannWhitneyU(x, y);
  return std::isfinite(r.p_two_sided) ? r.p_two_sided : 1.0;
}

std::string CiName(double confidence) {
  return std::to_string(static_cast<int>(std::lround(confidence * 100))) + "% CI";
}

}  // namespace

double CallConfidence(double alpha) { return 1 - 2 * std::clamp(alpha, 1e-6, 0.25); }

Decision Decide(std::span<const double> good, std::span<const double> bad,
                std::span<const double> probe, const DecideOptions& options) {
  Decision d;
  if (good.empty() || bad.empty() || probe.empty()) {
    d.reason = "no samples";
    return d;
  }
  const double g = stats::Median(good);
  const double b = stats::Median(bad);
  d.median = stats::Median(probe);
  d.fraction = b != g ? (d.median - g) / (b - g) : 0.5;
  d.p_vs_good = TwoSidedP(probe, good);
  d.p_vs_bad = TwoSidedP(probe, bad);
  // A replicate in which the ends tie or swap places says nothing about the probe's side: it
  // counts as the midpoint, so that when many do the interval holds the midpoint (UNKNOWN).
  std::vector<double> positions =
      stats::BootstrapMedianPositions(good, bad, probe, kResamples, kProbeSeed);
  for (double& f : positions) {
    if (!std::isfinite(f)) f = 0.5;
  }
  const double confidence = CallConfidence(options.alpha);
  const stats::Interval ci = stats::PercentileInterval(positions, confidence);
  d.fraction_low = ci.lower;
  d.fraction_high = ci.upper;
  if (ci.upper < 0.5) {
    d.side = Side::kGood;
  } else if (ci.lower > 0.5) {
    d.side = Side::kBad;
  }
  d.partial = ci.lower > 0 && ci.upper < 1;
  d.reason = "at " + Percent(d.fraction) + " [" + Percent(ci.lower) + ", " + Percent(ci.upper) +
             "] of the step (" + CiName(confidence) + ")" + "; p vs good " +
             Number("%.2g", d.p_vs_good) + ", vs bad " + Number("%.2g", d.p_vs_bad);
  if (d.side == Side::kUnknown) {
    d.reason += ": the interval holds the midpoint (more repetitions needed)";
  }
  if (d.partial) d.reason += ": differs from both ends (a partial step)";
  return d;
}

std::string_view ReproductionName(Reproduction outcome) {
  switch (outcome) {
    case Reproduction::kReproduced:
      return "reproduced";
    case Reproduction::kNotReproduced:
      return "not_reproduced";
    case Reproduction::kUndecided:
      return "undecided";
  }
  return "undecided";
}

std::optional<Reproduction> ParseReproduction(std::string_view name) {
  for (const Reproduction r :
       {Reproduction::kReproduced, Reproduction::kNotReproduced, Reproduction::kUndecided}) {
    if (ReproductionName(r) == name) return r;
  }
  return std::nullopt;
}

EndpointCheck CheckEndpoints(std::span<const double> good, std::span<const double> bad,
                             Direction direction, double threshold, double alpha) {
  EndpointCheck check;
  if (good.empty() || bad.empty()) {
    check.reason = "no samples at an end";
    return check;
  }
  const double g = stats::Median(good);
  const double b = stats::Median(bad);
  check.change = g != 0 ? b / g - 1 : 0;
  check.p_value = TwoSidedP(good, bad);
  check.confidence = CallConfidence(alpha);
  const stats::Interval ci =
      stats::BootstrapMedianChangeCi(good, bad, {kResamples, check.confidence, kEndsSeed});
  check.ci_low = ci.lower;
  check.ci_high = ci.upper;
  check.repetitions = static_cast<int>(std::min(good.size(), bad.size()));
  // In the direction of a regression: positive is worse.
  const bool lower_is_better = direction == Direction::kLowerIsBetter;
  const double worse = lower_is_better ? check.change : -check.change;
  const double worse_bound = lower_is_better ? ci.upper : -ci.lower;
  if (worse >= threshold && check.p_value < alpha) {
    check.outcome = Reproduction::kReproduced;
  } else if (worse_bound < threshold) {
    check.outcome = Reproduction::kNotReproduced;
  } else {
    check.outcome = Reproduction::kUndecided;
  }
  check.reproduced = check.outcome == Reproduction::kReproduced;
  check.reason = "bad vs good: " + SignedPercent(check.change) + " [" + SignedPercent(ci.lower) +
                 ", " + SignedPercent(ci.upper) + "] (" + CiName(check.confidence) + ", p " +
                 Number("%.2g", check.p_value) + "); threshold " +
                 Number("%.1f%%", 100 * threshold);
  if (check.outcome == Reproduction::kNotReproduced) {
    check.reason += ": the interval lies below the threshold (no regression of that size)";
  } else if (check.outcome == Reproduction::kUndecided) {
    // How many repetitions would tell the change from the threshold, if it is what was measured.
    const double limit = lower_is_better ? 1 + threshold : 1 - threshold;
    const double distance = (1 + check.change) / limit - 1;
    const double cv = stats::PooledCv(good, bad);
    // A one-sided test at alpha is a two-sided one at 2 alpha: 1 - confidence.
    int needed = stats::RepetitionsNeeded(distance, cv, 1 - check.confidence, kPower);
    // The analysis assumes independent repetitions and these did not decide: never fewer than
    // the next doubling.
    if (needed > 0) needed = std::max(needed, 2 * check.repetitions);
    check.repetitions_needed = needed;
    check.reason +=
        ": undecided at " + std::to_string(check.repetitions) +
        " repetitions per end (the interval reaches the threshold" +
        (worse >= threshold ? ", the change is not significant)" : ", the change is below it)");
    check.reason += needed > 0 ? "; about " + std::to_string(needed) + " would decide"
                               : "; no number of repetitions decides at this noise";
  }
  return check;
}

}  // namespace perfwarden::bisect
