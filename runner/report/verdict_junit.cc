// SPDX-License-Identifier: Apache-2.0
// The machine renderings of a verdict: JUnit XML (read by GitHub/GitLab/Jenkins test reports)
// and GitLab's metrics report. Both are deterministic so that two renderings of one verdict are
// byte-identical.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "runner/report/verdict_format.h"
#include "runner/report/verdict_render.h"

namespace perfwarden::report {
namespace {

using wire::MetricResult;
using wire::Outcome;
using wire::OutcomeName;
using wire::ResultKind;
using wire::ResultKindName;
using wire::Summary;
using wire::Verdict;

// XML 1.0 text: the five specials become entities; C0 controls other than tab, newline and
// carriage return, and the non-characters U+FFFE/U+FFFF (EF BF BE/BF), are not allowed in XML
// at all and are dropped. In attributes tab/newline/CR are written as character references so a
// parser does not normalise them to spaces.
std::string XmlEscape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u == 0xEF && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xBE) {
      i += 2;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
      case '\n':
      case '\r':
        if (attribute) {
          out += "&#" + std::to_string(u) + ";";
        } else {
          out += c;
        }
        break;
      default:
        if (u >= 0x20) out += c;
        break;
    }
  }
  return out;
}

// "+9.97%": a relative change in percent, as the table shows it.
std::string Percent(double change) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.2f%%", change * 100);
  return buffer;
}

std::string Attr(std::string_view name, std::string_view value) {
  return " " + std::string(name) + "=\"" + XmlEscape(value, /*attribute=*/true) + "\"";
}

std::string Side(std::string_view label, const std::optional<Summary>& side,
                 const std::string& unit) {
  if (!side) return std::string(label) + " -";
  std::string out = std::string(label) + " " + internal::FormatValue(side->median, unit) +
                    " (n=" + std::to_string(side->n);
  if (side->cv) {
    char cv[32];
    std::snprintf(cv, sizeof cv, "%.1f%%", *side->cv * 100);
    out += ", cv " + std::string(cv);
  }
  return out + ")";
}

// The numbers behind a result, for people reading a CI system's test report.
std::string Numbers(const MetricResult& r) {
  std::string out = Side("baseline", r.base, r.unit) + ", " + Side("current", r.current, r.unit) +
                    ", change " + internal::FormatChange(r);
  if (r.p_value) out += ", p=" + internal::FormatPCompact(*r.p_value);
  if (r.p_adjusted) out += ", adjusted p=" + internal::FormatPCompact(*r.p_adjusted);
  if (r.repetitions_needed > 0) {
    out += ", " + std::to_string(r.repetitions_needed) + " repetitions would decide it";
  }
  if (r.paired) out += "; side by side: " + internal::PairedNumbers(r);
  return out;
}

// Reason first (when the server gave one), then the numbers.
std::string Body(const MetricResult& r) {
  return r.reason.empty() ? Numbers(r) : r.reason + "\n" + Numbers(r);
}

std::string TestCase(const MetricResult& r, const Verdict& verdict) {
  std::string out = "    <testcase" + Attr("classname", r.key.suite) +
                    Attr("name", r.key.benchmark + " [" + r.key.metric + "]") + Attr("time", "0");
  switch (r.kind) {
    case ResultKind::kRegression: {
      std::string message = (r.change ? Percent(*r.change) : std::string("worse")) +
                            " (threshold " +
                            internal::FormatThreshold(internal::ThresholdOf(r, verdict)) + ")";
      if (r.p_adjusted) message += ", p=" + internal::FormatPCompact(*r.p_adjusted);
      // The message is what CI test reports show first: the cause goes there, not in the body,
      // the host's state first (it voids the rest).
      if (!r.environment.empty()) message += "; environment: " + r.environment;
      if (const std::string why = internal::AttributionSentence(r); !why.empty()) {
        message += "; " + why;
      }
      return out + ">\n      <failure" + Attr("message", message) + Attr("type", "REGRESSION") +
             ">" + XmlEscape(Body(r), false) + "</failure>\n    </testcase>\n";
    }
    case ResultKind::kIgnored:
    case ResultKind::kNew: {
      const std::string message =
          std::string(ResultKindName(r.kind)) + ": " +
          (!r.reason.empty()            ? r.reason
           : r.kind == ResultKind::kNew ? "no baseline value to compare with"
                                        : "ignored by a rule of the project's configuration");
      return out + ">\n      <skipped" + Attr("message", message) + "/>\n    </testcase>\n";
    }
    case ResultKind::kUnstable: {
      // Not gating and not decided: skipped, with the noise and what would decide it first.
      std::string message = "UNSTABLE: ";
      const std::string why = internal::UnstableSentence(r);
      message += why.empty() ? "the paired measurement could not decide it" : why;
      message += "; not gating";
      return out + ">\n      <skipped" + Attr("message", message) + ">" +
             XmlEscape(Body(r), false) + "</skipped>\n    </testcase>\n";
    }
    case ResultKind::kInconclusive:
    case ResultKind::kImprovement:
    case ResultKind::kReported:  // not gating: passes, with what the data showed
      return out + ">\n      <system-out>" +
             XmlEscape(std::string(ResultKindName(r.kind)) + ": " + Body(r), false) +
             "</system-out>\n    </testcase>\n";
    case ResultKind::kEquivalent:
    case ResultKind::kPass:
      break;
  }
  return out + "/>\n";
}

std::string Property(std::string_view name, std::string_view value) {
  return "      <property" + Attr("name", name) + Attr("value", value) + "/>\n";
}

// A metric name as GitLab (and OpenMetrics) accept it: [a-zA-Z0-9_:], everything else '_'.
std::string MetricName(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == ':';
    if (!ok) c = '_';
  }
  return out;
}

// The shortest text that reads back as the same double; plain decimals ("2200000000", not
// "2.2e+09") unless the number is very large or very small.
std::string Number(double value) {
  char buffer[64];
  const double a = std::fabs(value);
  const bool fixed = a == 0 || (a >= 1e-6 && a < 1e15);
  const auto [end, ec] =
      fixed ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
            : std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, end) : std::string("NaN");
}

}  // namespace

std::string RenderJUnit(const Verdict& verdict) {
  std::string cases;
  size_t tests = 0;
  size_t failures = 0;
  size_t skipped = 0;
  if (verdict.outcome == Outcome::kNoBaseline) {
    tests = skipped = 1;
    cases = "    <testcase" + Attr("classname", "perfwarden") + Attr("name", "baseline") +
            Attr("time", "0") + ">\n      <skipped" +
            Attr("message", internal::HeadlineSentence(verdict)) + "/>\n    </testcase>\n";
  } else {
    for (const MetricResult* r : OrderedResults(verdict)) {
      ++tests;
      failures += r->kind == ResultKind::kRegression;
      skipped += r->kind == ResultKind::kIgnored || r->kind == ResultKind::kNew ||
                 r->kind == ResultKind::kUnstable;
      cases += TestCase(*r, verdict);
    }
  }
  const std::string counts = Attr("tests", std::to_string(tests)) +
                             Attr("failures", std::to_string(failures)) + Attr("errors", "0") +
                             Attr("skipped", std::to_string(skipped)) + Attr("time", "0");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites" + Attr("name", "perfwarden") + counts + ">\n";
  out += "  <testsuite" + Attr("name", "perfwarden") + counts + ">\n";
  out += "    <properties>\n";
  out += Property("outcome", OutcomeName(verdict.outcome));
  if (!verdict.run_id.empty()) out += Property("run_id", verdict.run_id);
  if (!verdict.commit.empty()) out += Property("commit", verdict.commit);
  if (!verdict.branch.empty()) out += Property("branch", verdict.branch);
  if (!verdict.testbed.empty()) out += Property("testbed", verdict.testbed);
  if (verdict.baseline) out += Property("baseline_commit", verdict.baseline->commit);
  if (!verdict.algorithm_version.empty()) {
    out += Property("algorithm_version", verdict.algorithm_version);
  }
  if (verdict.paired) out += Property("paired", internal::PairedSentence(verdict));
  if (verdict.report_url) out += Property("report_url", *verdict.report_url);
  out += "    </properties>\n";
  out += cases;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

// GitLab's metrics report is a plain text file of "metric_name metric_value" lines, one metric
// per line, separated by a single space (an OpenMetrics subset without types, labels or
// timestamps); the merge request widget shows each name's value next to the target branch's.
std::string RenderGitLabMetrics(const Verdict& verdict) {
  std::vector<const MetricResult*> rows;
  for (const auto& r : verdict.results) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const MetricResult* a, const MetricResult* b) {
    if (a->key.suite != b->key.suite) return NaturalLess(a->key.suite, b->key.suite);
    if (a->key.benchmark != b->key.benchmark)
      return NaturalLess(a->key.benchmark, b->key.benchmark);
    return NaturalLess(a->key.metric, b->key.metric);
  });
  std::string out;
  std::set<std::string> taken;
  for (const MetricResult* r : rows) {
    // Names that differ only in characters GitLab does not allow would collide; later ones get
    // a counter so that no value silently replaces another.
    const std::string base =
        MetricName("perfwarden_" + r->key.suite + "_" + r->key.benchmark + "_" + r->key.metric);
    std::string name = base;
    for (int n = 2; !taken.insert(name).second; ++n) name = base + "_" + std::to_string(n);
    taken.insert(name + "_change_percent");
    if (r->current && r->current->median && std::isfinite(*r->current->median)) {
      out += name + " " + Number(*r->current->median) + "\n";
    }
    if (r->change && std::isfinite(*r->change)) {
      // Six significant digits: 9.97, not the 9.969999999999999 of 0.0997 * 100.
      char percent[32];
      std::snprintf(percent, sizeof percent, "%.6g", *r->change * 100);
      out += name + "_change_percent " + percent + "\n";
    }
  }
  return out;
}

}  // namespace perfwarden::report
