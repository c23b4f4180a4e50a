// The paired verdict: baseline and head measured interleaved on one host in blocks (each block
// both sides, in an order drawn per block), so that the machine's drift between blocks cancels
// in each block's ratio. Per metric: d_b = log(median head_b / median base_b), tested against 0,
// at sequential looks (stats/paired_design.h) with Holm across all the run's metrics at each
// look. REGRESSION / IMPROVEMENT / EQUIVALENT / INCONCLUSIVE as stats/verdict.h decides them;
// what the last look leaves INCONCLUSIVE is UNSTABLE (not gating). docs/statistics.md explains.
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

namespace perfgate::stats {

// Version of the rules below; stored with every paired verdict so that it can be replayed.
inline constexpr std::string_view kPairedAlgorithmVersion = "perfgate-paired/1";

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
  // Per-metric override of policy.alpha when > 0; split over the looks like policy.alpha.
  double alpha = 0;
};

struct PairedMetricVerdict {
  std::string name;
  Direction direction = Direction::kLowerIsBetter;
  double threshold = 0;
  double alpha = 0;  // the metric's alpha over all looks
  int blocks = 0;    // blocks the numbers below rest on
  // The look that reached REGRESSION, IMPROVEMENT or EQUIVALENT (the verdict and every number
  // here are frozen there); -1 while INCONCLUSIVE or UNSTABLE.
  int decided_at_look = -1;
  double ratio = 0;          // exp(mean d): the typical head / base ratio
  double change = 0;         // ratio - 1
  Interval t_ci;             // exp(t interval of mean d) - 1, at the look's confidence
  Interval bootstrap_ci;     // percentile bootstrap over blocks of exp(mean d) - 1, same confidence
  Interval decision_ci;      // the union of the two: EQUIVALENT needs it inside +/- threshold
  double median_change = 0;  // exp(median d) - 1
  double hodges_lehmann = 0;  // exp(one-sample Hodges-Lehmann estimate of d) - 1
  double noise = 0;  // sd of d (log scale, ~relative): the block-to-block noise left after pairing
  double drift = 0;  // sd of log(median base_b): the machine's drift between blocks, cancelled
  double p_t = 0;    // two-sided one-sample t-test of d against 0
  double p_wilcoxon = 0;  // two-sided signed-rank test of d (SciPy's method auto)
  double p_sign = 0;      // two-sided sign test of d
  double p_test = 0;      // the raw p-value of policy.test
  double p_adjusted = 0;  // Holm across every metric at the deciding (or current) look
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
  int look = 0;    // index into the schedule
  int looks = 0;   // K
  int blocks = 0;  // the look's block count
  double look_alpha = 0;
  double look_confidence = 0;
  bool final = false;                        // the last look, or the caller's time budget ended
  bool more_blocks_needed = false;           // a metric is INCONCLUSIVE and a look remains
  int next_blocks = 0;                       // the next look's block count (0 when none)
  std::vector<PairedMetricVerdict> metrics;  // in input order
  PairedSuiteSummary suite;
  int regressions = 0;
  int improvements = 0;
  int equivalent = 0;
  int inconclusive = 0;  // not counting the unstable ones
  int unstable = 0;
};

// Judges look `look` of the schedule from the first schedule[look] blocks of every metric
// (further blocks are ignored). The earlier looks are replayed from their own prefixes, so the
// answer is a function of the blocks, the policy and the look alone: a metric decided at an
// earlier look keeps that decision. `budget_exhausted` makes this look the last one.
// `previous`, when given, is this function's answer for look - 1 on the same metrics, blocks and
// policy: its decisions are taken instead of replaying the earlier looks (the same answer,
// without the replay's cost); kInvalidArgument when it is not for look - 1 of the same metrics.
// Errors (kInvalidArgument, naming the metric and block) for an invalid policy, a look outside
// the schedule, too few blocks, an empty side, a value that is not positive and finite, or an
// invalid per-metric threshold or alpha.
Result<PairedLookVerdicts> JudgePairedLook(std::span<const PairedMetricInput> metrics,
                                           const PairedPolicy& policy, int look,
                                           bool budget_exhausted = false,
                                           const PairedLookVerdicts* previous = nullptr);

}  // namespace perfgate::stats
