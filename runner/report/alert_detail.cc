// `perfgate alerts show` and the one-line answers of the other alert verbs: one alert with its
// series, change, commits, environment change, points around the step, triage and bisects.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string_view>
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
using alerts_internal::ShortSha;
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

std::string DirectionText(const std::string& direction) {
  if (direction == "lower") return "lower is better";
  if (direction == "higher") return "higher is better";
  return direction;
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

}  // namespace perfgate::report
