// SPDX-License-Identifier: Apache-2.0
// The sequential design of the paired gate: the policy (threshold, alpha, the deciding test,
// the look schedule and how alpha is spent over it: stats/group_sequential.h), the looks at
// block counts growing geometrically from min_blocks to max_blocks, and the blocks a metric
// would need at its observed noise. docs/statistics.md explains why.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "stats/group_sequential.h"

namespace perfwarden::stats {

// The test whose p-value decides significance on the block log ratios.
enum class PairedTest {
  kT,         // "t": one-sample t-test of the block log ratios against 0 (default)
  kWilcoxon,  // "wilcoxon": signed-rank test of the block log ratios (SciPy's method auto)
  // "trimmed": the 20%-trimmed mean of the block log ratios and its Tukey-McLaughlin t-test
  // (stats/trimmed.h): the few blocks a switch of the machine's speed tears apart are cut, not
  // averaged in. The estimate, its interval and the bootstrap are of the trimmed mean.
  kTrimmed,
};
std::string_view PairedTestName(PairedTest test);
std::optional<PairedTest> ParsePairedTest(std::string_view name);

struct PairedPolicy {
  double threshold = 0.05;  // relative change that matters (0.05 = 5%)
  // One-sided, over all looks: the family-wise rate of false REGRESSIONs over every gated metric
  // (Holm), and per metric the rate at which a slowdown of exactly the threshold is PASSed.
  double alpha = 0.05;
  double power = 0.8;        // for the blocks-needed advice
  double confidence = 0.95;  // of the suite summary's interval
  PairedTest test = PairedTest::kTrimmed;
  Spending spending = Spending::kPocock;  // how alpha is spent over the looks
  int bootstrap_resamples = 2000;
  uint64_t seed = 0x5eed;
  int min_blocks = 10;  // blocks at the first look
  int max_blocks = 50;  // blocks at the last look
  double growth = 1.5;  // at most this factor between consecutive looks
};

// Checks ranges: threshold > 0; alpha, power, confidence in (0, 1); resamples >= 100;
// 3 <= min_blocks <= max_blocks <= 10000; growth in (1, 10].
Result<PairedPolicy> ValidatePairedPolicy(const PairedPolicy& policy);

// The block counts of the looks: K = 1 + ceil(log(max / min) / log(growth)) counts spaced
// geometrically from min_blocks to max_blocks and rounded (10, 15, 22, 33, 50 for the defaults),
// duplicates from rounding dropped. One look when min == max. Empty for invalid arguments.
std::vector<int> PairedLookSchedule(int min_blocks, int max_blocks, double growth);

// Blocks at which the deciding test detects a change of `threshold` with probability `power`
// at two-sided level `alpha`, when the block log ratios have standard deviation `sd`: the
// one-sample t power (noncentral t, statsmodels' TTestPower) at effect log(1 + threshold) / sd.
// The signed-rank test is charged 1 / 0.864 times that (its worst-case asymptotic relative
// efficiency) and never fewer than it needs to reach `alpha` at all (2 / 2^n < alpha); the
// trimmed test 1 / 0.94 times (the 20%-trimmed mean's efficiency at the normal distribution) and
// never fewer than 5 blocks (a degree of freedom left after the trimming is too few to decide).
// At least 2; -1 when an argument is invalid (sd NaN or negative); INT_MAX beyond 10^6.
int BlocksNeeded(double threshold, double sd, double alpha, double power, PairedTest test);

}  // namespace perfwarden::stats
