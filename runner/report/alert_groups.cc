// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts groups|group` and the group triage verbs: alert groups (GET|PATCH
// .../alert-groups) as text for a terminal or a job log.
#include <string>
#include <utility>
#include <vector>

#include "runner/report/alert_pieces.h"
#include "runner/report/alerts_render.h"
#include "runner/report/text_format.h"

namespace perfwarden::report {
namespace {

using alerts_internal::BenchmarkName;
using alerts_internal::CommitLine;
using alerts_internal::kNoLastGood;
using alerts_internal::ShortSha;
using text::Clean;
using text::Join;
using text::OrDash;
using text::PValue;
using text::Table;

std::string Range(const wire::AlertGroup& g) {
  return ShortSha(g.range.last_good.sha, 12) + ".." + ShortSha(g.range.first_bad.sha, 12);
}

// "open 2, acknowledged 4": the states that have members.
std::string States(const wire::AlertGroup& g) {
  std::vector<std::string> parts;
  for (const auto& [state, count] : g.states) {
    if (count > 0) parts.push_back(Clean(state) + " " + std::to_string(count));
  }
  return parts.empty() ? "-" : Join(parts, ", ");
}

std::string Bisect(const wire::AlertGroup& g) {
  return g.bisect_id ? std::to_string(*g.bisect_id) : "-";
}

}  // namespace

std::string RenderAlertGroupListText(const wire::AlertGroupPage& page) {
  std::string out;
  if (page.groups.empty()) {
    out = "no alert groups\n";
  } else {
    out = std::to_string(page.groups.size()) +
          (page.groups.size() == 1 ? " alert group\n" : " alert groups\n");
    std::vector<std::vector<std::string>> rows = {
        {"GROUP", "STATE", "RANGE", "BRANCH", "ALERTS", "MEMBERS BY STATE", "BISECT", "FIRST BAD"}};
    for (const wire::AlertGroup& g : page.groups) {
      rows.push_back({std::to_string(g.id), OrDash(Clean(g.state)), Range(g),
                      OrDash(Clean(g.branch)), std::to_string(g.members), States(g), Bisect(g),
                      OrDash(Clean(g.range.first_bad.subject))});
    }
    out += Table(rows, "");
  }
  if (page.next_cursor && !page.next_cursor->empty()) {
    out += "\nmore groups: --cursor " + Clean(*page.next_cursor) + " for the next page\n";
  }
  return out;
}

std::string RenderAlertGroupText(const wire::AlertGroupDetail& detail) {
  const wire::AlertGroup& g = detail.group;
  std::string out = "alert group " + std::to_string(g.id) + " (" + OrDash(Clean(g.state)) +
                    ") in " + OrDash(Clean(g.project)) + ", branch " + OrDash(Clean(g.branch)) +
                    "\n";
  out += "range " + Range(g) + " (the narrowest range common to its alerts)\n";
  const std::string bad = CommitLine(g.range.first_bad, false);
  const std::string good = CommitLine(g.range.last_good, false);
  out += "  first bad: " + OrDash(bad) + "\n";
  out += "  last good: " + (good.empty() ? std::string(kNoLastGood) : good) + "\n";
  out += std::to_string(g.members) + (g.members == 1 ? " alert: " : " alerts: ") + States(g) + "\n";
  out += "most significant: alert " + std::to_string(g.most_significant) +
         " (the one a bisect of the group measures)\n";
  if (g.bisect_id) {
    out += "bisect: " + std::to_string(*g.bisect_id) + " (one per group)\n";
  } else {
    out += "bisect: none yet; perfwarden bisect --group " + std::to_string(g.id) + "\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"ID", "STATE", "KIND", "TESTBED", "BENCHMARK", "METRIC", "CHANGE", "RANGE", "P", "Q"}};
  for (const wire::Alert& a : detail.members) {
    rows.push_back({std::to_string(a.id), OrDash(Clean(a.state)), AlertKindLabel(a),
                    OrDash(Clean(a.series.testbed)), Clean(BenchmarkName(a)),
                    OrDash(Clean(a.series.key.metric)), FormatAlertChange(a),
                    Clean(AlertRangeKey(a)), PValue(a.p_value), PValue(a.q_value)});
  }
  out += "\n" + Table(rows, "");
  if (!detail.bisects.empty()) {
    out += "\nbisects:\n";
    for (const wire::AlertBisect& b : detail.bisects) {
      out += "  " + std::to_string(b.id) + " " + OrDash(Clean(b.state)) +
             (b.culprit ? " culprit " + ShortSha(*b.culprit, 12) : std::string()) + "\n";
    }
  }
  return out;
}

std::string RenderGroupTriageText(const wire::AlertGroupDetail& detail) {
  const wire::AlertGroup& g = detail.group;
  return "alert group " + std::to_string(g.id) + " is now " + OrDash(Clean(g.state)) + " (" +
         Range(g) + "): " + States(g) + "\n";
}

}  // namespace perfwarden::report
