// SPDX-License-Identifier: Apache-2.0
// The reviewer's rendering of a verdict (GitHub-flavoured Markdown) for a step summary or a PR/MR
// comment. Every piece of server text is truncated and escaped before it is measured, so the size
// limit is kept by construction: the fixed parts are bounded, and rows, then warnings, then the
// folded rows are added only while they fit. Names come from the suite and the pull request, so
// none may mention, link or mark up: names are code spans, sentences escaped and defused.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "runner/report/text_format.h"
#include "runner/report/verdict_format.h"
#include "runner/report/verdict_render.h"

namespace perfwarden::report {
namespace {

using wire::Baseline;
using wire::MetricResult;
using wire::Outcome;
using wire::ResultKind;
using wire::ResultKindName;
using wire::Verdict;

using internal::Truncate;
using text::DefuseMd;
using text::MdCode;

// Room kept for what is added after the budget is spent: table headers, the <details> wrapper,
// the left-out line, the "more warnings" line and the UNSTABLE advice (well under this together).
constexpr size_t kReserve = 2500;
constexpr size_t kMaxName = 300;      // bytes of a benchmark name, metric or suite in a cell
constexpr size_t kMaxSentence = 600;  // bytes of a reason, warning or other server sentence
constexpr size_t kMaxUrl = 2000;

// Text for a table cell or a list item: it renders as itself. Markdown punctuation is
// backslash-escaped, HTML's specials become entities, line breaks (which would end a table
// row) become spaces, and mentions, references and bare links are defused.
std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) {
      out += ' ';
    } else if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (std::string_view("\\`*_[]~#|").find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return DefuseMd(out);
}

// A name (branch, testbed, suite, benchmark, metric): a code span, cut to kMaxName bytes first.
std::string Name(std::string_view name) { return MdCode(Truncate(name, kMaxName)); }

// Bytes outside a small safe set become %XX: used for the marker (which must not end the HTML
// comment early) and for URLs inside <...> link destinations.
std::string PercentEncode(std::string_view text, std::string_view safe) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum || (u > 0x20 && u < 0x7F && safe.find(c) != std::string_view::npos)) {
      out += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      out += hex;
    }
  }
  return out;
}

std::string Link(std::string_view text, const std::string& url) {
  // <...> destinations may hold parentheses; everything else unusual is percent-encoded.
  return "[" + std::string(text) + "](<" +
         PercentEncode(Truncate(url, kMaxUrl), "-._~:/?#[]@!$&'()*+,;=%") + ">)";
}

std::string StatusWord(Outcome outcome) {
  switch (outcome) {
    case Outcome::kRegression:
      return "**Regression**";
    case Outcome::kPass:
      return "**Pass**";
    case Outcome::kNoBaseline:
      return "**No baseline**";
    case Outcome::kNoisyEnvironment:
      return "**Noisy environment**";
  }
  return "";
}

std::string Head(const Verdict& verdict, const MarkdownOptions& options) {
  std::string out;
  if (options.comment) {
    const std::string& project = options.project.empty() ? verdict.project : options.project;
    constexpr std::string_view kSafe = "-._~:@+/=";
    out += "<!-- perfwarden:gate project=" + PercentEncode(Truncate(project, kMaxName), kSafe) +
           " testbed=" + PercentEncode(Truncate(verdict.testbed, kMaxName), kSafe) + " -->\n";
  }
  out += "### perfwarden: " + StatusWord(verdict.outcome) + "\n\n";
  std::string sentence = Truncate(internal::HeadlineSentence(verdict), kMaxSentence);
  if (!sentence.empty() && sentence[0] >= 'a' && sentence[0] <= 'z') sentence[0] -= 'a' - 'A';
  out += Escape(sentence);
  std::string run = Name(verdict.branch);
  if (!verdict.commit.empty()) {
    run += (run.empty() ? "" : " at ") + Escape(internal::ShortSha(verdict.commit));
  }
  if (!verdict.testbed.empty()) run += " on " + Name(verdict.testbed);
  if (verdict.pr) run += ", PR \\#" + std::to_string(*verdict.pr);  // this request: a link
  if (!run.empty()) out += " \u2014 " + run;
  out += ".\n";
  if (verdict.paired) {
    std::string paired = Truncate(internal::PairedSentence(verdict), kMaxSentence);
    if (!paired.empty()) paired[0] = static_cast<char>(paired[0] - 'a' + 'A');
    out += "\n" + Escape(paired) + ".\n";
  }
  return out;
}

std::string Tail(const Verdict& verdict) {
  std::string out = "\n";
  if (verdict.baseline) {
    const Baseline& b = *verdict.baseline;
    out += "Baseline: " + Escape(internal::ShortSha(b.commit));
    if (!b.branch.empty()) out += " on " + Name(b.branch);
    out += ", selected as " + Escape(Truncate(internal::SelectionPhrase(b.selection), kMaxName)) +
           " (distance " + std::to_string(b.distance) + ")";
    if (!b.run_ids.empty()) {
      out += ", " + std::to_string(b.run_ids.size()) + (b.run_ids.size() == 1 ? " run" : " runs");
      if (!b.testbed.empty()) out += " on " + Name(b.testbed);
    }
    out += ".  \n";
  } else if (verdict.paired) {
    out += "Baseline: " + Escape(internal::ShortSha(verdict.paired->baseline_commit)) +
           ", measured side by side (no baseline run).  \n";
  } else {
    out += "Baseline: none.  \n";
  }
  out += Escape(internal::CountsSentence(verdict.counts)) + ".  \n";
  out += "Criteria: " + Escape(Truncate(internal::CriteriaSentence(verdict), kMaxSentence)) + ".\n";
  if (verdict.report_url && !verdict.report_url->empty()) {
    out += "\n" + Link("Full report", *verdict.report_url) + "\n";
  }
  return out;
}

std::string TableHeader(const Verdict& verdict, bool suites) {
  std::string out = suites ? "| Suite " : "";
  out += "| Benchmark | Metric | Baseline | Current | " + Escape(internal::ChangeHeader(verdict)) +
         " | p (adj.) | n | Verdict |\n";
  out += suites ? "| :-- " : "";
  out += "| :-- | :-- | --: | --: | --: | --: | --: | :-- |\n";
  return out;
}

std::string TableRow(const MetricResult& r, bool suites) {
  std::string out = suites ? "| " + Name(r.key.suite) + " " : "";
  const std::string kind(ResultKindName(r.kind));
  out += "| " + Name(r.key.benchmark) + " | " + Name(r.key.metric) + " | " +
         Escape(internal::FormatValue(r.base ? r.base->median : std::nullopt,
                                      Truncate(r.unit, kMaxName))) +
         " | " +
         Escape(internal::FormatValue(r.current ? r.current->median : std::nullopt,
                                      Truncate(r.unit, kMaxName))) +
         " | " + Escape(internal::FormatChange(r)) + " | " +
         Escape(internal::FormatP(r.p_adjusted)) + " | " + internal::FormatN(r) + " | " +
         (r.kind == ResultKind::kRegression ? "**" + kind + "**" : kind) + " |\n";
  return out;
}

// "- REGRESSION **`BM_x`** \[`real_time`\]: reason (30 repetitions would decide it)", then what
// moved with it and the host's state as nested items; "" with nothing to say.
std::string ReasonItem(const MetricResult& r) {
  const std::string attribution = internal::AttributionSentence(r);
  const std::string text = Escape(internal::ReasonSentence(r, kMaxSentence));
  if (text.empty() && attribution.empty() && r.environment.empty()) return "";
  std::string out = "- " + std::string(ResultKindName(r.kind)) + " **" + Name(r.key.benchmark) +
                    "** \\[" + Name(r.key.metric) + "\\]" + (text.empty() ? "" : ": " + text) +
                    "\n";
  if (!attribution.empty()) out += "  - " + Escape(Truncate(attribution, kMaxSentence)) + "\n";
  if (!r.environment.empty()) {
    out += "  - environment: " + Escape(Truncate(r.environment, kMaxSentence)) + "\n";
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const Verdict& verdict, const MarkdownOptions& options) {
  const size_t limit = options.comment ? kMaxCommentChars : kMaxSummaryChars;
  const std::string head = Head(verdict, options);
  const std::string tail = Tail(verdict);
  const bool suites = internal::HasSeveralSuites(verdict);
  const auto ordered = OrderedResults(verdict);
  const size_t considered = std::min(ordered.size(), options.max_rows);
  size_t first_folded = 0;  // the results needing attention are a prefix of `ordered`
  while (first_folded < ordered.size() && internal::NeedsAttention(ordered[first_folded]->kind)) {
    ++first_folded;
  }

  size_t used = head.size() + tail.size() + kReserve;
  bool full = false;  // once one piece does not fit, later ones are left out too
  auto fits = [&](size_t size) {
    full = full || used + size > limit;
    if (!full) used += size;
    return !full;
  };
  std::string main_rows;
  std::string reasons;
  size_t main_shown = 0;
  for (; main_shown < std::min(considered, first_folded); ++main_shown) {
    const MetricResult& r = *ordered[main_shown];
    std::string row = TableRow(r, suites);
    std::string reason = ReasonItem(r);
    if (!fits(row.size() + reason.size())) break;
    main_rows += row;
    reasons += reason;
  }
  std::string warnings;
  size_t warnings_shown = 0;
  for (; warnings_shown < verdict.warnings.size(); ++warnings_shown) {
    std::string item =
        "- " + Escape(Truncate(verdict.warnings[warnings_shown], kMaxSentence)) + "\n";
    if (!fits(item.size())) break;
    warnings += item;
  }
  std::string folded_rows;
  size_t folded_shown = 0;
  for (size_t i = first_folded; i < considered; ++i, ++folded_shown) {
    std::string row = TableRow(*ordered[i], suites);
    if (!fits(row.size())) break;
    folded_rows += row;
  }

  std::string out = head;
  if (main_shown > 0) out += "\n" + TableHeader(verdict, suites) + main_rows;
  if (!reasons.empty()) out += "\n" + reasons;
  if (internal::HasUnstable(verdict)) out += "\n" + Escape(internal::kUnstableAdvice) + "\n";
  if (folded_shown > 0) {
    const size_t others = ordered.size() - first_folded;
    // "other" only when a table of regressions or inconclusive results precedes it.
    out += "\n<details><summary>" + std::to_string(others) + (first_folded > 0 ? " other" : "") +
           " benchmark metric" + (others == 1 ? "" : "s") + "</summary>\n\n" +
           TableHeader(verdict, suites) + folded_rows + "\n</details>\n";
  }
  if (const size_t left_out = ordered.size() - main_shown - folded_shown; left_out > 0) {
    std::string why = considered < ordered.size()
                          ? "the limit is " + std::to_string(options.max_rows) + " rows"
                          : "";
    if (main_shown + folded_shown < considered) {
      why += std::string(why.empty() ? "" : " and ") + "a " +
             (options.comment ? "comment" : "summary") + " must stay under " +
             std::to_string(limit) + " characters";
    }
    out += "\n_" + std::to_string(left_out) + " of " + std::to_string(ordered.size()) +
           " benchmark metrics not shown: " + why;
    // The link itself is in the tail; repeating it here would cost up to kMaxUrl bytes more.
    if (verdict.report_url && !verdict.report_url->empty()) out += "; the full report has them all";
    out += "._\n";
  }
  if (!verdict.warnings.empty()) {
    out += "\n**Warnings**\n\n" + warnings;
    if (warnings_shown < verdict.warnings.size()) {
      out += "- " + std::to_string(verdict.warnings.size() - warnings_shown) +
             " more warnings not shown\n";
    }
  }
  out += tail;
  return out;
}

}  // namespace perfwarden::report
