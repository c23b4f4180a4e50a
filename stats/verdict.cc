// SPDX-License-Identifier: Apache-2.0
#include "stats/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/text.h"
#include "stats/bootstrap.h"
#include "stats/distributions.h"
#include "stats/effect.h"
#include "stats/mann_whitney.h"
#include "stats/power.h"
#include "stats/ttest.h"

namespace perfwarden::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Lower bound of the asymptotic relative efficiency of the Mann-Whitney test against the
// t-test over all continuous distributions (Hodges & Lehmann 1956): a U test needs at most
// 1/0.864 times the repetitions of a t-test for the same power.
constexpr double kMinUTestEfficiency = 0.864;
// Above this many repetitions per side, the advice is to reduce the noise instead.
constexpr int kPracticalRepetitions = 100;

std::string PValueText(double p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, p < 1e-4 ? "%.1e" : "%.4f", p);
  return buffer;
}

SampleSummary Summarize(const PreparedSample& x) { return {x.size(), x.median(), x.cv()}; }

// The smallest two-sided p-value `test` can produce with n1 and n2 repetitions.
double MinimumAchievableP(VerdictTest test, size_t n1, size_t n2) {
  if (test != VerdictTest::kMannWhitney) return 0;
  if (std::min(n1, n2) <= 8) {
    return MannWhitneyMinTwoSidedP(static_cast<int>(n1), static_cast<int>(n2));
  }
  const double a = static_cast<double>(n1);
  const double b = static_cast<double>(n2);
  const double z = (a * b / 2 - 0.5) / std::sqrt(a * b * (a + b + 1) / 12);
  return NormalTwoSidedP(z);
}

}  // namespace

double PooledCv(std::span<const double> base, std::span<const double> contender) {
  auto log_var = [](std::span<const double> x) {
    std::vector<double> logs;
    logs.reserve(x.size());
    for (double v : x) {
      if (!(v > 0)) return kNaN;
      logs.push_back(std::log(v));
    }
    return Variance(logs);
  };
  double vb = log_var(base);
  double vc = log_var(contender);
  if (std::isnan(vb) || std::isnan(vc)) return std::max(Cv(base), Cv(contender));
  return std::sqrt(std::expm1((vb + vc) / 2));
}

int RecommendedRepetitions(const VerdictPolicy& policy, double threshold, double cv,
                           size_t tested) {
  const double alpha = policy.alpha / static_cast<double>(std::max<size_t>(tested, 1));
  int n = 2;
  if (cv > 0) {
    n = RepetitionsNeeded(threshold, cv, alpha, policy.power);
    if (n < 0) return -1;
    if (policy.test == VerdictTest::kMannWhitney) {
      n = static_cast<int>(std::ceil(n / kMinUTestEfficiency));
    }
  }
  while (n < 100000 && MinimumAchievableP(policy.test, n, n) >= alpha) ++n;
  return n;
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kRegression:
      return "REGRESSION";
    case Verdict::kImprovement:
      return "IMPROVEMENT";
    case Verdict::kEquivalent:
      return "EQUIVALENT";
    case Verdict::kInconclusive:
      return "INCONCLUSIVE";
    case Verdict::kPass:
      return "PASS";
  }
  return "INCONCLUSIVE";
}

std::string_view VerdictTestName(VerdictTest test) {
  switch (test) {
    case VerdictTest::kMannWhitney:
      return "utest";
    case VerdictTest::kWelch:
      return "welch";
    case VerdictTest::kWelchLog:
      return "welch-log";
  }
  return "utest";
}

std::optional<VerdictTest> ParseVerdictTest(std::string_view name) {
  if (name == "utest" || name == "mann-whitney") return VerdictTest::kMannWhitney;
  if (name == "welch") return VerdictTest::kWelch;
  if (name == "welch-log") return VerdictTest::kWelchLog;
  return std::nullopt;
}

Result<void> ValidateCommonRanges(double threshold, double alpha, double power, double confidence,
                                  int bootstrap_resamples) {
  if (!(threshold > 0 && std::isfinite(threshold))) {
    return InvalidArgument("must be a positive number (0.05 = 5%)", "threshold");
  }
  auto in_unit = [](double v) { return v > 0 && v < 1; };
  if (!in_unit(alpha)) return InvalidArgument("must be in (0, 1)", "alpha");
  if (!in_unit(power)) return InvalidArgument("must be in (0, 1)", "power");
  if (!in_unit(confidence)) return InvalidArgument("must be in (0, 1)", "confidence");
  if (bootstrap_resamples < 100) {
    return InvalidArgument("must be at least 100", "bootstrap_resamples");
  }
  return {};
}

Result<VerdictPolicy> ValidatePolicy(const VerdictPolicy& policy) {
  if (auto ok = ValidateCommonRanges(policy.threshold, policy.alpha, policy.power,
                                     policy.confidence, policy.bootstrap_resamples);
      !ok) {
    return tl::unexpected(ok.error());
  }
  return policy;
}

Result<ComparisonVerdicts> JudgeMetrics(std::span<const MetricInput> metrics,
                                        const VerdictPolicy& policy, JudgeOutputs outputs) {
  if (auto valid = ValidatePolicy(policy); !valid) return tl::unexpected(valid.error());
  const bool all = outputs == JudgeOutputs::kAll;
  for (const auto& metric : metrics) {
    const bool base_finite =
        metric.prepared_base ? metric.prepared_base->all_finite() : AllFinite(metric.base);
    if (!base_finite || !AllFinite(metric.contender)) {
      return InvalidArgument("a repetition is NaN or infinite", metric.name);
    }
    if (metric.threshold < 0 || !std::isfinite(metric.threshold)) {
      return InvalidArgument("threshold must be a positive number", metric.name);
    }
    if (!(metric.alpha >= 0 && metric.alpha < 1)) {
      return InvalidArgument("alpha must be in (0, 1)", metric.name);
    }
  }

  ComparisonVerdicts out;
  out.metrics.reserve(metrics.size());
  std::vector<double> raw_p(metrics.size(), kNaN);
  std::vector<double> suite_log_sums(static_cast<size_t>(policy.bootstrap_resamples), 0.0);
  double suite_log_sum = 0;

  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricInput& in = metrics[i];
    std::optional<PreparedSample> own_base;
    if (!in.prepared_base) own_base.emplace(in.base);
    const PreparedSample& base = in.prepared_base ? *in.prepared_base : *own_base;
    const PreparedSample contender(in.contender);
    MetricVerdict v;
    v.name = in.name;
    v.direction = in.direction;
    v.threshold = in.threshold > 0 ? in.threshold : policy.threshold;
    v.base = Summarize(base);
    v.contender = Summarize(contender);
    v.change = RelativeChange(v.base.median, v.contender.median);
    v.change_ci = {kNaN, kNaN};
    v.p_welch = v.p_welch_log = v.p_utest = v.p_test = v.p_adjusted = kNaN;
    v.hodges_lehmann = kNaN;
    v.cohens_d = all ? CohensD(base.values(), contender.values()) : kNaN;

    if (base.size() > 0 && contender.size() > 0) {
      const uint64_t seed = DeriveSeed(policy.seed, in.name);
      const PreparedBootstrap* prepared = base.bootstrap();
      auto replicates =
          prepared != nullptr && prepared->seed() == seed &&
                  prepared->resamples() == policy.bootstrap_resamples
              ? prepared->Changes(base.resampled_median(), contender.resampled_median())
              : BootstrapMedianChanges(base.resampled_median(), contender.resampled_median(),
                                       policy.bootstrap_resamples, seed);
      v.change_ci = PercentileInterval(replicates, policy.confidence);
      if (all && base.all_positive() && contender.all_positive()) {
        ++out.suite.count;
        suite_log_sum += std::log(v.contender.median / v.base.median);
        for (size_t b = 0; b < replicates.size(); ++b)
          suite_log_sums[b] += std::log1p(replicates[b]);
      }
      if (all && v.base.median != 0) {
        v.hodges_lehmann =
            HodgesLehmannShift(base.values(), contender.values()) / std::fabs(v.base.median);
      }
    }
    if (base.size() >= 2 && contender.size() >= 2) {
      if (all || policy.test == VerdictTest::kWelch) {
        v.p_welch = WelchTTest(base.values(), contender.values()).p_two_sided;
      }
      if (all || policy.test == VerdictTest::kWelchLog) {
        v.p_welch_log = WelchTTestLog(base.values(), contender.values()).p_two_sided;
      }
      if (all || policy.test == VerdictTest::kMannWhitney) {
        v.p_utest = MannWhitneyUSorted(base.sorted(), contender.sorted()).p_two_sided;
      }
      switch (policy.test) {
        case VerdictTest::kMannWhitney:
          v.p_test = v.p_utest;
          break;
        case VerdictTest::kWelch:
          v.p_test = v.p_welch;
          break;
        case VerdictTest::kWelchLog:
          v.p_test = v.p_welch_log;
          break;
      }
      raw_p[i] = v.p_test;
    }
    out.metrics.push_back(std::move(v));
  }

  const std::vector<double> adjusted = AdjustPValues(raw_p, policy.correction);
  const size_t tested = static_cast<size_t>(
      std::count_if(raw_p.begin(), raw_p.end(), [](double p) { return !std::isnan(p); }));
  const std::string ci_name =
      std::to_string(static_cast<int>(std::lround(policy.confidence * 100))) + "% CI";

  for (size_t i = 0; i < out.metrics.size(); ++i) {
    MetricVerdict& v = out.metrics[i];
    v.p_adjusted = adjusted[i];
    const double tau = v.threshold;
    const std::string tau_text = SignedPercent(tau).substr(1);
    const std::string ci_text = ci_name + " [" + SignedPercent(v.change_ci.lower) + ", " +
                                SignedPercent(v.change_ci.upper) + "]";
    if (v.base.n < 2 || v.contender.n < 2) {
      v.verdict = Verdict::kInconclusive;
      v.repetitions_needed = -1;
      v.reason = "fewer than 2 repetitions on a side: the noise cannot be estimated";
      ++out.inconclusive;
      continue;
    }
    const double alpha = metrics[i].alpha > 0 ? metrics[i].alpha : policy.alpha;
    const bool significant = v.p_adjusted < alpha;
    const bool beyond = std::fabs(v.change) > tau;
    if (significant && beyond) {
      const bool worse = IsWorse(v.change, v.direction);
      v.verdict = worse ? Verdict::kRegression : Verdict::kImprovement;
      v.reason = SignedPercent(v.change) + (worse ? " is worse" : " is better") + " than the " +
                 tau_text + " threshold and significant (adjusted p " + PValueText(v.p_adjusted) +
                 " < " + PValueText(alpha) + ")";
      ++(worse ? out.regressions : out.improvements);
      continue;
    }
    if (v.change_ci.lower > -tau && v.change_ci.upper < tau) {
      v.verdict = Verdict::kEquivalent;
      v.reason = ci_text + " lies within +/-" + tau_text;
      ++out.equivalent;
      continue;
    }
    v.verdict = Verdict::kInconclusive;
    ++out.inconclusive;
    const MetricInput& in = metrics[i];
    const double cv =
        PooledCv(in.prepared_base ? in.prepared_base->values() : in.base, in.contender);
    v.repetitions_needed = RecommendedRepetitions(policy, tau, cv, tested);
    v.reason = ci_text + " crosses +/-" + tau_text;
    if (beyond) {
      v.reason +=
          " and the change is not significant (adjusted p " + PValueText(v.p_adjusted) + ")";
    }
    const size_t have = std::min(v.base.n, v.contender.n);
    if (v.repetitions_needed > kPracticalRepetitions) {
      v.reason += "; the noise (CV " + SignedPercent(cv).substr(1) + ") would take about " +
                  std::to_string(v.repetitions_needed) + " repetitions per side to resolve a " +
                  tau_text +
                  " change: reduce it (quiet host, fixed CPU frequency, pinned "
                  "cores) rather than repeat";
    } else if (v.repetitions_needed > 0 && static_cast<size_t>(v.repetitions_needed) > have) {
      v.reason += "; about " + std::to_string(v.repetitions_needed) +
                  " repetitions per side would detect a " + tau_text + " change at this noise";
    } else if (v.repetitions_needed > 0) {
      v.reason += "; the change is too close to the threshold to decide";
    }
  }

  if (out.suite.count > 0) {
    const double count = static_cast<double>(out.suite.count);
    out.suite.geomean_ratio = std::exp(suite_log_sum / count);
    for (double& s : suite_log_sums) s = std::exp(s / count);
    out.suite.ci = PercentileInterval(suite_log_sums, policy.confidence);
  } else {
    out.suite.geomean_ratio = kNaN;
    out.suite.ci = {kNaN, kNaN};
  }
  return out;
}

}  // namespace perfwarden::stats
