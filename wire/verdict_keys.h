// SPDX-License-Identifier: Apache-2.0
// The key names of the verdict object and the objects inside it (docs/api.md, "Verdicts"), kept
// in one place: the server's text writer (verdict_text.cc), EncodeVerdict as a JSON tree and
// DecodeVerdict reads them, so a renamed key must change all three at once.
#pragma once

#include <string_view>

namespace perfwarden::wire::keys {

// The verdict itself, and the envelope `{"verdict": {...}}` it travels in.
namespace verdict {
inline constexpr std::string_view kEnvelope = "verdict";
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kRunId = "run_id";
inline constexpr std::string_view kCreatedAt = "created_at";
inline constexpr std::string_view kProject = "project";
inline constexpr std::string_view kOutcome = "outcome";
inline constexpr std::string_view kAlgorithmVersion = "algorithm_version";
inline constexpr std::string_view kParameters = "parameters";
inline constexpr std::string_view kBaseline = "baseline";
inline constexpr std::string_view kContenderRunIds = "contender_run_ids";
inline constexpr std::string_view kCommit = "commit";
inline constexpr std::string_view kBranch = "branch";
inline constexpr std::string_view kTestbed = "testbed";
inline constexpr std::string_view kPr = "pr";
inline constexpr std::string_view kCounts = "counts";
inline constexpr std::string_view kWarnings = "warnings";
inline constexpr std::string_view kReportUrl = "report_url";
inline constexpr std::string_view kResults = "results";
inline constexpr std::string_view kEnvironmentShift = "environment_shift";
inline constexpr std::string_view kPaired = "paired";
inline constexpr std::string_view kRunnerVersion = "runner_version";
}  // namespace verdict

// A paired verdict's "paired" object (wire::PairedSummary).
namespace paired {
inline constexpr std::string_view kAmends = "amends";
inline constexpr std::string_view kBaselineCommit = "baseline_commit";
inline constexpr std::string_view kBlocks = "blocks";
inline constexpr std::string_view kDesign = "design";
inline constexpr std::string_view kGeomeanChange = "geomean_change";
inline constexpr std::string_view kGeomeanCi = "geomean_ci";
inline constexpr std::string_view kLook = "look";
inline constexpr std::string_view kLooks = "looks";
inline constexpr std::string_view kMeasured = "measured";
}  // namespace paired

// A paired design (wire::PairedDesign): the measurement's "design" and the paired summary's.
namespace design {
inline constexpr std::string_view kRepetitions = "repetitions";
inline constexpr std::string_view kMinBlocks = "min_blocks";
inline constexpr std::string_view kMaxBlocks = "max_blocks";
inline constexpr std::string_view kGrowth = "growth";
inline constexpr std::string_view kTest = "test";
inline constexpr std::string_view kSeed = "seed";
inline constexpr std::string_view kStopped = "stopped";
inline constexpr std::string_view kSpending = "spending";
}  // namespace design

// A result's "paired" object (wire::PairedDetail), in sorted order.
namespace paired_result {
inline constexpr std::string_view kBlocks = "blocks";
inline constexpr std::string_view kBlocksNeeded = "blocks_needed";
inline constexpr std::string_view kBootstrapCi = "bootstrap_ci";
inline constexpr std::string_view kDecidedAtLook = "decided_at_look";
inline constexpr std::string_view kDrift = "drift";
inline constexpr std::string_view kHodgesLehmann = "hodges_lehmann";
inline constexpr std::string_view kMedianChange = "median_change";
inline constexpr std::string_view kNoise = "noise";
inline constexpr std::string_view kPSign = "p_sign";
inline constexpr std::string_view kPT = "p_t";
inline constexpr std::string_view kPWilcoxon = "p_wilcoxon";
inline constexpr std::string_view kTCi = "t_ci";
}  // namespace paired_result

// "environment_shift": present when the run's metrics moved together (stats/environment_shift.h).
namespace shift {
inline constexpr std::string_view kMetrics = "metrics";
inline constexpr std::string_view kMedianChange = "median_change";
inline constexpr std::string_view kGeomeanChange = "geomean_change";
inline constexpr std::string_view kSameSignShare = "same_sign_share";
inline constexpr std::string_view kReason = "reason";
}  // namespace shift

// One element of "results".
namespace result {
inline constexpr std::string_view kAttribution = "attribution";
inline constexpr std::string_view kBase = "base";
inline constexpr std::string_view kBenchmark = "benchmark";
inline constexpr std::string_view kChange = "change";
inline constexpr std::string_view kChangeCi = "change_ci";
inline constexpr std::string_view kCurrent = "current";
inline constexpr std::string_view kDirection = "direction";
inline constexpr std::string_view kEnvironment = "environment";
inline constexpr std::string_view kMetric = "metric";
inline constexpr std::string_view kPAdjusted = "p_adjusted";
inline constexpr std::string_view kPaired = "paired";
inline constexpr std::string_view kPValue = "p_value";
inline constexpr std::string_view kReason = "reason";
inline constexpr std::string_view kRepetitionsNeeded = "repetitions_needed";
inline constexpr std::string_view kSuite = "suite";
inline constexpr std::string_view kThreshold = "threshold";
inline constexpr std::string_view kUnit = "unit";
inline constexpr std::string_view kVerdict = "verdict";
}  // namespace result

// A result's "base" and "current".
namespace side {
inline constexpr std::string_view kCv = "cv";
inline constexpr std::string_view kMedian = "median";
inline constexpr std::string_view kN = "n";
}  // namespace side

namespace counts {
inline constexpr std::string_view kRegression = "regression";
inline constexpr std::string_view kImprovement = "improvement";
inline constexpr std::string_view kEquivalent = "equivalent";
inline constexpr std::string_view kInconclusive = "inconclusive";
inline constexpr std::string_view kIgnored = "ignored";
inline constexpr std::string_view kNew = "new";
inline constexpr std::string_view kUnstable = "unstable";
inline constexpr std::string_view kPass = "pass";
inline constexpr std::string_view kReported = "reported";
}  // namespace counts

namespace baseline {
inline constexpr std::string_view kCommit = "commit";
inline constexpr std::string_view kBranch = "branch";
inline constexpr std::string_view kTestbed = "testbed";
inline constexpr std::string_view kRunIds = "run_ids";
inline constexpr std::string_view kSelection = "selection";
inline constexpr std::string_view kDistance = "distance";
}  // namespace baseline

// The verdict's "parameters", which is the verdict request as the server stored it (a request
// may also name contender runs; the stored object never does).
namespace parameters {
inline constexpr std::string_view kThreshold = "threshold";
inline constexpr std::string_view kAlpha = "alpha";
inline constexpr std::string_view kTest = "test";
inline constexpr std::string_view kRules = "rules";
inline constexpr std::string_view kContenderRuns = "contender_runs";
inline constexpr std::string_view kCorrection = "correction";
inline constexpr std::string_view kConfidence = "confidence";
inline constexpr std::string_view kBootstrapResamples = "bootstrap_resamples";
inline constexpr std::string_view kSeed = "seed";
inline constexpr std::string_view kPower = "power";
}  // namespace parameters

// One element of the parameters' "rules".
namespace rule {
inline constexpr std::string_view kSuite = "suite";
inline constexpr std::string_view kBenchmark = "benchmark";
inline constexpr std::string_view kMetric = "metric";
inline constexpr std::string_view kPercent = "percent";
inline constexpr std::string_view kAlpha = "alpha";
inline constexpr std::string_view kIgnore = "ignore";
inline constexpr std::string_view kGate = "gate";
}  // namespace rule

// A result's "attribution", its "moved" elements and its "roofline".
namespace attribution {
inline constexpr std::string_view kHint = "hint";
inline constexpr std::string_view kMoved = "moved";
inline constexpr std::string_view kRoofline = "roofline";
}  // namespace attribution

namespace moved {
inline constexpr std::string_view kChange = "change";
inline constexpr std::string_view kMetric = "metric";
inline constexpr std::string_view kVerdict = "verdict";
}  // namespace moved

namespace roofline {
inline constexpr std::string_view kClass = "class";
inline constexpr std::string_view kIntensity = "intensity";
inline constexpr std::string_view kRidge = "ridge";
}  // namespace roofline

}  // namespace perfwarden::wire::keys
