// SPDX-License-Identifier: Apache-2.0
// The job-log rendering of a verdict: a few lines of context, then one aligned table. The
// Markdown and the machine formats live in verdict_markdown.cc and verdict_junit.cc.
#include <algorithm>
#include <string>
#include <vector>

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

using internal::CleanLine;
using internal::DisplayWidth;

constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kReset = "\x1b[0m";

std::string Paint(std::string_view text, std::string_view color, bool enabled) {
  if (!enabled || color.empty()) return std::string(text);
  return std::string(color) + std::string(text) + std::string(kReset);
}

std::string_view KindColor(ResultKind kind) {
  switch (kind) {
    case ResultKind::kRegression:
      return kRed;
    case ResultKind::kImprovement:
      return kGreen;
    case ResultKind::kInconclusive:
    case ResultKind::kUnstable:
      return kYellow;
    default:
      return {};
  }
}

std::string StatusWord(const Verdict& verdict, bool color) {
  switch (verdict.outcome) {
    case Outcome::kRegression:
      return Paint("REGRESSION", kRed, color);
    case Outcome::kPass:
      return Paint("pass", kGreen, color);
    case Outcome::kNoBaseline:
      return "no baseline";
    case Outcome::kNoisyEnvironment:
      return Paint("NOISY ENVIRONMENT", kYellow, color);
  }
  return "";
}

std::string RunLine(const Verdict& verdict) {
  std::string out = "run: ";
  out += verdict.branch.empty() ? "(no branch)" : verdict.branch;
  if (!verdict.commit.empty()) out += " @ " + internal::ShortSha(verdict.commit);
  if (!verdict.testbed.empty()) out += " on " + verdict.testbed;
  if (verdict.pr) out += ", PR #" + std::to_string(*verdict.pr);
  return out;
}

std::string BaselineLine(const Verdict& verdict) {
  if (!verdict.baseline && verdict.paired) {
    return "baseline: " + internal::ShortSha(verdict.paired->baseline_commit) +
           ", measured side by side (no baseline run)";
  }
  if (!verdict.baseline) return "baseline: none";
  const Baseline& b = *verdict.baseline;
  std::string out =
      "baseline: " + (b.commit.empty() ? "(unknown commit)" : internal::ShortSha(b.commit));
  if (!b.branch.empty()) out += " on " + b.branch;
  out += ", selected as " + internal::SelectionPhrase(b.selection) + " (distance " +
         std::to_string(b.distance) + ")";
  if (!b.run_ids.empty()) {
    out += ", " + std::to_string(b.run_ids.size()) + (b.run_ids.size() == 1 ? " run" : " runs");
    if (!b.testbed.empty()) out += " on " + b.testbed;
  }
  return out;
}

enum class Align { kLeft, kRight };

// One table row as cells; the verdict column is last and never padded, so colouring it does
// not disturb the alignment.
using Row = std::vector<std::string>;

void AppendRow(std::string& out, const Row& row, const std::vector<size_t>& widths,
               const std::vector<Align>& align, std::string_view last_color, bool color) {
  for (size_t i = 0; i < row.size(); ++i) {
    const bool last = i + 1 == row.size();
    if (last) {
      out += Paint(row[i], last_color, color);
      break;
    }
    const std::string pad(widths[i] - DisplayWidth(row[i]), ' ');
    out += align[i] == Align::kRight ? pad + row[i] : row[i] + pad;
    out += "  ";
  }
  out += "\n";
}

}  // namespace

std::string RenderText(const Verdict& verdict, const TextOptions& options) {
  std::string out = "perfwarden: " + StatusWord(verdict, options.color) + " \u2014 " +
                    CleanLine(internal::HeadlineSentence(verdict)) + "\n";
  out += CleanLine(RunLine(verdict)) + "\n";
  out += CleanLine(BaselineLine(verdict)) + "\n";
  if (verdict.paired) out += "paired: " + CleanLine(internal::PairedSentence(verdict)) + "\n";
  out += internal::CountsSentence(verdict.counts) + "\n";
  out += "criteria: " + CleanLine(internal::CriteriaSentence(verdict)) + "\n";

  const auto ordered = OrderedResults(verdict);
  const size_t shown = std::min(ordered.size(), options.max_rows);
  const bool suites = internal::HasSeveralSuites(verdict);
  Row header = {"Benchmark", "Metric", "Baseline", "Current", internal::ChangeHeader(verdict),
                "p(adj)",    "n",      "Verdict"};
  std::vector<Align> align = {Align::kLeft, Align::kLeft,  Align::kRight, Align::kRight,
                              Align::kLeft, Align::kRight, Align::kRight, Align::kLeft};
  if (suites) {
    header.insert(header.begin(), "Suite");
    align.insert(align.begin(), Align::kLeft);
  }
  std::vector<Row> rows;
  for (size_t i = 0; i < shown; ++i) {
    const MetricResult& r = *ordered[i];
    Row row = {
        CleanLine(r.key.benchmark),
        CleanLine(r.key.metric),
        CleanLine(internal::FormatValue(r.base ? r.base->median : std::nullopt, r.unit)),
        CleanLine(internal::FormatValue(r.current ? r.current->median : std::nullopt, r.unit)),
        internal::FormatChange(r),
        internal::FormatP(r.p_adjusted),
        internal::FormatN(r),
        std::string(ResultKindName(r.kind))};
    if (suites) row.insert(row.begin(), CleanLine(r.key.suite));
    rows.push_back(std::move(row));
  }
  if (!ordered.empty()) {
    std::vector<size_t> widths(header.size());
    for (size_t i = 0; i < header.size(); ++i) widths[i] = DisplayWidth(header[i]);
    for (const Row& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
    }
    out += "\n";
    AppendRow(out, header, widths, align, {}, false);
    for (size_t i = 0; i < rows.size(); ++i) {
      AppendRow(out, rows[i], widths, align, KindColor(ordered[i]->kind), options.color);
    }
    if (shown < ordered.size()) {
      out += "... " + std::to_string(ordered.size() - shown) +
             " more benchmark metrics not shown (row limit " + std::to_string(options.max_rows) +
             ")\n";
    }
  }

  bool any_reason = false;
  for (size_t i = 0; i < shown; ++i) {
    const MetricResult& r = *ordered[i];
    const std::string reason = internal::ReasonSentence(r);
    const std::string attribution = internal::AttributionSentence(r);
    if (!internal::NeedsAttention(r.kind) ||
        (reason.empty() && attribution.empty() && r.environment.empty())) {
      continue;
    }
    if (!any_reason) out += "\n";
    any_reason = true;
    out += "  " + Paint(ResultKindName(r.kind), KindColor(r.kind), options.color) + " " +
           CleanLine(r.key.benchmark) + " [" + CleanLine(r.key.metric) + "]" +
           (reason.empty() ? "" : ": " + CleanLine(reason)) + "\n";
    // What moved with it and why the host may be to blame, indented under the regression.
    if (!attribution.empty()) out += "    " + CleanLine(attribution) + "\n";
    if (!r.environment.empty()) out += "    environment: " + CleanLine(r.environment) + "\n";
  }
  if (internal::HasUnstable(verdict)) out += "\n" + std::string(internal::kUnstableAdvice) + "\n";
  if (!verdict.warnings.empty()) {
    out += "\nwarnings:\n";
    for (const auto& w : verdict.warnings) out += "  - " + CleanLine(w) + "\n";
  }
  if (verdict.report_url) out += "\nreport: " + CleanLine(*verdict.report_url) + "\n";
  return out;
}

}  // namespace perfwarden::report
