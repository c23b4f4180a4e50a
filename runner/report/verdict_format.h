// SPDX-License-Identifier: Apache-2.0
// Wording and number formats shared by the verdict's renderings (verdict_render.h), so that the
// job log, the PR comment and the JUnit report say the same thing in the same words. Internal to
// the verdict renderers of runner/report; callers use verdict_render.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runner/report/verdict_model.h"

namespace perfwarden::report::internal {

// A median with a readable unit: time units (ns, us, ms, s) are rescaled to the one that keeps
// the number in [1, 1000) ("1.022 us"); other units print as "%.4g unit". "-" when absent.
std::string FormatValue(std::optional<double> value, const std::string& unit);

// "+9.97% [+8.1, +11.7]" (change and its CI), "+9.97%" without a CI, "-" without a change.
std::string FormatChange(const wire::MetricResult& result);

// The adjusted p-value to 2 significant digits ("0.00034"), "<1e-4" below 1e-4, "-" if absent.
std::string FormatP(std::optional<double> p);

// A p-value in a compact scientific style for one-line messages: "3.4e-4", "0.012", "0.5".
std::string FormatPCompact(double p);

// "20/10": repetitions of the baseline and of the current run ("-" for a missing side).
std::string FormatN(const wire::MetricResult& result);

// "5%", "2.5%": a relative threshold as a percentage.
std::string FormatThreshold(double threshold);

// The metric's own threshold, else the verdict's.
double ThresholdOf(const wire::MetricResult& result, const wire::Verdict& verdict);

// "Change [95% CI]" with the verdict's confidence level.
std::string ChangeHeader(const wire::Verdict& verdict);

// The first 7 characters of a commit id ("" stays "").
std::string ShortSha(std::string_view sha);

// The sentence after the status word: "1 of 13 benchmark metrics slower than its threshold",
// "no benchmark metric slower than its threshold (13 compared)", "no baseline run ...".
std::string HeadlineSentence(const wire::Verdict& verdict);

// "1 regression, 2 inconclusive, 1 unstable, 10 equivalent, 1 ignored" (kinds with a zero count
// left out).
std::string CountsSentence(const wire::Counts& counts);

// "threshold 5%, alpha 0.05, test utest, correction holm, 95% confidence, perfwarden-verdict/2".
std::string CriteriaSentence(const wire::Verdict& verdict);

// How the baseline was chosen: "the merge-base", "an ancestor of the merge-base", "the previous
// measured commit", or the server's own word for a way this runner does not know.
std::string SelectionPhrase(std::string_view selection);

// Any text for one line of a terminal: control characters (escape sequences, newlines) become
// '?', so that a benchmark name cannot rewrite the job log.
std::string CleanLine(std::string_view text);

// At most `max_bytes` bytes of `text`, cut at a UTF-8 character boundary and ending in "..."
// when cut.
std::string Truncate(std::string_view text, size_t max_bytes);

// The number of characters (UTF-8 code points) in `text`, for aligning columns.
size_t DisplayWidth(std::string_view text);

// The result's reason, then "(34 repetitions would decide it)" when the server says how many
// would, or for an UNSTABLE row "(noise 8.1% per block; ~92 blocks (460 repetitions) would decide
// it)"; the reason is cut to `max_reason` bytes.
std::string ReasonSentence(const wire::MetricResult& result, size_t max_reason = std::string::npos);

// An UNSTABLE row's noise and what would decide it: "noise 8.1% per block; ~92 blocks (460
// repetitions) would decide it"; "" for a row without paired detail.
std::string UnstableSentence(const wire::MetricResult& result);

// How a paired verdict was measured: "measured side by side on this host against 0123456789ab:
// 13 blocks of 5 repetitions each (look 3 of 5), stopped: decided; geomean change +1.20% [+0.4,
// +2.0]", or "re-measured 3 rows side by side ... (amending verdict #41): ..." for a --confirm
// measurement; "" for an unpaired verdict.
std::string PairedSentence(const wire::Verdict& verdict);

// True when a result is UNSTABLE (the reports then say what to do about it, once).
bool HasUnstable(const wire::Verdict& verdict);

// What to do about UNSTABLE rows, said once under them where there are any.
inline constexpr std::string_view kUnstableAdvice =
    "UNSTABLE results do not fail the job: to decide them, raise the repetitions per block or "
    "max_blocks, quiet the benchmark, or give it its own threshold rule.";

// A paired row's numbers: "13 blocks, noise 2.1% per block, drift 9.8%, median change +10.1%,
// Hodges-Lehmann +10.0%, p_t=3.4e-4, p_wilcoxon=0.0012, p_sign=0.0034"; "" without paired detail.
std::string PairedNumbers(const wire::MetricResult& result);

// "moved: gpu_utilization -18.0% (inconclusive), tflops -9.5%; roofline: memory-bound (2.5
// FLOP/byte, ridge 156); hint: ..." from the result's attribution (verdicts other than
// REGRESSION and IMPROVEMENT are named, lower case); "" when it has none.
std::string AttributionSentence(const wire::MetricResult& result);

// True for the kinds that the reports put first and explain: REGRESSION, INCONCLUSIVE and
// UNSTABLE (a prefix of OrderedResults).
inline bool NeedsAttention(wire::ResultKind kind) {
  return kind == wire::ResultKind::kRegression || kind == wire::ResultKind::kInconclusive ||
         kind == wire::ResultKind::kUnstable;
}

// True when the verdict's results come from more than one suite (reports then show the suite).
bool HasSeveralSuites(const wire::Verdict& verdict);

}  // namespace perfwarden::report::internal
