// SPDX-License-Identifier: Apache-2.0
// A run judged against its baseline as the typed verdict (wire::Verdict): the rows of
// JudgeSeries with their attribution and environment notes, the counts, the environment shift
// and its warning, the baseline's series the run lacks, and the outcome. The server's verdict is
// this function of the stored samples (it adds the baseline's choice, the ids and the parameters,
// and stores it); wire/verdict_text.h writes it. No I/O.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/threshold_rule.h"
#include "judge/judge.h"
#include "stats/verdict.h"
#include "wire/verdict.h"

namespace perfwarden::judge {

// The verdict of the contender's series against the base's (nullopt: there is no baseline), the
// rows in the contender's order, paired by key and unit. Sets outcome, results, counts, warnings
// and environment_shift; the rest of the verdict is the caller's. Outcome: kNoBaseline without a
// base; kPass without a REGRESSION row; kNoisyEnvironment when a throttled host explains every
// regression (Attributions::noisy_environment); else kRegression. Errors: JudgeSeries's.
Result<wire::Verdict> JudgeRun(std::optional<std::span<const Series>> base,
                               std::span<const Series> contender,
                               const stats::VerdictPolicy& policy,
                               std::span<const ThresholdRule> rules);

// The value, or absent when it is not finite (the wire writes no NaN).
std::optional<double> Finite(double value);

// A row's kind as the statistics decided it.
wire::ResultKind KindOf(stats::Verdict verdict);

// One side as the verdict reports it: a median or cv that is not finite is absent.
wire::Summary SummaryOf(const stats::SampleSummary& side);

// "a, b, c, d, e, ..." (at most five names).
std::string FirstNames(const std::vector<std::string>& names);

}  // namespace perfwarden::judge
