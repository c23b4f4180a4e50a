// A paired measurement (wire/paired.h) as a verdict's parts, without I/O: judged by
// judge::JudgePaired (the one home of paired judging) and written as the verdict's results rows,
// counts, warnings and "paired" summary; and an unpaired verdict amended by such a measurement
// (`perfgate gate --confirm`: its re-measured rows replaced by their paired rows). docs/api.md,
// "Paired verdicts", documents what is built here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "judge/judge.h"
#include "server/store/store.h"
#include "wire/paired.h"
#include "wire/verdict.h"

namespace perfgate::server::gate {

struct PairedParts {
  std::string outcome;                // "regression" when a row is a REGRESSION, else "pass"
  std::string results_json = "[]";    // one row per series, in the measurement's order
  std::vector<judge::RowKind> kinds;  // of each row: judged, IGNORED or NEW
  nlohmann::json counts = nlohmann::json::object();
  std::vector<std::string> warnings;
  wire::PairedSummary summary;  // the verdict's "paired" object
};

// Judges the measurement with its own parameters and design (the time budget's end makes the
// look reached the last one). kInvalidArgument naming the field when the judge refuses it (a
// policy out of range, no series measured in the first look's blocks, a value not positive).
Result<PairedParts> JudgeMeasurement(const wire::PairedMeasurement& measurement);

// The counts of a results array by verdict word, "unstable" included.
nlohmann::json CountResults(const nlohmann::json& results);

struct AmendedParts {
  std::string outcome;
  std::string results_json;
  nlohmann::json counts;
  std::vector<std::string> warnings;  // the amended verdict's, then the measurement's, then ours
};

// The unpaired verdict `amended` with each row of a series the measurement judged replaced by
// its paired row (a series the measurement did not judge keeps its row; one the verdict lacks is
// added), counts recounted. Outcome: "pass" when no REGRESSION row is left;
// "noisy_environment" when `amended` was and every REGRESSION row left is an unpaired one; else
// "regression".
Result<AmendedParts> Amend(const store::NewVerdict& amended, const PairedParts& paired,
                           const wire::PairedMeasurement& measurement);

}  // namespace perfgate::server::gate
