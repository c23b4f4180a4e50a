#include "runner/cli/alerts_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/cli/text_format.h"

namespace perfgate::cli {
namespace {

using nlohmann::json;

using text::AnyText;
using text::Clean;
using text::ConfidencePercent;
using text::Get;
using text::Join;
using text::Level;
using text::Md;
using text::MdCode;
using text::MdRow;
using text::Num;
using text::Obj;
using text::OrDash;
using text::Percent;
using text::PValue;
using text::Str;
using text::Strings;
using text::Table;
using text::WithUnit;

// ---- alert pieces ----

std::string IdText(const json& alert) {
  const json* id = Get(alert, "id");
  if (id == nullptr) return "?";
  return Clean(AnyText(*id));
}

std::string ShortSha(const std::string& sha, size_t n) {
  return sha.size() > n ? sha.substr(0, n) : sha;
}

const json& LastGood(const json& alert) { return Obj(Obj(alert, "range"), "last_good"); }
const json& FirstBad(const json& alert) { return Obj(Obj(alert, "range"), "first_bad"); }

std::string BenchmarkName(const json& alert) {
  const json& series = Obj(alert, "series");
  const std::string suite = Str(series, "suite");
  const std::string benchmark = Str(series, "benchmark");
  if (suite.empty()) return OrDash(benchmark);
  return suite + "/" + OrDash(benchmark);
}

std::string DirectionText(const std::string& direction) {
  if (direction == "lower") return "lower is better";
  if (direction == "higher") return "higher is better";
  return direction;
}

std::string ChangeHeader(const json& alerts) {
  std::set<std::string> levels;
  for (const json& a : alerts) levels.insert(ConfidencePercent(Num(a, "confidence")));
  if (levels.size() == 1 && !levels.begin()->empty()) return "CHANGE [" + *levels.begin() + " CI]";
  return "CHANGE [CI]";
}

// "9f2c4d1 Sort: insertion sort below 32 (Ada Lovelace, 2026-11-20T10:00:00Z)"
std::string CommitLine(const json& commit, bool markdown) {
  const std::string sha = Str(commit, "sha");
  if (sha.empty()) return "";
  std::string out = markdown ? MdCode(ShortSha(sha, 7)) : ShortSha(sha, 7);
  const std::string subject = Str(commit, "subject");
  if (!subject.empty()) out += " " + (markdown ? Md(subject) : Clean(subject));
  std::vector<std::string> by;
  if (std::string author = Str(commit, "author"); !author.empty()) by.push_back(author);
  if (std::string time = Str(commit, "time"); !time.empty()) by.push_back(time);
  if (!by.empty()) {
    const std::string joined = Join(by, ", ");
    out += " (" + (markdown ? Md(joined) : Clean(joined)) + ")";
  }
  return out;
}

constexpr const char* kNoLastGood = "none (the first point of the series has no earlier commit)";

std::vector<std::string> EnvironmentLines(const json& alert) {
  std::vector<std::string> lines;
  const json& env = Obj(alert, "environment_change");
  if (env.is_null()) return lines;
  const json& before = Obj(env, "before");
  const json& after = Obj(env, "after");
  for (const std::string& name : Strings(env, "changed")) {
    const json* b = Get(before, name.c_str());
    const json* a = Get(after, name.c_str());
    lines.push_back(name + ": " + (b ? AnyText(*b) : "-") + " -> " + (a ? AnyText(*a) : "-"));
  }
  if (lines.empty()) lines.push_back("the testbed's fingerprint changed");
  return lines;
}

// Quoted for a POSIX shell when it holds anything but [A-Za-z0-9_@%+=:,./-].
std::string ShellWord(const std::string& word) {
  static constexpr std::string_view kSafe =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string::npos) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
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

// Excerpt rows: the marker goes on the first bad point (same sha, else same run).
bool IsFirstBad(const json& point, const json& alert) {
  const std::string sha = Str(FirstBad(alert), "sha");
  if (!sha.empty() && Str(point, "sha") == sha) return true;
  const std::string run = Str(FirstBad(alert), "run_id");
  return sha.empty() && !run.empty() && Str(point, "run_id") == run;
}

std::string Repetitions(const json& point) {
  const json* values = Get(point, "values");
  return values != nullptr && values->is_array() ? std::to_string(values->size()) : "-";
}

std::string PointNote(const json& point, const json& alert) {
  std::vector<std::string> notes;
  if (IsFirstBad(point, alert)) notes.push_back("first bad");
  const json* changed = Get(point, "testbed_fingerprint_changed");
  if (changed != nullptr && changed->is_boolean() && changed->get<bool>()) {
    notes.push_back("testbed changed");
  }
  return Join(notes, ", ");
}

std::string TitleLine(const json& alert) {
  std::string line =
      "alert " + IdText(alert) + ": " + AlertKindLabel(alert) + " " + FormatAlertChange(alert);
  if (const std::string c = ConfidencePercent(Num(alert, "confidence")); !c.empty()) {
    if (Get(alert, "ci") != nullptr) line += " (" + c + " CI)";
  }
  return line;
}

}  // namespace

std::string FormatAlertChange(const json& alert) {
  const std::optional<double> magnitude = Num(alert, "magnitude");
  if (!magnitude) return "-";
  std::string out = Percent(*magnitude);
  const json* ci = Get(alert, "ci");
  if (ci != nullptr && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() &&
      (*ci)[1].is_number()) {
    const double lo = (*ci)[0].get<double>();
    const double hi = (*ci)[1].get<double>();
    if (std::isfinite(lo) && std::isfinite(hi))
      out += " [" + Percent(lo) + ", " + Percent(hi) + "]";
  }
  return out;
}

std::string AlertKindLabel(const json& alert) {
  if (Str(alert, "cause") == "environment") return "environment";
  return OrDash(Clean(Str(alert, "kind")));
}

std::string AlertRangeKey(const json& alert) {
  if (std::string group = Str(alert, "group"); !group.empty()) return Clean(group);
  const std::string good = ShortSha(Str(LastGood(alert), "sha"), 12);
  const std::string bad = ShortSha(Str(FirstBad(alert), "sha"), 12);
  return Clean((good.empty() ? std::string("(first point)") : good) + ".." +
               (bad.empty() ? std::string("?") : bad));
}

std::string BisectCommand(const json& alert) {
  const std::string good = Str(LastGood(alert), "sha");
  const std::string bad = Str(FirstBad(alert), "sha");
  if (good.empty() || bad.empty()) return "";
  const json& series = Obj(alert, "series");
  std::string out = "perfgate bisect --good " + ShellWord(good) + " --bad " + ShellWord(bad);
  if (std::string b = Str(series, "benchmark"); !b.empty()) out += " --benchmark " + ShellWord(b);
  if (std::string m = Str(series, "metric"); !m.empty()) out += " --metric " + ShellWord(m);
  return Clean(out);
}

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

std::string RenderAlertText(const json& alert) {
  const json& series = Obj(alert, "series");
  const std::string unit = Clean(Str(series, "unit"));
  std::vector<std::vector<std::string>> facts;
  auto fact = [&](const std::string& name, const std::string& value) {
    facts.push_back({name, value});
  };
  std::string out = Clean(TitleLine(alert)) + "\n";
  std::string state = OrDash(Clean(Str(alert, "state")));
  if (std::string by = Str(alert, "state_changed_by"); !by.empty()) {
    state += " (by " + Clean(by);
    if (std::string at = Str(alert, "state_changed_at"); !at.empty()) state += ", " + Clean(at);
    state += ")";
  }
  fact("state", state);
  std::string where = "project " + OrDash(Clean(Str(alert, "project"))) + ", branch " +
                      OrDash(Clean(Str(series, "branch"))) + ", testbed " +
                      OrDash(Clean(Str(series, "testbed")));
  fact("series", Clean(BenchmarkName(alert)) + " " + OrDash(Clean(Str(series, "metric"))));
  fact("where", where);
  std::string metric = unit.empty() ? std::string() : unit;
  if (std::string d = DirectionText(Str(series, "direction")); !d.empty()) {
    metric += (metric.empty() ? "" : ", ") + Clean(d);
  }
  if (!metric.empty()) fact("unit", metric);
  fact("level", WithUnit(Level(Num(alert, "level_before")), unit) + " -> " +
                    WithUnit(Level(Num(alert, "level_after")), unit));
  fact("p / q", PValue(Num(alert, "p_value")) + " / " + PValue(Num(alert, "q_value")));
  fact("detectors", OrDash(Clean(Join(Strings(alert, "detectors"), ", "))));
  fact("cause", OrDash(Clean(Str(alert, "cause"))));
  const std::string bad = CommitLine(FirstBad(alert), false);
  const std::string good = CommitLine(LastGood(alert), false);
  fact("first bad", OrDash(bad));
  fact("last good", good.empty() ? std::string(kNoLastGood) : good);
  if (std::string created = Str(alert, "created_at"); !created.empty()) {
    fact("created", Clean(created));
  }
  out += Table(facts, "  ");

  if (std::vector<std::string> env = EnvironmentLines(alert); !env.empty()) {
    out += "\nenvironment change (the testbed, not the code, may explain this step):\n";
    for (const std::string& line : env) out += "  " + Clean(line) + "\n";
  }

  const json* excerpt = Get(alert, "excerpt");
  if (excerpt != nullptr && excerpt->is_array() && !excerpt->empty()) {
    out += "\npoints around the step:\n";
    std::vector<std::vector<std::string>> rows = {{"", "POS", "COMMIT",
                                                   unit.empty() ? "LEVEL" : "LEVEL (" + unit + ")",
                                                   "REPS", "SUBJECT", ""}};
    for (const json& point : *excerpt) {
      const std::string note = PointNote(point, alert);
      rows.push_back({IsFirstBad(point, alert) ? ">" : "", OrDash(Clean(Str(point, "position"))),
                      OrDash(Clean(ShortSha(Str(point, "sha"), 7))), Level(Num(point, "level")),
                      Repetitions(point), Clean(Str(point, "subject")),
                      note.empty() ? "" : "<- " + note});
    }
    out += Table(rows, "  ");
  }

  const json* history = Get(alert, "history");
  if (history != nullptr && history->is_array() && !history->empty()) {
    out += "\ntriage history:\n";
    for (const json& h : *history) {
      std::string line = OrDash(Str(h, "at")) + "  " + OrDash(Str(h, "state"));
      if (std::string by = Str(h, "by"); !by.empty()) line += " by " + by;
      if (std::string note = Str(h, "note"); !note.empty()) line += ": " + note;
      out += "  " + Clean(line) + "\n";
    }
  }
  if (std::string note = Str(alert, "note"); !note.empty()) out += "\nnote: " + Clean(note) + "\n";

  const json* bisects = Get(alert, "bisects");
  if (bisects != nullptr && bisects->is_array() && !bisects->empty()) {
    out += "\nbisects:\n";
    for (const json& b : *bisects) {
      std::string line = "#" + OrDash(Str(b, "id")) + " " + OrDash(Str(b, "state"));
      if (std::string culprit = Str(b, "culprit"); !culprit.empty()) {
        line += ": culprit " + ShortSha(culprit, 12);
      }
      if (std::string by = Str(b, "created_by"); !by.empty()) line += " (by " + by + ")";
      out += "  " + Clean(line) + "  " + OrDash(Str(b, "created_at")) + "\n";
    }
  }

  if (std::string bisect = BisectCommand(alert); !bisect.empty()) {
    out += "\nfind the commit:\n  " + bisect + "\n";
  } else if (Str(LastGood(alert), "sha").empty()) {
    out += "\nno bisect: the step is at the first point of the series (no earlier commit)\n";
  }
  return out;
}

std::string RenderAlertMarkdown(const json& alert) {
  const json& series = Obj(alert, "series");
  const std::string unit = Str(series, "unit");
  std::string out = "### perfgate " + Md(TitleLine(alert)) + "\n\n";
  auto fact = [&](const std::string& name, const std::string& value) {
    out += MdRow({"**" + name + "**", value});
  };
  out += "| | |\n|---|---|\n";
  std::string state = Md(OrDash(Str(alert, "state")));
  if (std::string by = Str(alert, "state_changed_by"); !by.empty()) {
    state += " (by " + Md(by);
    if (std::string at = Str(alert, "state_changed_at"); !at.empty()) state += ", " + Md(at);
    state += ")";
  }
  fact("State", state);
  fact("Series", MdCode(BenchmarkName(alert)) + " " + Md(OrDash(Str(series, "metric"))) +
                     (unit.empty() ? "" : " (" + Md(unit) + ")"));
  fact("Where", "project " + Md(OrDash(Str(alert, "project"))) + ", branch " +
                    Md(OrDash(Str(series, "branch"))) + ", testbed " +
                    Md(OrDash(Str(series, "testbed"))));
  fact("Level", Md(WithUnit(Level(Num(alert, "level_before")), unit) + " -> " +
                   WithUnit(Level(Num(alert, "level_after")), unit)));
  fact("p / q", Md(PValue(Num(alert, "p_value")) + " / " + PValue(Num(alert, "q_value"))));
  fact("Detectors", Md(OrDash(Join(Strings(alert, "detectors"), ", "))));
  fact("Cause", Md(OrDash(Str(alert, "cause"))));
  const std::string bad = CommitLine(FirstBad(alert), true);
  const std::string good = CommitLine(LastGood(alert), true);
  fact("First bad", bad.empty() ? "-" : bad);
  fact("Last good", good.empty() ? Md(kNoLastGood) : good);

  if (std::vector<std::string> env = EnvironmentLines(alert); !env.empty()) {
    out += "\n**Environment change** (the testbed, not the code, may explain this step):\n\n";
    for (const std::string& line : env) out += "- " + Md(line) + "\n";
  }
  const json* excerpt = Get(alert, "excerpt");
  if (excerpt != nullptr && excerpt->is_array() && !excerpt->empty()) {
    out +=
        "\n| | Position | Commit | Level | Reps | Subject | |\n"
        "|---|---:|---|---:|---:|---|---|\n";
    for (const json& point : *excerpt) {
      const bool first_bad = IsFirstBad(point, alert);
      out += MdRow({first_bad ? "**>**" : "", Md(OrDash(Str(point, "position"))),
                    MdCode(ShortSha(Str(point, "sha"), 7)), Md(Level(Num(point, "level"))),
                    Repetitions(point), Md(Str(point, "subject")), Md(PointNote(point, alert))});
    }
  }
  const json* history = Get(alert, "history");
  if (history != nullptr && history->is_array() && !history->empty()) {
    out += "\n**Triage history**\n\n";
    for (const json& h : *history) {
      std::string line = Md(OrDash(Str(h, "at"))) + " " + Md(OrDash(Str(h, "state")));
      if (std::string by = Str(h, "by"); !by.empty()) line += " by " + Md(by);
      if (std::string note = Str(h, "note"); !note.empty()) line += ": " + Md(note);
      out += "- " + line + "\n";
    }
  }
  if (std::string note = Str(alert, "note"); !note.empty()) out += "\nNote: " + Md(note) + "\n";
  if (std::string bisect = BisectCommand(alert); !bisect.empty()) {
    out += "\n```sh\n" + bisect + "\n```\n";
  }
  return out;
}

std::string RenderTriageText(const json& alert) {
  const json& series = Obj(alert, "series");
  std::string line = "alert " + IdText(alert) + " is now " + OrDash(Str(alert, "state")) + ": " +
                     AlertKindLabel(alert) + " " + FormatAlertChange(alert) + " in " +
                     BenchmarkName(alert) + " " + OrDash(Str(series, "metric"));
  if (std::string testbed = Str(series, "testbed"); !testbed.empty()) line += " on " + testbed;
  line += " (" + AlertRangeKey(alert) + ")";
  std::string out = Clean(line) + "\n";
  if (std::string note = Str(alert, "note"); !note.empty()) out += "  note: " + Clean(note) + "\n";
  return out;
}

std::string RenderAlertSummaryText(const json& summary) {
  auto count = [&](const char* group, const char* key) {
    const std::optional<double> n = Num(Obj(summary, group), key);
    return n ? std::to_string(static_cast<long long>(*n)) : std::string("0");
  };
  std::string out =
      "alerts: " + OrDash(Str(summary, "total")) + " (open " + count("by_state", "open") +
      ", acknowledged " + count("by_state", "acknowledged") + ", false positive " +
      count("by_state", "false_positive") + ", resolved " + count("by_state", "resolved") +
      "); regressions " + count("by_kind", "regression") + ", improvements " +
      count("by_kind", "improvement") + ", environment changes " +
      count("by_cause", "environment") + "\n";
  const std::string triaged = OrDash(Str(summary, "triaged_regressions"));
  const std::optional<double> rate = Num(summary, "false_positive_rate");
  out += "triaged regressions: " + triaged + ", false positives: " +
         (rate ? Percent(*rate).substr(1) : std::string("- (none triaged yet)")) + "\n";
  return out;
}

std::string RenderJson(const json& value) {
  return value.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace perfgate::cli
