// SPDX-License-Identifier: Apache-2.0
// The paired verdict: baseline and head measured interleaved on one host in blocks (each block
// both sides, in an order drawn per block), so that the machine's drift between blocks cancels
// in each block's ratio. Per metric: d_b = log(median head_b / median base_b). The gate's
// question, at sequential looks with alpha spent over them (stats/group_sequential.h): REGRESSION
// once a slowdown beyond the threshold is established (one-sided, Holm across the run's metrics),
// PASS once the one-sided bound rules it out; IMPROVEMENT and EQUIVALENT label a PASS the data
// show more of. What the last look leaves open is UNSTABLE (not gating). docs/statistics.md.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "stats/descriptive.h"
#include "stats/paired_design.h"
#include "stats/verdict.h"

namespace perfwarden::stats {

// Version of the rules below; stored with every paired verdict so that it can be replayed.
inline constexpr std::string_view kPairedAlgorithmVersion = "perfwarden-paired/3";

// One block of one metric: the repetitions of each side measured in it.
struct PairedBlock {
  std::vector<double> base;
  std::vector<double> head;
};

struct PairedMetricInput {
  std::string name;  // e.g. "BM_Sort/1024 real_time"; also keys its bootstrap stream
  Direction direction = Direction::kLowerIsBetter;
  std::span<const PairedBlock> blocks;  // in measuring order
  double threshold = 0;                 // per-metric override of policy.threshold when > 0
  // Per-metric override of policy.alpha when > 0; spent over the looks like policy.alpha.
  double alpha = 0;
};

// JudgePairedLook's look: the last look the blocks reach (look k is reached when every metric
// still open after look k - 1 has its blocks; a metric decided earlier needs no more).
inline constexpr int kLookReached = -1;

struct PairedMetricVerdict {
  std::string name;
  Direction direction = Direction::kLowerIsBetter;
  double threshold = 0;
  double alpha = 0;  // the metric's alpha over all looks
  int blocks = 0;    // blocks the numbers below rest on
  // The look that decided it (REGRESSION, PASS, IMPROVEMENT or EQUIVALENT: the verdict and every
  // number here are frozen there; it needs no further blocks); -1 while open or UNSTABLE.
  int decided_at_look = -1;
  // exp(mean d): the typical head / base ratio (the trimmed test: exp(20%-trimmed mean of d)).
  double ratio = 0;
  double change = 0;  // ratio - 1
  // Intervals whose each tail has the look's one-sided PASS level (bound_level): 1 - 2 level.
  Interval t_ci;          // exp(t interval of mean d) - 1 (trimmed: of the trimmed mean)
  Interval bootstrap_ci;  // percentile bootstrap over blocks of exp(mean d) - 1 (or trimmed)
  // PASS needs its worse end inside the threshold: the union of the two (the trimmed test: its
  // t interval alone).
  Interval decision_ci;
  double bound_level = 0;     // one-sided level of each end of the intervals at this look
  double median_change = 0;   // exp(median d) - 1
  double hodges_lehmann = 0;  // exp(one-sample Hodges-Lehmann estimate of d) - 1
  // sd of d (log scale, ~relative): the block-to-block noise left after pairing; for the trimmed
  // test sd(winsorized d) / (1 - 2 trim), the noise its standard error is of.
  double noise = 0;
  double drift = 0;       // sd of log(median base_b): the machine's drift between blocks, cancelled
  double p_t = 0;         // two-sided one-sample t-test of d against 0
  double p_wilcoxon = 0;  // two-sided signed-rank test of d (SciPy's method auto)
  double p_sign = 0;      // two-sided sign test of d
  double p_test = 0;      // one-sided p of policy.test that the metric got worse (not better)
  double p_adjusted = 0;  // p_test Holm-adjusted over the gated metrics at the deciding look
  double level = 0;       // the look's nominal level p_test was compared with (its Holm step)
  Verdict verdict = Verdict::kInconclusive;
  // INCONCLUSIVE at the last look or when the time budget ended: not gating.
  bool unstable = false;
  // For UNSTABLE: blocks at which the deciding test would detect a change of `threshold` with
  // policy.power at this noise and the look's strictest Holm level (BlocksNeeded; 0 otherwise).
  int blocks_needed = 0;
  std::string reason;  // one sentence: why this verdict
};

// The geometric mean over metrics of the typical ratio exp(mean d), and its percentile bootstrap
// interval over blocks (every metric resampled with the same blocks, at policy.confidence).
struct PairedSuiteSummary {
  size_t count = 0;
  int blocks = 0;
  double geomean_ratio = 0;
  Interval ci;
};

struct PairedLookVerdicts {
  int look = 0;           // index into the schedule
  int looks = 0;          // K
  int blocks = 0;         // the look's block count
  double look_alpha = 0;  // the nominal one-sided level of alpha at this look (one metric)
  bool final = false;     // the last look, or the caller's time budget ended
  bool more_blocks_needed = false;           // a metric is INCONCLUSIVE and a look remains
  int next_blocks = 0;                       // the next look's block count (0 when none)
  std::vector<PairedMetricVerdict> metrics;  // in input order
  PairedSuiteSummary suite;
  int regressions = 0;
  int improvements = 0;
  int equivalent = 0;
  int passed = 0;        // PASS
  int inconclusive = 0;  // not counting the unstable ones
  int unstable = 0;
};

// Judges look `look` of the schedule (kLookReached: the last look the blocks reach): each metric
// still open at look j is judged on its first schedule[j] blocks (further blocks are ignored).
// The earlier looks are replayed from their own prefixes, so the answer is a function of the
// blocks, the policy and the look alone: a metric decided at an earlier look keeps that decision
// and needs no blocks beyond it. `budget_exhausted` makes this look the last one.
// `previous`, when given, is this function's answer for look - 1 on the same metrics, blocks and
// policy: its decisions are taken instead of replaying the earlier looks (the same answer,
// without the replay's cost); kInvalidArgument when it is not for look - 1 of the same metrics.
// Errors (kInvalidArgument, naming the metric and block) for an invalid policy, a look outside
// the schedule, too few blocks for a metric open at a look (for kLookReached: for the first
// look), an empty side, a value that is not positive and finite, or an invalid per-metric
// threshold or alpha.
Result<PairedLookVerdicts> JudgePairedLook(std::span<const PairedMetricInput> metrics,
                                           const PairedPolicy& policy, int look,
                                           bool budget_exhausted = false,
                                           const PairedLookVerdicts* previous = nullptr);

}  // namespace perfwarden::stats
