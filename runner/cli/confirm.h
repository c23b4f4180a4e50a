// Confirmation of regressions by an interleaved A/B rerun, as Chromium's Pinpoint does: the
// baseline and the pull request were measured at different times, so a machine whose speed
// drifts (a shared CI VM, a noisy neighbour) can make an unchanged benchmark look slower. For
// each benchmark the server called a REGRESSION, the runner checks the baseline commit out
// into a temporary tree (libgit2; the working tree is not touched), builds its suites as its
// perfgate.yaml says, and runs baseline and pull request alternately, a few repetitions at a
// time, so that both sides see the same machine. A regression stands only when this paired
// measurement judges it a REGRESSION or cannot rule it out (INCONCLUSIVE); when it rules it out
// (EQUIVALENT or IMPROVEMENT) it becomes INCONCLUSIVE with the reason.
#pragma once

#include <string>
#include <vector>

#include "config/runner_config.h"
#include "core/result.h"
#include "stats/verdict.h"
#include "wire/verdict.h"

namespace perfgate::cli {

struct ConfirmOptions {
  int rounds = 6;                 // A/B alternations
  int repetitions_per_round = 4;  // repetitions of each side per round
};

struct ConfirmReport {
  int checked = 0;                 // regressed benchmark metrics measured again
  int confirmed = 0;               // still a REGRESSION
  int withdrawn = 0;               // turned INCONCLUSIVE (ruled out side by side)
  int undecided = 0;               // not decided side by side: kept
  std::vector<std::string> lines;  // one per checked metric, for the log
};

// What the side-by-side judgement of a regressed metric does to it: a REGRESSION confirms it;
// INCONCLUSIVE leaves it standing (the interval still reaches the threshold, so the data do not
// rule it out); EQUIVALENT or IMPROVEMENT withdraw it.
enum class ConfirmCall { kConfirmed, kUndecided, kWithdrawn };
ConfirmCall CallOf(stats::Verdict side_by_side);

// Re-measures the regressed benchmarks of `verdict` against its baseline commit and rewrites
// the verdict: a REGRESSION the side-by-side measurement rules out (EQUIVALENT or IMPROVEMENT:
// its interval lies within the threshold or beyond it the other way) becomes INCONCLUSIVE
// (reason says why), counts and outcome follow; one it leaves undecided (INCONCLUSIVE) stands.
// Errors (no baseline commit, a build that fails, a suite missing at the baseline) leave the
// verdict as it was; the caller reports them and keeps the regression.
Result<ConfirmReport> ConfirmRegressions(const config::RunnerConfig& config,
                                         const ConfirmOptions& options, wire::Verdict* verdict);

}  // namespace perfgate::cli
