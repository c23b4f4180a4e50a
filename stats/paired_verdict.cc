#include "stats/paired_verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/text.h"
#include "stats/bootstrap.h"
#include "stats/multiple_testing.h"
#include "stats/paired_effect.h"
#include "stats/paired_ttest.h"
#include "stats/sign_test.h"
#include "stats/signed_rank.h"

namespace perfgate::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string PValueText(double p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, p < 1e-4 ? "%.1e" : "%.4f", p);
  return buffer;
}

// "99% CI", "98.3% CI".
std::string CiName(double confidence) {
  char buffer[32];
  const double percent = std::round(confidence * 1000) / 10;
  std::snprintf(buffer, sizeof buffer, percent == std::round(percent) ? "%.0f%% CI" : "%.1f%% CI",
                percent);
  return buffer;
}

bool PositiveFinite(std::span<const double> values) {
  return std::all_of(values.begin(), values.end(),
                     [](double v) { return v > 0 && std::isfinite(v); });
}

// The block log ratios d_b and the log base levels of the first `blocks` blocks.
struct BlockSeries {
  std::vector<double> d;
  std::vector<double> base_log;
};

Result<BlockSeries> ReadBlocks(const PairedMetricInput& in, int blocks) {
  if (in.threshold < 0 || !std::isfinite(in.threshold)) {
    return InvalidArgument("threshold must be a positive number", in.name);
  }
  if (!(in.alpha >= 0 && in.alpha < 1)) {
    return InvalidArgument("alpha must be in (0, 1)", in.name);
  }
  if (static_cast<int>(in.blocks.size()) < blocks) {
    return InvalidArgument("has " + std::to_string(in.blocks.size()) + " blocks; this look needs " +
                               std::to_string(blocks),
                           in.name);
  }
  BlockSeries series;
  series.d.reserve(static_cast<size_t>(blocks));
  series.base_log.reserve(static_cast<size_t>(blocks));
  for (int b = 0; b < blocks; ++b) {
    const PairedBlock& block = in.blocks[static_cast<size_t>(b)];
    if (block.base.empty() || block.head.empty()) {
      return InvalidArgument("block " + std::to_string(b) + ": a side has no repetition", in.name);
    }
    if (!PositiveFinite(block.base) || !PositiveFinite(block.head)) {
      return InvalidArgument(
          "block " + std::to_string(b) + ": a repetition is not a positive finite number", in.name);
    }
    const double base = Median(block.base);
    series.d.push_back(std::log(Median(block.head) / base));
    series.base_log.push_back(std::log(base));
  }
  return series;
}

double DecidingP(std::span<const double> d, PairedTest test) {
  return test == PairedTest::kT ? OneSampleTTest(d).p_two_sided : WilcoxonSignedRank(d).p_two_sided;
}

Interval ExpM1(double lower, double upper) { return {std::expm1(lower), std::expm1(upper)}; }

std::span<const double> Prefix(const std::vector<double>& values, int blocks) {
  return {values.data(), static_cast<size_t>(blocks)};
}

// Every number of a verdict but the verdict and the bootstrap interval (the decision interval is
// the t interval until AddBootstrap widens it), from the first `blocks` blocks.
void Estimate(const BlockSeries& series, int blocks, const PairedPolicy& policy, double confidence,
              PairedMetricVerdict& v) {
  const std::span<const double> d = Prefix(series.d, blocks);
  v.blocks = blocks;
  const OneSampleTTestResult t = OneSampleTTest(d);
  v.ratio = std::exp(t.mean);
  v.change = std::expm1(t.mean);
  const TInterval mean_ci = MeanConfidenceInterval(d, confidence);
  v.t_ci = ExpM1(mean_ci.lower, mean_ci.upper);
  v.bootstrap_ci = {kNaN, kNaN};
  v.decision_ci = v.t_ci;
  v.median_change = std::expm1(Median(d));
  v.hodges_lehmann = std::expm1(OneSampleHodgesLehmann(d));
  v.noise = t.sd;
  v.drift = StdDev(Prefix(series.base_log, blocks));
  v.p_t = t.p_two_sided;
  v.p_wilcoxon = WilcoxonSignedRank(d).p_two_sided;
  v.p_sign = SignTest(d).p_two_sided;
  v.p_test = policy.test == PairedTest::kT ? v.p_t : v.p_wilcoxon;
}

// The percentile bootstrap over blocks of exp(mean d) - 1, and the decision interval as the
// union of it and the t interval.
void AddBootstrap(const BlockSeries& series, int blocks, const PairedPolicy& policy,
                  double confidence, PairedMetricVerdict& v) {
  std::vector<double> replicates = BootstrapMeans(
      Prefix(series.d, blocks), policy.bootstrap_resamples, DeriveSeed(policy.seed, v.name));
  for (double& r : replicates) r = std::expm1(r);
  v.bootstrap_ci = PercentileInterval(replicates, confidence);
  v.decision_ci = {std::min(v.t_ci.lower, v.bootstrap_ci.lower),
                   std::max(v.t_ci.upper, v.bootstrap_ci.upper)};
}

struct LookContext {
  const PairedPolicy& policy;
  int blocks;
  double confidence;
  int looks;
  std::string ci_name;
  std::string at;  // " at look 2 of 5 (9 blocks)"
  bool reported;   // the requested look: every record keeps its bootstrap interval
};

// REGRESSION / IMPROVEMENT / EQUIVALENT, or false when the look leaves the metric INCONCLUSIVE.
// The bootstrap (the costly part) runs only where the record keeps it or it can decide: a union
// can only be inside +/- threshold when the t interval already is.
bool Judge(const BlockSeries& series, const LookContext& look, PairedMetricVerdict& v) {
  Estimate(series, look.blocks, look.policy, look.confidence, v);
  const double tau = v.threshold;
  const double alpha = LookAlpha(v.alpha, look.looks);
  const std::string tau_text = SignedPercent(tau).substr(1);
  const bool inside_t = v.t_ci.lower > -tau && v.t_ci.upper < tau;
  const bool alarm = v.p_adjusted < alpha && std::fabs(v.change) > tau;
  if (alarm || inside_t || look.reported) {
    AddBootstrap(series, look.blocks, look.policy, look.confidence, v);
  }
  if (alarm) {
    const bool worse = IsWorse(v.change, v.direction);
    v.verdict = worse ? Verdict::kRegression : Verdict::kImprovement;
    v.reason = SignedPercent(v.change) + (worse ? " is worse" : " is better") + " than the " +
               tau_text + " threshold and significant (adjusted p " + PValueText(v.p_adjusted) +
               " < " + PValueText(alpha) + ")" + look.at;
    return true;
  }
  if (v.decision_ci.lower > -tau && v.decision_ci.upper < tau) {
    v.verdict = Verdict::kEquivalent;
    v.reason = look.ci_name + " [" + SignedPercent(v.decision_ci.lower) + ", " +
               SignedPercent(v.decision_ci.upper) + "] lies within +/-" + tau_text + look.at;
    return true;
  }
  if (!look.reported) v.bootstrap_ci = {kNaN, kNaN};
  v.verdict = Verdict::kInconclusive;
  return false;
}

PairedSuiteSummary Suite(const std::vector<BlockSeries>& series, int blocks,
                         const PairedPolicy& policy) {
  PairedSuiteSummary suite;
  suite.count = series.size();
  suite.blocks = blocks;
  if (series.empty()) {
    suite.geomean_ratio = kNaN;
    suite.ci = {kNaN, kNaN};
    return suite;
  }
  // The mean over metrics of each block's log ratio: resampling these resamples every metric
  // with the same blocks, as the drift the blocks share would.
  std::vector<double> per_block(static_cast<size_t>(blocks), 0.0);
  for (const BlockSeries& s : series) {
    for (size_t b = 0; b < per_block.size(); ++b) per_block[b] += s.d[b];
  }
  for (double& v : per_block) v /= static_cast<double>(series.size());
  suite.geomean_ratio = std::exp(Mean(per_block));
  std::vector<double> replicates = BootstrapMeans(
      per_block, policy.bootstrap_resamples, DeriveSeed(policy.seed, std::string_view("suite")));
  for (double& r : replicates) r = std::exp(r);
  suite.ci = PercentileInterval(replicates, policy.confidence);
  return suite;
}

}  // namespace

Result<PairedLookVerdicts> JudgePairedLook(std::span<const PairedMetricInput> metrics,
                                           const PairedPolicy& policy, int look,
                                           bool budget_exhausted,
                                           const PairedLookVerdicts* previous) {
  if (auto valid = ValidatePairedPolicy(policy); !valid) return tl::unexpected(valid.error());
  const std::vector<int> schedule =
      PairedLookSchedule(policy.min_blocks, policy.max_blocks, policy.growth);
  const int looks = static_cast<int>(schedule.size());
  if (look < 0 || look >= looks) {
    return InvalidArgument("must be between 0 and " + std::to_string(looks - 1) + " (" +
                               std::to_string(looks) + " looks)",
                           "look");
  }
  PairedLookVerdicts out;
  out.look = look;
  out.looks = looks;
  out.blocks = schedule[static_cast<size_t>(look)];
  out.look_alpha = LookAlpha(policy.alpha, looks);
  out.look_confidence = LookConfidence(policy.confidence, looks);
  out.final = budget_exhausted || look == looks - 1;

  std::vector<BlockSeries> series;
  series.reserve(metrics.size());
  for (const PairedMetricInput& in : metrics) {
    auto s = ReadBlocks(in, out.blocks);
    if (!s) return tl::unexpected(s.error());
    series.push_back(std::move(*s));
  }

  const size_t m = metrics.size();
  out.metrics.resize(m);
  for (size_t i = 0; i < m; ++i) {
    PairedMetricVerdict& v = out.metrics[i];
    v.name = metrics[i].name;
    v.direction = metrics[i].direction;
    v.threshold = metrics[i].threshold > 0 ? metrics[i].threshold : policy.threshold;
    v.alpha = metrics[i].alpha > 0 ? metrics[i].alpha : policy.alpha;
  }
  std::vector<bool> decided(m, false);
  int first_look = 0;
  if (previous != nullptr) {
    if (previous->look != look - 1 || previous->looks != looks || previous->final ||
        previous->metrics.size() != m) {
      return InvalidArgument("must be the answer for look " + std::to_string(look - 1) +
                                 " of the same run, not its last",
                             "previous");
    }
    for (size_t i = 0; i < m; ++i) {
      if (previous->metrics[i].name != out.metrics[i].name) {
        return InvalidArgument("holds other metrics (" + previous->metrics[i].name + ")",
                               "previous");
      }
      if (previous->metrics[i].decided_at_look >= 0) {
        out.metrics[i] = previous->metrics[i];
        decided[i] = true;
      }
    }
    first_look = look;
  }
  size_t tested = 0;
  const std::string ci_name = CiName(out.look_confidence);
  for (int j = first_look; j <= look; ++j) {
    const int blocks = schedule[static_cast<size_t>(j)];
    // The family is every metric at every look, decided or not, so that Holm's m never shrinks.
    std::vector<double> raw(m);
    for (size_t i = 0; i < m; ++i) raw[i] = DecidingP(Prefix(series[i].d, blocks), policy.test);
    const std::vector<double> adjusted = AdjustPValues(raw, Correction::kHolm);
    tested = static_cast<size_t>(
        std::count_if(raw.begin(), raw.end(), [](double p) { return !std::isnan(p); }));
    const LookContext context{policy,
                              blocks,
                              out.look_confidence,
                              looks,
                              ci_name,
                              " at look " + std::to_string(j + 1) + " of " + std::to_string(looks) +
                                  " (" + std::to_string(blocks) + " blocks)",
                              j == look};
    bool open = false;
    for (size_t i = 0; i < m; ++i) {
      if (decided[i]) continue;
      PairedMetricVerdict& v = out.metrics[i];
      v.p_adjusted = adjusted[i];
      if (Judge(series[i], context, v)) {
        decided[i] = true;
        v.decided_at_look = j;
      } else {
        open = true;
      }
    }
    if (!open) break;
  }

  for (size_t i = 0; i < m; ++i) {
    PairedMetricVerdict& v = out.metrics[i];
    switch (v.verdict) {
      case Verdict::kRegression:
        ++out.regressions;
        continue;
      case Verdict::kImprovement:
        ++out.improvements;
        continue;
      case Verdict::kEquivalent:
        ++out.equivalent;
        continue;
      case Verdict::kInconclusive:
        break;
    }
    const std::string tau_text = SignedPercent(v.threshold).substr(1);
    v.reason = ci_name + " [" + SignedPercent(v.decision_ci.lower) + ", " +
               SignedPercent(v.decision_ci.upper) + "] crosses +/-" + tau_text;
    if (std::fabs(v.change) > v.threshold) {
      v.reason +=
          " and the change is not significant (adjusted p " + PValueText(v.p_adjusted) + ")";
    }
    v.reason += " after " + std::to_string(v.blocks) + " blocks";
    if (!out.final) {
      ++out.inconclusive;
      v.reason += "; the next look has " + std::to_string(schedule[static_cast<size_t>(look) + 1]);
      continue;
    }
    v.unstable = true;
    ++out.unstable;
    // The advice for a run of its own: the look's strictest Holm level (the metric first in
    // Holm's order among all tested) at this noise.
    const double strictest =
        LookAlpha(v.alpha, looks) / static_cast<double>(std::max<size_t>(tested, 1));
    v.blocks_needed = BlocksNeeded(v.threshold, v.noise, strictest, policy.power, policy.test);
    const std::string needed_text = v.blocks_needed > 0
                                        ? "about " + std::to_string(v.blocks_needed) + " blocks"
                                        : "an unknown number of blocks";
    v.reason += (budget_exhausted && look < looks - 1 ? ", when the time budget ended"
                                                      : ", the last look") +
                std::string(": UNSTABLE, not gating; block noise ") +
                SignedPercent(v.noise).substr(1) + " (sd of the block log ratios): " + needed_text +
                " would decide a " + tau_text + " change";
  }
  out.more_blocks_needed = !out.final && out.inconclusive > 0;
  out.next_blocks = out.final ? 0 : schedule[static_cast<size_t>(look) + 1];
  out.suite = Suite(series, out.blocks, policy);
  return out;
}

}  // namespace perfgate::stats
