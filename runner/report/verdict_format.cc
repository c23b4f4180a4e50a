// SPDX-License-Identifier: Apache-2.0
#include "runner/report/verdict_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace perfwarden::report::internal {
namespace {

using wire::Attribution;
using wire::Counts;
using wire::MetricResult;
using wire::MovedMetric;
using wire::Outcome;
using wire::PairedDetail;
using wire::PairedSummary;
using wire::ResultKind;
using wire::Summary;
using wire::Verdict;
using wire::VerdictParameters;

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// Nanoseconds per unit for the time units that get rescaled; 0 for any other unit.
double NanosecondsPer(const std::string& unit) {
  if (unit == "ns") return 1;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return 0;
}

std::string Plural(int64_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

// Why a paired measurement ended (wire::PairedDesign::stopped), for people; a word this runner
// does not know prints as it is.
std::string StopPhrase(std::string_view stopped) {
  if (stopped == "max_blocks") return "max_blocks (the last look was reached)";
  if (stopped == "time_budget") return "time_budget (the time budget ran out)";
  return std::string(stopped);
}

}  // namespace

std::string FormatValue(std::optional<double> value, const std::string& unit) {
  if (!value || !std::isfinite(*value)) return "-";
  if (const double per = NanosecondsPer(unit); per > 0) {
    const double ns = *value * per;
    const double a = std::fabs(ns);
    if (a < 1e3) return Printf("%.4g", ns) + " ns";
    if (a < 1e6) return Printf("%.4g", ns / 1e3) + " us";
    if (a < 1e9) return Printf("%.4g", ns / 1e6) + " ms";
    return Printf("%.4g", ns / 1e9) + " s";
  }
  return Printf("%.4g", *value) + (unit.empty() ? "" : " " + unit);
}

std::string FormatChange(const MetricResult& result) {
  if (!result.change) return "-";
  std::string out = Printf("%+.2f%%", *result.change * 100);
  if (result.change_ci) {
    out += " [" + Printf("%+.1f", result.change_ci->lower * 100) + ", " +
           Printf("%+.1f", result.change_ci->upper * 100) + "]";
  }
  return out;
}

std::string FormatP(std::optional<double> p) {
  if (!p || std::isnan(*p)) return "-";
  if (*p < 1e-4) return "<1e-4";
  return Printf("%.2g", *p);
}

std::string FormatPCompact(double p) {
  if (std::isnan(p)) return "-";
  if (p <= 0 || p >= 1e-3) return Printf("%.2g", p);
  // "3.4e-4" rather than printf's "3.4e-04".
  const int exponent = static_cast<int>(std::floor(std::log10(p)));
  double mantissa = p / std::pow(10.0, exponent);
  std::string digits = Printf("%.1f", mantissa);
  if (digits == "10.0") return "1.0e" + std::to_string(exponent + 1);
  return digits + "e" + std::to_string(exponent);
}

std::string FormatN(const MetricResult& result) {
  auto side = [](const std::optional<Summary>& s) {
    return s ? std::to_string(s->n) : std::string("-");
  };
  return side(result.base) + "/" + side(result.current);
}

std::string FormatThreshold(double threshold) { return Printf("%g", threshold * 100) + "%"; }

double ThresholdOf(const MetricResult& result, const Verdict& verdict) {
  return result.threshold.value_or(verdict.parameters.threshold);
}

std::string ChangeHeader(const Verdict& verdict) {
  double confidence = verdict.parameters.confidence;
  // A paired verdict's intervals are at its looks' confidence, 1 - (1 - c) / K (statistics.md).
  if (verdict.paired && verdict.paired->looks > 0) {
    confidence = 1 - (1 - confidence) / static_cast<double>(verdict.paired->looks);
  }
  return "Change [" + Printf("%g", confidence * 100) + "% CI]";
}

std::string ShortSha(std::string_view sha) { return std::string(sha.substr(0, 7)); }

std::string HeadlineSentence(const Verdict& verdict) {
  const Counts& c = verdict.counts;
  switch (verdict.outcome) {
    case Outcome::kRegression: {
      if (c.regression == 0) return "the server reports a regression without naming a metric";
      return std::to_string(c.regression) + " of " +
             Plural(std::max(c.Compared(), c.regression), "benchmark metric", "benchmark metrics") +
             (c.regression == 1 ? " slower than its threshold" : " slower than their thresholds");
    }
    case Outcome::kPass:
      if (c.Compared() == 0) return "no benchmark metric was compared with a baseline";
      return "no benchmark metric slower than its threshold (" + std::to_string(c.Compared()) +
             " compared)";
    case Outcome::kNoisyEnvironment:
      return std::to_string(c.regression) + " of " +
             Plural(std::max(c.Compared(), c.regression), "benchmark metric", "benchmark metrics") +
             " slower, all on throttled GPUs: the run must be repeated on a healthy host";
    case Outcome::kNoBaseline:
      return "no baseline run to compare with" +
             (verdict.testbed.empty() ? std::string() : " on testbed " + verdict.testbed) +
             "; passing (use --require-baseline to fail)";
  }
  return "";
}

std::string CountsSentence(const Counts& counts) {
  std::string out;
  auto add = [&](int64_t n, std::string_view one, std::string_view many) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += Plural(n, one, many);
  };
  add(counts.regression, "regression", "regressions");
  add(counts.inconclusive, "inconclusive", "inconclusive");
  add(counts.unstable, "unstable", "unstable");
  add(counts.improvement, "improvement", "improvements");
  add(counts.new_metrics, "new", "new");
  add(counts.equivalent, "equivalent", "equivalent");
  add(counts.pass, "pass", "pass");
  add(counts.reported, "reported", "reported");
  add(counts.ignored, "ignored", "ignored");
  return out.empty() ? "no benchmark metrics" : out;
}

std::string CriteriaSentence(const Verdict& verdict) {
  const VerdictParameters& p = verdict.parameters;
  std::string out =
      "threshold " + FormatThreshold(p.threshold) + ", alpha " + Printf("%g", p.alpha);
  if (!p.test.empty()) out += ", test " + p.test;
  if (!p.correction.empty()) out += ", correction " + p.correction;
  out += ", " + Printf("%g", p.confidence * 100) + "% confidence";
  if (!p.rules.empty()) out += ", " + Plural(static_cast<int64_t>(p.rules.size()), "rule", "rules");
  if (!verdict.algorithm_version.empty()) out += ", " + verdict.algorithm_version;
  return out;
}

std::string SelectionPhrase(std::string_view selection) {
  if (selection == "merge_base") return "the merge-base";
  if (selection == "ancestor") return "an ancestor of the merge-base";
  if (selection == "previous_commit") return "the previous measured commit";
  if (selection.empty()) return "the server's choice";
  return std::string(selection);
}

std::string CleanLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) c = '?';
  }
  return out;
}

std::string Truncate(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  constexpr std::string_view kEllipsis = "...";
  size_t cut = max_bytes > kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  // Back up to the first byte of a character (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + std::string(kEllipsis);
}

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

std::string ReasonSentence(const MetricResult& result, size_t max_reason) {
  std::string out = Truncate(result.reason, max_reason);
  std::string needed;
  if (result.kind == ResultKind::kUnstable && result.paired) {
    needed = UnstableSentence(result);
  } else if (result.repetitions_needed > 0) {
    needed = std::to_string(result.repetitions_needed) + " repetitions would decide it";
  }
  if (!needed.empty()) out = out.empty() ? needed : out + " (" + needed + ")";
  return out;
}

std::string UnstableSentence(const MetricResult& result) {
  if (!result.paired) return "";
  const PairedDetail& d = *result.paired;
  std::string out = "noise " + Printf("%.1f", d.noise * 100) + "% per block";
  if (d.blocks_needed > 0) {
    out += "; ~" + Plural(d.blocks_needed, "block", "blocks");
    if (result.repetitions_needed > 0) {
      out += " (" + Plural(result.repetitions_needed, "repetition", "repetitions") + ")";
    }
    out += " would decide it";
  }
  return out;
}

std::string PairedSentence(const Verdict& verdict) {
  if (!verdict.paired) return "";
  const PairedSummary& p = *verdict.paired;
  std::string out = p.amends ? "re-measured " + Plural(p.measured, "row", "rows") + " side by side"
                             : std::string("measured side by side");
  out += " on this host against " + (p.baseline_commit.empty() ? std::string("(unknown commit)")
                                                               : p.baseline_commit.substr(0, 12));
  if (p.amends) out += " (amending verdict #" + std::to_string(*p.amends) + ")";
  out += ": " + Plural(p.blocks, "block", "blocks") + " of " +
         Plural(p.design.repetitions, "repetition", "repetitions") + " each";
  if (p.looks > 0) {
    out += " (look " + std::to_string(p.look + 1) + " of " + std::to_string(p.looks) + ")";
  }
  out += ", stopped: " + StopPhrase(p.design.stopped);
  if (p.geomean_change) {
    out += "; geomean change " + Printf("%+.2f%%", *p.geomean_change * 100);
    if (p.geomean_ci) {
      out += " [" + Printf("%+.1f", p.geomean_ci->lower * 100) + ", " +
             Printf("%+.1f", p.geomean_ci->upper * 100) + "]";
    }
  }
  return out;
}

bool HasUnstable(const Verdict& verdict) {
  return std::any_of(verdict.results.begin(), verdict.results.end(),
                     [](const MetricResult& r) { return r.kind == ResultKind::kUnstable; });
}

std::string PairedNumbers(const MetricResult& result) {
  if (!result.paired) return "";
  const PairedDetail& d = *result.paired;
  return Plural(d.blocks, "block", "blocks") + ", noise " + Printf("%.1f", d.noise * 100) +
         "% per block, drift " + Printf("%.1f", d.drift * 100) + "%, median change " +
         Printf("%+.1f%%", d.median_change * 100) + ", Hodges-Lehmann " +
         Printf("%+.1f%%", d.hodges_lehmann * 100) + ", p_t=" + FormatPCompact(d.p_t) +
         ", p_wilcoxon=" + FormatPCompact(d.p_wilcoxon) + ", p_sign=" + FormatPCompact(d.p_sign);
}

std::string AttributionSentence(const MetricResult& result) {
  if (!result.attribution) return "";
  const Attribution& a = *result.attribution;
  std::string out;
  auto part = [&](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  std::string moved;
  for (const MovedMetric& m : a.moved) {
    moved += (moved.empty() ? "" : ", ") + m.metric;
    if (m.change) moved += " " + Printf("%+.1f%%", *m.change * 100);
    if (m.verdict != "REGRESSION" && m.verdict != "IMPROVEMENT" && !m.verdict.empty()) {
      std::string word = m.verdict;
      for (char& c : word) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
      moved += " (" + word + ")";
    }
  }
  if (!moved.empty()) part("moved: " + moved);
  if (a.roofline && !a.roofline->bound.empty()) {
    std::string roofline = "roofline: " + a.roofline->bound;
    if (a.roofline->intensity && a.roofline->ridge) {
      roofline += " (" + Printf("%.3g", *a.roofline->intensity) + " FLOP/byte, ridge " +
                  Printf("%.3g", *a.roofline->ridge) + ")";
    }
    part(roofline);
  }
  if (!a.hint.empty()) part("hint: " + a.hint);
  return out;
}

bool HasSeveralSuites(const Verdict& verdict) {
  for (const auto& r : verdict.results) {
    if (r.key.suite != verdict.results.front().key.suite) return true;
  }
  return false;
}

}  // namespace perfwarden::report::internal
