// SPDX-License-Identifier: Apache-2.0
// A paired measurement (wire/paired.h) as the typed verdict (wire::Verdict), without I/O: judged
// by JudgePaired (judge/paired.h) into one row per series with its paired detail, the counts,
// the warnings, the "paired" summary and the outcome; and an unpaired verdict amended by such a
// measurement (`perfwarden gate --confirm`: its re-measured rows replaced by their paired rows).
// docs/api.md, "Paired verdicts", documents what is decided here.
#pragma once

#include "core/result.h"
#include "wire/paired.h"
#include "wire/verdict.h"

namespace perfwarden::judge {

// Judges the measurement with its own parameters and design (the time budget's end makes the
// look reached the last one). Sets outcome (kRegression when a row is a REGRESSION, else kPass),
// results (in the measurement's series order), counts, warnings and paired; the rest of the
// verdict is the caller's. kInvalidArgument naming the field when the judge refuses it (a policy
// out of range, no series measured in the first look's blocks, a value not positive: named by
// its path in the body, series[i].blocks[b].head[r]).
Result<wire::Verdict> JudgeMeasurement(const wire::PairedMeasurement& measurement);

// The unpaired verdict `amended` with each row of a series the paired verdict judged (a row with
// its paired detail) replaced by its paired row (a series the measurement did not judge keeps its
// row; one the verdict lacks is added), counts recounted, warnings: the amended verdict's, the
// paired verdict's, then what the amendment did; paired: the paired verdict's. Outcome: kPass when
// no REGRESSION row is left; kNoisyEnvironment when `amended` was and every REGRESSION row left is
// an unpaired one; else kRegression.
wire::Verdict Amend(const wire::Verdict& amended, const wire::Verdict& paired);

}  // namespace perfwarden::judge
