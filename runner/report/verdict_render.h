// SPDX-License-Identifier: Apache-2.0
// `perfwarden gate` renderings of a server verdict for its three audiences: the job log (text),
// the reviewer (Markdown for a step summary or a PR/MR comment) and CI systems (JUnit XML,
// GitLab's metrics report). Each is a pure, deterministic function of a decoded Verdict; every
// one lists results in OrderedResults() order. Exit codes are the caller's (see HasRegression).
#pragma once

#include <cstddef>
#include <limits>
#include <string>

#include "runner/report/verdict_model.h"

namespace perfwarden::report {

struct TextOptions {
  bool color = false;  // ANSI colours: red REGRESSION, green IMPROVEMENT, yellow INCONCLUSIVE
                       // and UNSTABLE
  size_t max_rows = std::numeric_limits<size_t>::max();  // table rows; a line counts the rest
};

// Headline ("perfwarden: REGRESSION — 1 of 13 benchmark metrics slower than its threshold"), the
// run and its baseline, how a paired verdict was measured, counts and criteria, an aligned table,
// the reasons of regressions, inconclusive and unstable results (with what to do about unstable
// ones), warnings, and the report URL. Control characters in names print as '?'.
std::string RenderText(const wire::Verdict& verdict, const TextOptions& options = {});

struct MarkdownOptions {
  // true: a PR/MR comment body; it opens with the marker
  // `<!-- perfwarden:gate project=<p> testbed=<tb> -->` (so a CI script can find and update its
  // previous comment) and stays under kMaxCommentChars. false: a step summary, under
  // kMaxSummaryChars.
  bool comment = false;
  size_t max_rows = 300;
  // The project for the marker; when empty, Verdict::project.
  std::string project = {};
};

// GitHub rejects comments over 65536 characters; the margin leaves room for a CI script's own
// additions.
inline constexpr size_t kMaxCommentChars = 60000;
// GitHub rejects a step summary over 1 MiB.
inline constexpr size_t kMaxSummaryChars = 1000000;

// A status word (**Regression**, **Pass**, **No baseline**) and sentence, how a paired verdict
// was measured, a table of regressions, inconclusive and unstable results with their reasons, the
// others folded in <details>, warnings, the baseline and the criteria, and a link to the report.
// Rows beyond max_rows, or beyond the size limit (the folded rows go first), are left out and
// counted in a line of their own. Names (suite, benchmark, metric, branch, testbed) are code
// spans (text::MdCode); every other piece of server text is escaped (Markdown punctuation, HTML
// as entities) and defused (text::DefuseMd): nothing from the suite or the request can mention,
// reference, link or mark up.
std::string RenderMarkdown(const wire::Verdict& verdict, const MarkdownOptions& options = {});

// JUnit XML: one <testsuite name="perfwarden">, one <testcase classname="<suite>"
// name="<benchmark> [<metric>]"> per result. REGRESSION fails; IGNORED and NEW are skipped, and
// UNSTABLE too (not gating), its message saying its noise and the blocks that would decide it;
// INCONCLUSIVE passes with a <system-out> saying so. A paired verdict's rows carry their paired
// numbers, and a property "paired" says how it was measured. A no_baseline verdict is a single
// skipped testcase "baseline". Text is XML-escaped and stripped of characters XML 1.0 cannot hold.
std::string RenderJUnit(const wire::Verdict& verdict);

// GitLab's metrics report (artifacts:reports:metrics): one "name value" line per metric,
// perfwarden_<suite>_<benchmark>_<metric> = the current median and <same>_change_percent = the
// change in percent, names reduced to [a-zA-Z0-9_:].
std::string RenderGitLabMetrics(const wire::Verdict& verdict);

}  // namespace perfwarden::report
