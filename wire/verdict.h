// SPDX-License-Identifier: Apache-2.0
// The verdict of a run as the server computed it (GET/POST .../runs/{id}/verdict, docs/api.md
// "Verdicts") as typed values: decoded by `perfwarden gate`, which never recomputes a verdict but
// orders and renders what the server answered (runner/report), so these types mirror the JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "core/threshold_rule.h"
#include "wire/paired.h"

namespace perfwarden::wire {

// The run as a whole. kNoisyEnvironment: every regression happened on a host whose GPUs were
// throttled; the run must be repeated on a healthy host (older servers never send it).
enum class Outcome { kRegression, kPass, kNoBaseline, kNoisyEnvironment };

// One benchmark metric. The enumerators are in the order reports list them (OrderedResults).
// kUnstable (paired verdicts only): the blocks' noise could not decide the threshold by the last
// look; not gating, reported with its noise and the blocks that would decide.
// kPass (paired verdicts only): a slowdown beyond the threshold is ruled out (the one-sided bound
// lies below it), and neither an improvement nor equivalence was shown.
// kReported: judged and shown with its change, never gating: a metric the benchmark does not gate
// on (not its primary metric, or a rule's `gate: false`); its reason says what the data showed.
enum class ResultKind {
  kRegression,
  kInconclusive,
  kUnstable,
  kImprovement,
  kNew,
  kEquivalent,
  kPass,
  kReported,
  kIgnored
};

// "regression" / "pass" / "no_baseline" / "noisy_environment", as on the wire.
std::string_view OutcomeName(Outcome outcome);
// "REGRESSION", "INCONCLUSIVE", ..., as on the wire.
std::string_view ResultKindName(ResultKind kind);

// What the verdict was computed with, so that a reader can tell why and replay it.
struct VerdictParameters {
  double threshold = 0.05;  // relative change, 0.05 = 5%
  double alpha = 0.05;
  std::string test;        // "utest", "welch", ...
  std::string correction;  // "holm", ...
  double confidence = 0.95;
  int64_t bootstrap_resamples = 0;
  uint64_t seed = 0;
  double power = 0.8;
  std::vector<ThresholdRule> rules;  // the project's per-benchmark rules, as sent

  bool operator==(const VerdictParameters&) const = default;
};

struct Baseline {
  std::string commit;  // 40 hex
  std::string branch;
  std::string testbed;
  std::vector<std::string> run_ids;
  // "merge_base", "ancestor", "previous_commit" or "latest_before"; kept as text so that a newer
  // server's way of choosing still renders (as the raw word).
  std::string selection;
  // First-parent steps from the merge-base (or, for previous_commit, from the run's commit).
  int64_t distance = 0;

  bool operator==(const Baseline&) const = default;
};

// Counts per result kind as the server reported them (or, when it sent none, as counted here).
struct Counts {
  int64_t regression = 0;
  int64_t improvement = 0;
  int64_t equivalent = 0;
  int64_t inconclusive = 0;
  int64_t ignored = 0;
  int64_t new_metrics = 0;  // "new" on the wire
  int64_t unstable = 0;     // paired verdicts; absent (0) in unpaired ones
  int64_t pass = 0;         // paired verdicts; absent (0) in unpaired ones and older servers'
  int64_t reported = 0;     // judged, not gating; absent (0) in older servers'

  // The gated metrics that were compared with a baseline: all but reported, ignored and new.
  int64_t Compared() const {
    return regression + improvement + equivalent + inconclusive + unstable + pass;
  }

  bool operator==(const Counts&) const = default;
};

// One side of a comparison; median and cv are absent when the server could not compute them.
struct Summary {
  int64_t n = 0;
  std::optional<double> median;
  std::optional<double> cv;

  bool operator==(const Summary&) const = default;
};

struct Interval {
  double lower = 0;
  double upper = 0;

  bool operator==(const Interval&) const = default;
};

// A metric of the same benchmark (or the suite's GPU telemetry) that moved with a regression.
struct MovedMetric {
  std::string metric;
  std::string verdict;  // as on the wire: a newer server's word renders as it is
  std::optional<double> change;

  bool operator==(const MovedMetric&) const = default;
};

// Where a training step sits on the roofline: "compute-bound" or "memory-bound" at `intensity`
// FLOP/byte against the `ridge` point of the GPU's peaks.
struct Roofline {
  std::string bound;  // "class" on the wire
  std::optional<double> intensity;
  std::optional<double> ridge;

  bool operator==(const Roofline&) const = default;
};

// What the server could tell about a regression's cause (docs/api.md, "Verdicts").
struct Attribution {
  std::vector<MovedMetric> moved;  // most significant first
  std::optional<Roofline> roofline;
  std::string hint;  // one line; "" when none

  bool operator==(const Attribution&) const = default;
};

// A row judged on paired blocks (docs/statistics.md, "Paired verdict"): the row's change,
// change_ci (the decision interval), p_value and p_adjusted are the paired ones; these are the
// rest. t_ci and bootstrap_ci are null when a bound was not finite.
struct PairedDetail {
  int64_t blocks = 0;  // complete blocks the numbers rest on
  double noise = 0;    // sd of the per-block log ratios (~relative)
  double drift = 0;    // sd of the baseline's per-block log medians: cancelled by pairing
  std::optional<Interval> t_ci;
  std::optional<Interval> bootstrap_ci;
  double median_change = 0;   // exp(median d) - 1
  double hodges_lehmann = 0;  // exp(one-sample Hodges-Lehmann of d) - 1
  double p_t = 0;
  double p_wilcoxon = 0;
  double p_sign = 0;
  int64_t blocks_needed = 0;     // UNSTABLE: blocks that would decide the threshold; 0 otherwise
  int64_t decided_at_look = -1;  // -1 while undecided

  bool operator==(const PairedDetail&) const = default;
};

// One series' row; on the wire its key's fields stand flat ("suite", "benchmark", "metric").
struct MetricResult {
  SeriesKey key;
  std::string unit;  // "ns", "us", "ms", "s", "items/s", "" ...
  Direction direction = Direction::kLowerIsBetter;
  std::optional<double>
      threshold;  // this metric's own threshold; VerdictParameters::threshold if absent
  ResultKind kind = ResultKind::kEquivalent;  // "verdict" on the wire
  std::optional<Summary> base;                // absent for NEW
  std::optional<Summary> current;
  std::optional<double> change;  // current/base - 1; absent for NEW and IGNORED
  std::optional<Interval> change_ci;
  std::optional<double> p_value;
  std::optional<double> p_adjusted;
  // INCONCLUSIVE: repetitions power analysis asks for; -1 when a side has too few to tell.
  int64_t repetitions_needed = 0;
  std::string reason;
  std::optional<Attribution> attribution;  // REGRESSION rows the server could explain
  std::string environment;  // the host's state when it spoils the measurement; "" otherwise
  std::optional<PairedDetail> paired;  // rows judged on paired blocks

  bool operator==(const MetricResult&) const = default;
};

// The evidence that the run's metrics moved together, beyond the threshold (a drift of the
// machine between the baseline and this run, or a change that touches most benchmarks): the
// unpaired comparison cannot tell which. docs/statistics.md, "Environment shift".
struct EnvironmentShift {
  int64_t metrics = 0;         // judged
  double median_change = 0;    // + is worse
  double geomean_change = 0;   // + is worse
  double same_sign_share = 0;  // of the metrics moving the median's way
  std::string reason;

  bool operator==(const EnvironmentShift&) const = default;
};

// How a paired verdict was measured: baseline and head interleaved in blocks on one host
// (`perfwarden gate --paired`, or `--confirm` re-measuring the rows of verdict `amends`).
struct PairedSummary {
  std::string baseline_commit;
  PairedDesign design;  // with "stopped"
  std::optional<int64_t> amends;
  int64_t measured = 0;  // series measured on both sides
  int64_t look = 0;      // the look judged, 0-based, of `looks`
  int64_t looks = 0;
  int64_t blocks = 0;                    // the look's block count
  std::optional<double> geomean_change;  // over the judged series: exp(mean of mean d) - 1
  std::optional<Interval> geomean_ci;

  bool operator==(const PairedSummary&) const = default;
};

struct Verdict {
  int64_t id = 0;
  std::string run_id;
  std::string created_at;
  // Not part of the verdict JSON today; read when a server sends it. Renderers that need the
  // project (the PR comment marker) take it from their options first.
  std::string project;
  Outcome outcome = Outcome::kPass;
  std::string algorithm_version;
  VerdictParameters parameters;
  std::optional<Baseline> baseline;
  std::vector<std::string> contender_run_ids;  // the run first, then the pooled ones
  std::string commit;
  std::string branch;
  std::string testbed;
  std::optional<int64_t> pr;
  Counts counts;
  std::vector<std::string> warnings;
  std::optional<std::string> report_url;
  std::vector<MetricResult> results;
  std::optional<EnvironmentShift> environment_shift;  // written only when there is one
  std::optional<PairedSummary> paired;                // written only for paired verdicts
  // The perfwarden build that measured the run (its upload's runner_version); written only when
  // the upload named one.
  std::optional<std::string> runner_version;

  bool operator==(const Verdict&) const = default;
};

// The counts of the rows by kind.
Counts CountResults(std::span<const MetricResult> results);

// Decodes the server's answer, `{"verdict": {...}}` (a bare verdict object is accepted too, for
// files saved by hand). Unknown keys are ignored so that a newer server does not break an older
// runner; the keys read here must have their documented types (null where the format allows it).
// Required: outcome, results, and suite/benchmark/metric/verdict of every result. Errors are
// kInvalidArgument with `field` naming the offending key ("verdict.results[3].change_ci[1]").
Result<Verdict> DecodeVerdict(std::string_view json);

// The verdict object with the keys the server writes (absent optionals as null, the counts
// always; project and report_url only when set): DecodeVerdict(EncodeVerdict(v).dump()) == v.
// The server writes and stores a verdict in parts, as text (wire/verdict_text.h), which is faster.
nlohmann::json EncodeVerdict(const Verdict& verdict);
// The "environment_shift" object, as EncodeVerdict and the server's verdict write it.
nlohmann::json EncodeEnvironmentShift(const EnvironmentShift& shift);
// The result's "paired" object and the verdict's "paired" object, as EncodeVerdict and the
// server's paired verdict write them.
nlohmann::json EncodePairedDetail(const PairedDetail& detail);
nlohmann::json EncodePairedSummary(const PairedSummary& summary);

}  // namespace perfwarden::wire
