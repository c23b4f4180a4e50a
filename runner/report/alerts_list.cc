// `perfgate alerts list`: alerts grouped by commit range, a heading and a table per group, as
// text for a terminal and as Markdown.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/report/alert_pieces.h"
#include "runner/report/alerts_render.h"
#include "runner/report/text_format.h"

namespace perfgate::report {
namespace {

using alerts_internal::BenchmarkName;
using alerts_internal::CommitLine;
using alerts_internal::EnvironmentLines;
using alerts_internal::FirstBad;
using alerts_internal::IdText;
using alerts_internal::kNoLastGood;
using alerts_internal::LastGood;
using nlohmann::json;
using text::Clean;
using text::ConfidencePercent;
using text::Get;
using text::Join;
using text::Md;
using text::MdCode;
using text::MdRow;
using text::Num;
using text::Obj;
using text::OrDash;
using text::PValue;
using text::Str;
using text::Strings;
using text::Table;

std::string ChangeHeader(const json& alerts) {
  std::set<std::string> levels;
  for (const json& a : alerts) levels.insert(ConfidencePercent(Num(a, "confidence")));
  if (levels.size() == 1 && !levels.begin()->empty()) return "CHANGE [" + *levels.begin() + " CI]";
  return "CHANGE [CI]";
}

struct Group {
  std::string key;
  std::vector<const json*> alerts;
};

std::vector<Group> GroupByRange(const json& alerts) {
  std::vector<Group> groups;
  for (const json& a : alerts) {
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

std::set<std::string> Distinct(const Group& group, const char* key) {
  std::set<std::string> out;
  for (const json* a : group.alerts) out.insert(Str(Obj(*a, "series"), key));
  return out;
}

// "branch main, testbed ci-1" when the group's alerts share them.
std::string GroupWhere(const Group& group) {
  std::vector<std::string> parts;
  const auto branches = Distinct(group, "branch");
  const auto testbeds = Distinct(group, "testbed");
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
  for (const json* a : group.alerts) {
    if (!Obj(*a, "environment_change").is_null()) return EnvironmentLines(*a);
  }
  return {};
}

const json& AlertArray(const json& page) {
  static const json kEmpty = json::array();
  if (page.is_array()) return page;
  const json* alerts = Get(page, "alerts");
  return alerts != nullptr && alerts->is_array() ? *alerts : kEmpty;
}

std::string NextCursor(const json& page) { return Str(page, "next_cursor"); }

std::string CountLine(size_t alerts, size_t groups) {
  return std::to_string(alerts) + (alerts == 1 ? " alert" : " alerts") + " in " +
         std::to_string(groups) + (groups == 1 ? " commit range" : " commit ranges");
}

}  // namespace

std::string RenderAlertListText(const json& page) {
  const json& alerts = AlertArray(page);
  const std::string next = NextCursor(page);
  std::string out;
  if (alerts.empty()) {
    out = "no alerts\n";
  } else {
    const std::vector<Group> groups = GroupByRange(alerts);
    out = CountLine(alerts.size(), groups.size()) + "\n";
    const std::string change_header = ChangeHeader(alerts);
    for (const Group& group : groups) {
      const json& first = *group.alerts.front();
      out += "\n" + group.key;
      if (const std::string where = GroupWhere(group); !where.empty())
        out += "  (" + Clean(where) + ")";
      out += "\n";
      const std::string bad = CommitLine(FirstBad(first), false);
      const std::string good = CommitLine(LastGood(first), false);
      out += "  first bad: " + OrDash(bad) + "\n";
      out += "  last good: " + (good.empty() ? std::string(kNoLastGood) : good) + "\n";
      for (const std::string& line : GroupEnvironment(group)) {
        out += "  environment changed: " + Clean(line) + "\n";
      }
      const bool testbed_column = Distinct(group, "testbed").size() > 1;
      std::vector<std::vector<std::string>> rows;
      std::vector<std::string> header = {"ID", "STATE", "KIND"};
      if (testbed_column) header.push_back("TESTBED");
      for (const char* h : {"BENCHMARK", "METRIC"}) header.push_back(h);
      header.push_back(change_header);
      for (const char* h : {"P", "Q", "DETECTORS"}) header.push_back(h);
      rows.push_back(header);
      for (const json* a : group.alerts) {
        const json& series = Obj(*a, "series");
        std::vector<std::string> row = {IdText(*a), OrDash(Clean(Str(*a, "state"))),
                                        AlertKindLabel(*a)};
        if (testbed_column) row.push_back(OrDash(Clean(Str(series, "testbed"))));
        row.push_back(Clean(BenchmarkName(*a)));
        row.push_back(OrDash(Clean(Str(series, "metric"))));
        row.push_back(FormatAlertChange(*a));
        row.push_back(PValue(Num(*a, "p_value")));
        row.push_back(PValue(Num(*a, "q_value")));
        row.push_back(OrDash(Clean(Join(Strings(*a, "detectors"), ","))));
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

std::string RenderAlertListMarkdown(const json& page) {
  const json& alerts = AlertArray(page);
  const std::string next = NextCursor(page);
  std::string out = "### perfgate alerts\n\n";
  if (alerts.empty()) {
    out += "No alerts.\n";
  } else {
    const std::vector<Group> groups = GroupByRange(alerts);
    out += CountLine(alerts.size(), groups.size()) + ".\n";
    const std::string change_header = ChangeHeader(alerts);
    for (const Group& group : groups) {
      const json& first = *group.alerts.front();
      out += "\n#### " + MdCode(group.key);
      if (const std::string where = GroupWhere(group); !where.empty())
        out += " (" + Md(where) + ")";
      out += "\n\n";
      const std::string bad = CommitLine(FirstBad(first), true);
      const std::string good = CommitLine(LastGood(first), true);
      out += "First bad: " + (bad.empty() ? std::string("-") : bad) + "  \n";
      out += "Last good: " + (good.empty() ? Md(kNoLastGood) : good) + "\n\n";
      if (const auto env = GroupEnvironment(group); !env.empty()) {
        out += "**Environment changed:** " + Md(Join(env, "; ")) + "\n\n";
      }
      const bool testbed_column = Distinct(group, "testbed").size() > 1;
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
      for (const json* a : group.alerts) {
        const json& series = Obj(*a, "series");
        const bool environment = AlertKindLabel(*a) == "environment";
        std::vector<std::string> row = {Md(IdText(*a)), Md(OrDash(Str(*a, "state"))),
                                        environment ? "**environment**" : Md(AlertKindLabel(*a))};
        if (testbed_column) row.push_back(Md(OrDash(Str(series, "testbed"))));
        row.push_back(Md(BenchmarkName(*a)));
        row.push_back(Md(OrDash(Str(series, "metric"))));
        row.push_back(Md(FormatAlertChange(*a)));
        row.push_back(Md(PValue(Num(*a, "p_value"))));
        row.push_back(Md(PValue(Num(*a, "q_value"))));
        row.push_back(Md(OrDash(Join(Strings(*a, "detectors"), ", "))));
        out += MdRow(row);
      }
    }
  }
  if (!next.empty()) out += "\nMore alerts on the server (next cursor " + MdCode(next) + ").\n";
  return out;
}

}  // namespace perfgate::report
