// SPDX-License-Identifier: Apache-2.0
#include "runner/report/bisect_format.h"

#include <cmath>
#include <cstdio>

#include "core/text.h"

namespace perfwarden::report {
namespace {

using nlohmann::json;

std::string Number(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", x);
  return text;
}

std::string CulpritLine(const bisect::Culprit& c) {
  std::string line =
      c.exact ? "culprit: " + c.sha.substr(0, 12) + " " + c.subject + " (" + c.author + ")"
              : "culprit: one of " + std::to_string(c.candidates.size()) + " commits ending at " +
                    c.sha.substr(0, 12) + " (the others could not be measured)";
  return line + "\n  step " + SignedPercent(c.magnitude) + " [" + SignedPercent(c.ci_low) + ", " +
         SignedPercent(c.ci_high) + "] (95% CI), " + SignedPercent(c.share).substr(1) +
         " of the change between the ends\n";
}

// Why there is no culprit, when the ends say why: "" otherwise.
std::string NoCulprit(const bisect::EndpointCheck& e) {
  switch (e.outcome) {
    case bisect::Reproduction::kNotReproduced:
      return "the regression does not reproduce";
    case bisect::Reproduction::kUndecided: {
      char p[32];
      std::snprintf(p, sizeof p, "%.2g", e.p_value);
      return "undecided at " + std::to_string(e.repetitions) +
             " repetitions per end: bad vs good " + SignedPercent(e.change) + " [" +
             SignedPercent(e.ci_low) + ", " + SignedPercent(e.ci_high) + "] (" +
             std::to_string(std::lround(100 * e.confidence)) + "% CI, p " + p + "); " +
             (e.repetitions_needed > 0
                  ? "about " + std::to_string(e.repetitions_needed) + " per end would decide"
                  : std::string("no number of repetitions decides at this noise"));
    }
    case bisect::Reproduction::kReproduced:
      break;
  }
  return "";
}

}  // namespace

std::string FormatBisectText(const bisect::Report& r) {
  std::string out = "bisect " + r.good_sha.substr(0, 12) + ".." + r.bad_sha.substr(0, 12) + ": " +
                    std::to_string(r.commits) + " commits, " + r.suite + " " +
                    (r.benchmarks.empty() ? "" : r.benchmarks.front()) + " " + r.metric + "\n";
  out += "ends: " + r.endpoints.reason + "\n";
  for (const bisect::Culprit& c : r.culprits) out += CulpritLine(c);
  if (const std::string why = NoCulprit(r.endpoints); r.culprits.empty() && !why.empty()) {
    out += "no culprit: " + why + "\n";
  }
  out += std::to_string(r.probes.size()) + " probes (about " + std::to_string(r.expected_probes) +
         " expected), " + std::to_string(r.builds) + " builds, " + std::to_string(r.runs) +
         " suite runs" +
         (r.resumed ? " (resumed: " + std::to_string(r.resumed_measurements) + " of " +
                          std::to_string(r.measurements) + " measurements from the state file)"
                    : "") +
         "\n";
  if (!r.probes.empty()) {
    out += "\n  #  commit        n     median  verdict  subject / why\n";
    int k = 0;
    for (const bisect::ProbeRecord& p : r.probes) {
      char line[128];
      std::snprintf(line, sizeof line, "%3d  %-12s %3d %10s  %-7s  ", ++k,
                    p.sha.substr(0, 12).c_str(), p.n, Number(p.median).c_str(), p.verdict.c_str());
      out += line + p.subject + "\n       " + p.reason + "\n";
    }
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string FormatBisectMarkdown(const bisect::Report& r) {
  std::string out = "### perfwarden bisect: `" +
                    (r.benchmarks.empty() ? "" : r.benchmarks.front()) + "` " + r.metric + "\n\n";
  out += "Range `" + r.good_sha.substr(0, 12) + "..` `" + r.bad_sha.substr(0, 12) + "` (" +
         std::to_string(r.commits) + " commits). Ends: " + r.endpoints.reason + ".\n\n";
  for (const bisect::Culprit& c : r.culprits) {
    out += "- **" + std::string(c.exact ? "Culprit" : "Culprit range") + "**: `" +
           c.sha.substr(0, 12) + "` " + c.subject + " (" + c.author + "), step " +
           SignedPercent(c.magnitude) + " [" + SignedPercent(c.ci_low) + ", " +
           SignedPercent(c.ci_high) + "]\n";
  }
  out += "\n| # | commit | n | median | verdict | why |\n|---:|---|---:|---:|---|---|\n";
  int k = 0;
  for (const bisect::ProbeRecord& p : r.probes) {
    out += "| " + std::to_string(++k) + " | `" + p.sha.substr(0, 12) + "` | " +
           std::to_string(p.n) + " | " + Number(p.median) + " | " + p.verdict + " | " + p.reason +
           " |\n";
  }
  out += "\n" + std::to_string(r.probes.size()) + " probes, " + std::to_string(r.builds) +
         " builds, " + std::to_string(r.runs) + " suite runs.\n";
  for (const std::string& w : r.warnings) out += "\n> " + w + "\n";
  return out;
}

std::string FormatBisectProgress(const wire::Bisect& b) {
  const json progress = b.progress.value_or(json::object());
  std::string out = "bisect " + std::to_string(b.id) + " on testbed " +
                    (b.remote ? b.remote->testbed : std::string("?")) + ": " + b.state;
  int done = 0;
  std::string current;
  for (const wire::BisectStep& step : b.steps) {
    if (step.state == "done") ++done;
    if (step.state == "queued" || step.state == "claimed") {
      current = "step " + std::to_string(step.ordinal + 1) + " " + step.state +
                (step.state == "claimed" ? " by " + step.agent.value_or("?") + " (attempt " +
                                               std::to_string(step.attempts) + ")"
                                         : std::string(" (waiting for an agent)"));
    }
  }
  out += ", " + std::to_string(done) + " measurements done" +
         (current.empty() ? "" : ", " + current) + "\n";
  if (b.error && !b.error->empty()) out += "error: " + *b.error + "\n";
  const json ends = progress.value("endpoints", json::object());
  if (!ends.value("reason", "").empty()) out += "ends: " + ends.value("reason", "") + "\n";
  int k = 0;
  for (const json& p : progress.value("probes", json::array())) {
    char line[160];
    std::snprintf(line, sizeof line, "%3d  %-12s %3d  %-7s  ", ++k,
                  p.value("sha", "").substr(0, 12).c_str(), p.value("n", 0),
                  p.value("verdict", "").c_str());
    out += line + p.value("subject", "") + "\n";
  }
  const std::size_t expected = progress.value("expected_probes", std::size_t{0});
  if (expected > 0) {
    out += std::to_string(k) + " of about " + std::to_string(expected) + " probes decided\n";
  }
  return out;
}

}  // namespace perfwarden::report
