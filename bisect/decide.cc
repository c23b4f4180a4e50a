#include "bisect/decide.h"

#include <cmath>
#include <cstdio>

#include "stats/descriptive.h"
#include "stats/mann_whitney.h"

namespace perfgate::bisect {
namespace {

std::string Format(const char* format, double a, double b, double c) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, format, a, b, c);
  return buffer;
}

double TwoSidedP(std::span<const double> x, std::span<const double> y) {
  const stats::MannWhitneyResult r = stats::MannWhitneyU(x, y);
  return std::isfinite(r.p_two_sided) ? r.p_two_sided : 1.0;
}

}  // namespace

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
  const bool from_good = d.p_vs_good < options.alpha;
  const bool from_bad = d.p_vs_bad < options.alpha;
  d.partial = from_good && from_bad;
  if (from_bad && (!from_good || d.fraction < 0.5)) {
    d.side = Side::kGood;
  } else if (from_good && (!from_bad || d.fraction >= 0.5)) {
    d.side = Side::kBad;
  }
  d.reason = Format("at %.0f%% of the step; p vs good %.2g, vs bad %.2g", 100 * d.fraction,
                    d.p_vs_good, d.p_vs_bad);
  if (d.side == Side::kUnknown) d.reason += ": like both ends (more repetitions needed)";
  if (d.partial) d.reason += ": differs from both ends (a partial step)";
  return d;
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
  const bool worse = IsWorse(check.change, direction);
  check.reproduced = worse && std::fabs(check.change) >= threshold && check.p_value < alpha;
  check.reason = Format("bad vs good: %+.1f%% (p %.2g); threshold %.1f%%", 100 * check.change,
                        check.p_value, 100 * threshold);
  if (!check.reproduced) {
    check.reason += !worse || std::fabs(check.change) < threshold
                        ? ": no regression of at least the threshold between the ends"
                        : ": not significant at these repetitions";
  }
  return check;
}

}  // namespace perfgate::bisect
