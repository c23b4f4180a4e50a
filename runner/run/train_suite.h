// SPDX-License-Identifier: Apache-2.0
// A `type: train` suite: a training benchmark that prints perfwarden's JSON lines
// (runner/adapters/train_lines.h). Each run's steady-state steps become samples of `step_time`
// (seconds) and of `step_<name>` for every per-step value; each metric event is one sample per
// run of its own metric, with the unit and direction the command gave.
#pragma once

#include "runner/run/suites.h"

namespace perfwarden::run {

// `suite` must be of type train (RunSuite dispatches here after the build).
Result<SuiteOutcome> RunTrainSuite(const config::RunnerConfig& config, const config::Suite& suite,
                                   const SuiteOptions& options, const ProgressLine& progress);

}  // namespace perfwarden::run
