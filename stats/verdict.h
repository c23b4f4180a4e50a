// SPDX-License-Identifier: Apache-2.0
// The verdict policy: for each benchmark metric of a comparison, REGRESSION, IMPROVEMENT,
// EQUIVALENT or INCONCLUSIVE, with the multiple-comparison correction applied across all the
// metrics judged together (Holm by default), so that a run of 1,000 benchmarks does not cry
// wolf more often than a run of one. docs/statistics.md explains the rules in plain words.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "stats/descriptive.h"
#include "stats/multiple_testing.h"
#include "stats/prepared_sample.h"

namespace perfwarden::stats {

// kPass is the paired gate's only (stats/paired_verdict.h): a slowdown beyond the threshold is
// ruled out, and neither an improvement nor equivalence is shown. The unpaired verdict never
// answers it.
enum class Verdict { kRegression, kImprovement, kEquivalent, kInconclusive, kPass };

// "REGRESSION", "IMPROVEMENT", "EQUIVALENT", "INCONCLUSIVE", "PASS".
std::string_view VerdictName(Verdict verdict);

// The two-sample test whose p-value decides significance.
enum class VerdictTest {
  kMannWhitney,  // "utest": distribution-free, robust to outliers (default)
  kWelch,        // "welch": Welch's t-test on the raw values
  kWelchLog,     // "welch-log": Welch's t-test on log values (ratio-scale metrics)
};
std::string_view VerdictTestName(VerdictTest test);
std::optional<VerdictTest> ParseVerdictTest(std::string_view name);

// Version of the rules below; stored with every verdict so that it can be replayed.
inline constexpr std::string_view kVerdictAlgorithmVersion = "perfwarden-verdict/2";

struct VerdictPolicy {
  double threshold = 0.05;  // relative change that matters (0.05 = 5%)
  double alpha = 0.05;      // family-wise error rate across the metrics judged together
  double power = 0.8;       // for the repetitions-needed advice
  VerdictTest test = VerdictTest::kMannWhitney;
  Correction correction = Correction::kHolm;
  double confidence = 0.95;  // of the bootstrap interval of the change
  int bootstrap_resamples = 2000;
  uint64_t seed = 0x5eed;
};

// Checks ranges: threshold > 0, alpha/power/confidence in (0, 1), resamples >= 100.
Result<VerdictPolicy> ValidatePolicy(const VerdictPolicy& policy);
// The checks every policy shares (this one and the paired gate's, stats/paired_design.h): the
// first range violated, named by its field.
Result<void> ValidateCommonRanges(double threshold, double alpha, double power, double confidence,
                                  int bootstrap_resamples);

struct MetricInput {
  std::string name;  // e.g. "BM_Sort/1024"
  Direction direction = Direction::kLowerIsBetter;
  std::span<const double> base;
  std::span<const double> contender;
  // The base side prepared in advance (a baseline shared by many comparisons): when set, it
  // is used in place of `base`, with identical results.
  std::shared_ptr<const PreparedSample> prepared_base;
  double threshold = 0;  // per-metric override of policy.threshold when > 0
  // Per-metric override of policy.alpha when > 0: the adjusted p-value (the correction still
  // spans every metric judged together) is compared with it.
  double alpha = 0;
};

struct SampleSummary {
  size_t n = 0;
  double median = 0;  // NaN when n == 0
  double cv = 0;      // NaN when n < 2
};

struct MetricVerdict {
  std::string name;
  Direction direction = Direction::kLowerIsBetter;
  double threshold = 0;
  SampleSummary base;
  SampleSummary contender;
  double change = 0;          // median(contender) / median(base) - 1
  Interval change_ci;         // bootstrap percentile CI of `change`
  double hodges_lehmann = 0;  // HL shift of contender vs base, relative to the base median
  double cohens_d = 0;
  double p_welch = 0;      // two-sided Welch on raw values
  double p_welch_log = 0;  // two-sided Welch on log values (NaN if a value <= 0)
  double p_utest = 0;      // two-sided Mann-Whitney, SciPy's method='auto'
  double p_test = 0;       // the raw p-value of policy.test
  double p_adjusted = 0;   // p_test after the correction across the comparison
  Verdict verdict = Verdict::kInconclusive;
  // For INCONCLUSIVE: repetitions per side that would detect a change of `threshold` with
  // policy.power at the observed noise (0 when not INCONCLUSIVE; -1 when the noise cannot be
  // estimated because a side has fewer than 2 repetitions).
  int repetitions_needed = 0;
  std::string reason;  // one sentence: why this verdict
};

struct SuiteSummary {
  size_t count = 0;          // metrics with positive medians on both sides
  double geomean_ratio = 0;  // geometric mean of median(contender) / median(base)
  Interval ci;               // bootstrap percentile CI of geomean_ratio
};

struct ComparisonVerdicts {
  std::vector<MetricVerdict> metrics;  // in input order
  SuiteSummary suite;
  int regressions = 0;
  int improvements = 0;
  int equivalent = 0;
  int inconclusive = 0;
};

// Noise of one repetition as a coefficient of variation, pooled over both sides on the log
// scale (where a relative change is a shift); the larger raw CV when a value is <= 0.
// NaN when a side has fewer than 2 values.
double PooledCv(std::span<const double> base, std::span<const double> contender);

// Repetitions per side that detect a change of `threshold` with policy.power, at noise `cv`,
// when `tested` metrics share the correction (alpha / tested, the strictest step of Holm),
// and that the chosen test can reach at all (a U test with 3 per side never gets below
// p = 0.1). The U test is charged 1/0.864 times the t-test's count, its worst-case asymptotic
// relative efficiency. -1 when an argument is invalid.
int RecommendedRepetitions(const VerdictPolicy& policy, double threshold, double cv, size_t tested);

// What JudgeMetrics computes besides the verdicts.
enum class JudgeOutputs {
  kAll,          // every field, and the suite summary (perfwarden compare's report)
  kVerdictOnly,  // what the verdict and its report need: medians, CVs, change and its CI, the
                 // policy's test and its adjusted p-value. The other tests, Hodges-Lehmann,
                 // Cohen's d and the suite summary stay NaN (the server's gate: half the time)
};

// Judges every metric. Errors (kInvalidArgument, naming the metric) for an invalid policy
// and for non-finite values. A side with fewer than 2 repetitions makes that metric
// INCONCLUSIVE and keeps it out of the correction.
Result<ComparisonVerdicts> JudgeMetrics(std::span<const MetricInput> metrics,
                                        const VerdictPolicy& policy,
                                        JudgeOutputs outputs = JudgeOutputs::kAll);

}  // namespace perfwarden::stats
