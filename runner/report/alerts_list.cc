// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts list`: alerts grouped by commit range, a heading and a table per group, as
// text for a terminal and as Markdown.
#include <algorithm>
#include <set>
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
using alerts_internal::EnvironmentLines;
using alerts_internal::kNoLastGood;
using text::Clean;
using text::ConfidencePercent;
using text::Join;
using text::Md;
using text::MdCode;
using text::MdRow;
using text::OrDash;
using text::PValue;
using text::Table;
using wire::Alert;

std::string ChangeHeader(const std::vector<Alert>& alerts) {
  std::set<std::string> levels;
  for (const Alert& a : alerts) levels.insert(ConfidencePercent(a.confidence));
  if (levels.size() == 1 && !levels.begin()->empty()) return "CHANGE [" + *levels.begin() + " CI]";
  return "CHANGE [CI]";
}

struct Group {
  std::string key;
  std::vector<const Alert*> alerts;
};

std::vector<Group> GroupByRange(const std::vector<Alert>& alerts) {
  std::vector<Group> groups;
  for (const Alert& a : alerts) {
    const std::string key = AlertRangeKey(a);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.key == key; });
    if (it == groups.end()) {
      groups.push_back({key, {}});
      it = groups.end() - 1;
    }
    it->alerts.push_back(&a);
  }
  return groups;
}

// The group's distinct values of a series field (branch, testbed).
std::set<std::string> Distinct(const Group& group, std::string wire::HistorySeries::*field) {
  std::set<std::string> out;
  for (const Alert* a : group.alerts) out.insert(a->series.*field);
  return out;
}

// "branch main, testbed ci-1" when the group's alerts share them.
std::string GroupWhere(const Group& group) {
  std::vector<std::string> parts;
  const auto branches = Distinct(group, &wire::HistorySeries::branch);
  const auto testbeds = Distinct(group, &wire::HistorySeries::testbed);
  if (branches.size() == 1 && !branches.begin()->empty()) {
    parts.push_back("branch " + *branches.begin());
  }
  if (testbeds.size() == 1 && !testbeds.begin()->empty()) {
    parts.push_back("testbed " + *testbeds.begin());
  }
  return Join(parts, ", ");
}

// The environment change of the group's first alert that has one: one commit range, one
// testbed change (when the group spans testbeds, the first one's).
std::vector<std::string> GroupEnvironment(const Group& group) {
  for (const Alert* a : group.alerts) {
    if (a->environment_change) return EnvironmentLines(*a);
  }
  return {};
}

std::string NextCursor(const wire::AlertPage& page) { return page.next_cursor.value_or(""); }

std::string CountLine(size_t alerts, size_t groups) {
  return std::to_string(alerts) + (alerts == 1 ? " alert" : " alerts") + " in " +
         std::to_string(groups) + (groups == 1 ? " commit range" : " commit ranges");
}

}  // namespace

std::string RenderAlertListText(const wire::AlertPage& page) {
  const std::vector<Alert>& alerts = page.alerts;
  const std::string next = NextCursor(page);
  std::string out;
  if (alerts.empty()) {
    out = "no alerts\n";
  } else {
    const std::vector<Group> groups = GroupByRange(alerts);
    out = CountLine(alerts.size(), groups.size()) + "\n";
    const std::string change_header = ChangeHeader(alerts);
    for (const Group& group : groups) {
      const Alert& first = *group.alerts.front();
      out += "\n" + group.key;
      if (const std::string where = GroupWhere(group); !where.empty())
        out += "  (" + Clean(where) + ")";
      out += "\n";
      const std::string bad = CommitLine(first.range.first_bad, false);
      const std::string good = CommitLine(first.range.last_good, false);
      out += "  first bad: " + OrDash(bad) + "\n";
      out += "  last good: " + (good.empty() ? std::string(kNoLastGood) : good) + "\n";
      for (const std::string& line : GroupEnvironment(group)) {
        out += "  environment changed: " + Clean(line) + "\n";
      }
      const bool testbed_column = Distinct(group, &wire::HistorySeries::testbed).size() > 1;
      std::vector<std::vector<std::string>> rows;
      std::vector<std::string> header = {"ID", "STATE", "KIND"};
      if (testbed_column) header.push_back("TESTBED");
      for (const char* h : {"BENCHMARK", "METRIC"}) header.push_back(h);
      header.push_back(change_header);
      for (const char* h : {"P", "Q", "DETECTORS"}) header.push_back(h);
      rows.push_back(header);
      for (const Alert* a : group.alerts) {
        std::vector<std::string> row = {std::to_string(a->id), OrDash(Clean(a->state)),
                                        AlertKindLabel(*a)};
        if (testbed_column) row.push_back(OrDash(Clean(a->series.testbed)));
        row.push_back(Clean(BenchmarkName(*a)));
        row.push_back(OrDash(Clean(a->series.key.metric)));
        row.push_back(FormatAlertChange(*a));
        row.push_back(PValue(a->p_value));
        row.push_back(PValue(a->q_value));
        row.push_back(OrDash(Clean(Join(a->detectors, ","))));
        rows.push_back(std::move(row));
      }
      out += Table(rows, "  ");
    }
  }
  if (!next.empty()) {
    out += "\nmore alerts: pass --all, or --cursor " + Clean(next) + " for the next page\n";
  }
  return out;
}

std::string RenderAlertListMarkdown(const wire::AlertPage& page) {
  const std::vector<Alert>& alerts = page.alerts;
  const std::string next = NextCursor(page);
  std::string out = "### perfwarden alerts\n\n";
  if (alerts.empty()) {
    out += "No alerts.\n";
  } else {
    const std::vector<Group> groups = GroupByRange(alerts);
    out += CountLine(alerts.size(), groups.size()) + ".\n";
    const std::string change_header = ChangeHeader(alerts);
    for (const Group& group : groups) {
      const Alert& first = *group.alerts.front();
      out += "\n#### " + MdCode(group.key);
      if (const std::string where = GroupWhere(group); !where.empty())
        out += " (" + Md(where) + ")";
      out += "\n\n";
      const std::string bad = CommitLine(first.range.first_bad, true);
      const std::string good = CommitLine(first.range.last_good, true);
      out += "First bad: " + (bad.empty() ? std::string("-") : bad) + "  \n";
      out += "Last good: " + (good.empty() ? Md(kNoLastGood) : good) + "\n\n";
      if (const auto env = GroupEnvironment(group); !env.empty()) {
        out += "**Environment changed:** " + Md(Join(env, "; ")) + "\n\n";
      }
      const bool testbed_column = Distinct(group, &wire::HistorySeries::testbed).size() > 1;
      std::vector<std::string> header = {"ID", "State", "Kind"};
      std::vector<std::string> align = {"---:", "---", "---"};
      if (testbed_column) {
        header.push_back("Testbed");
        align.push_back("---");
      }
      for (const char* h : {"Benchmark", "Metric"}) {
        header.push_back(h);
        align.push_back("---");
      }
      std::string ch = change_header.substr(std::string("CHANGE ").size());
      header.push_back("Change " + ch);
      align.push_back("---:");
      for (const char* h : {"p", "q"}) {
        header.push_back(h);
        align.push_back("---:");
      }
      header.push_back("Detectors");
      align.push_back("---");
      out += MdRow(header) + MdRow(align);
      for (const Alert* a : group.alerts) {
        const bool environment = AlertKindLabel(*a) == "environment";
        std::vector<std::string> row = {Md(std::to_string(a->id)), Md(OrDash(a->state)),
                                        environment ? "**environment**" : Md(AlertKindLabel(*a))};
        if (testbed_column) row.push_back(Md(OrDash(a->series.testbed)));
        row.push_back(Md(BenchmarkName(*a)));
        row.push_back(Md(OrDash(a->series.key.metric)));
        row.push_back(Md(FormatAlertChange(*a)));
        row.push_back(Md(PValue(a->p_value)));
        row.push_back(Md(PValue(a->q_value)));
        row.push_back(Md(OrDash(Join(a->detectors, ", "))));
        out += MdRow(row);
      }
    }
  }
  if (!next.empty()) out += "\nMore alerts on the server (next cursor " + MdCode(next) + ").\n";
  return out;
}

}  // namespace perfwarden::report
