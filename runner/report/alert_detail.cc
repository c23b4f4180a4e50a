// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts show` and the one-line answers of the other alert verbs: one alert with its
// series, change, commits, environment change, points around the step, triage and bisects.
#include <optional>
#include <string>
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
using alerts_internal::ShortSha;
using nlohmann::json;
using text::Clean;
using text::ConfidencePercent;
using text::Join;
using text::Level;
using text::Md;
using text::MdCode;
using text::MdRow;
using text::OrDash;
using text::Percent;
using text::PValue;
using text::Table;
using text::WithUnit;
using wire::Alert;
using wire::ExcerptPoint;

std::string DirectionText(Direction direction) {
  return direction == Direction::kLowerIsBetter ? "lower is better" : "higher is better";
}

// Excerpt rows: the marker goes on the first bad point (same sha, else same run).
bool IsFirstBad(const ExcerptPoint& point, const Alert& alert) {
  const std::string& sha = alert.range.first_bad.sha;
  if (!sha.empty() && point.commit.sha == sha) return true;
  const std::string run = alert.range.first_bad.run_id.value_or("");
  return sha.empty() && !run.empty() && point.commit.run_id.value_or("") == run;
}

std::string PointNote(const ExcerptPoint& point, const Alert& alert) {
  std::vector<std::string> notes;
  if (IsFirstBad(point, alert)) notes.push_back("first bad");
  if (point.testbed_fingerprint_changed) notes.push_back("testbed changed");
  return Join(notes, ", ");
}

std::string TitleLine(const Alert& alert) {
  std::string line = "alert " + std::to_string(alert.id) + ": " + AlertKindLabel(alert) + " " +
                     FormatAlertChange(alert);
  if (const std::string c = ConfidencePercent(alert.confidence); !c.empty()) {
    if (alert.ci) line += " (" + c + " CI)";
  }
  return line;
}

// "acknowledged (by alice, 2026-11-22T09:00Z)": the state and who set it when; `escape` makes
// each piece safe for the output (Clean or Md).
template <class Escape>
std::string StateText(const Alert& alert, Escape escape) {
  std::string state = escape(OrDash(alert.state));
  const std::string by = alert.state_changed_by.value_or("");
  if (!by.empty()) {
    state += " (by " + escape(by);
    const std::string at = alert.state_changed_at.value_or("");
    if (!at.empty()) state += ", " + escape(at);
    state += ")";
  }
  return state;
}

}  // namespace

std::string RenderAlertText(const wire::AlertDetail& detail) {
  const Alert& alert = detail.alert;
  const wire::HistorySeries& series = alert.series;
  const std::string unit = Clean(series.unit);
  std::vector<std::vector<std::string>> facts;
  auto fact = [&](const std::string& name, const std::string& value) {
    facts.push_back({name, value});
  };
  std::string out = Clean(TitleLine(alert)) + "\n";
  fact("state", StateText(alert, [](const std::string& t) { return Clean(t); }));
  std::string where = "project " + OrDash(Clean(alert.project)) + ", branch " +
                      OrDash(Clean(series.branch)) + ", testbed " + OrDash(Clean(series.testbed));
  fact("series", Clean(BenchmarkName(alert)) + " " + OrDash(Clean(series.key.metric)));
  fact("where", where);
  std::string metric = unit;
  metric += (metric.empty() ? "" : ", ") + DirectionText(series.direction);
  fact("unit", metric);
  fact("level", WithUnit(Level(alert.level_before), unit) + " -> " +
                    WithUnit(Level(alert.level_after), unit));
  fact("p / q", PValue(alert.p_value) + " / " + PValue(alert.q_value));
  fact("detectors", OrDash(Clean(Join(alert.detectors, ", "))));
  fact("cause", OrDash(Clean(alert.cause)));
  const std::string bad = CommitLine(alert.range.first_bad, false);
  const std::string good = CommitLine(alert.range.last_good, false);
  fact("first bad", OrDash(bad));
  fact("last good", good.empty() ? std::string(kNoLastGood) : good);
  if (!alert.created_at.empty()) fact("created", Clean(alert.created_at));
  out += Table(facts, "  ");

  if (std::vector<std::string> env = EnvironmentLines(alert); !env.empty()) {
    out += "\nenvironment change (the testbed, not the code, may explain this step):\n";
    for (const std::string& line : env) out += "  " + Clean(line) + "\n";
  }

  if (!detail.excerpt.empty()) {
    out += "\npoints around the step:\n";
    std::vector<std::vector<std::string>> rows = {{"", "POS", "COMMIT",
                                                   unit.empty() ? "LEVEL" : "LEVEL (" + unit + ")",
                                                   "REPS", "SUBJECT", ""}};
    for (const ExcerptPoint& point : detail.excerpt) {
      const std::string note = PointNote(point, alert);
      rows.push_back({IsFirstBad(point, alert) ? ">" : "", std::to_string(point.position),
                      OrDash(Clean(ShortSha(point.commit.sha, 7))), Level(point.level),
                      std::to_string(point.values.size()), Clean(point.commit.subject),
                      note.empty() ? "" : "<- " + note});
    }
    out += Table(rows, "  ");
  }

  if (!detail.history.empty()) {
    out += "\ntriage history:\n";
    for (const wire::AlertEvent& h : detail.history) {
      std::string line = OrDash(h.at) + "  " + OrDash(h.state);
      if (!h.by.empty()) line += " by " + h.by;
      if (!h.note.empty()) line += ": " + h.note;
      out += "  " + Clean(line) + "\n";
    }
  }
  if (!alert.note.empty()) out += "\nnote: " + Clean(alert.note) + "\n";

  if (!detail.bisects.empty()) {
    out += "\nbisects:\n";
    for (const wire::AlertBisect& b : detail.bisects) {
      std::string line = "#" + std::to_string(b.id) + " " + OrDash(b.state);
      if (b.culprit && !b.culprit->empty()) line += ": culprit " + ShortSha(*b.culprit, 12);
      if (!b.created_by.empty()) line += " (by " + b.created_by + ")";
      out += "  " + Clean(line) + "  " + OrDash(b.created_at) + "\n";
    }
  }

  if (std::string bisect = BisectCommand(alert); !bisect.empty()) {
    out += "\nfind the commit:\n  " + bisect + "\n";
  } else if (alert.range.last_good.sha.empty()) {
    out += "\nno bisect: the step is at the first point of the series (no earlier commit)\n";
  }
  return out;
}

std::string RenderAlertMarkdown(const wire::AlertDetail& detail) {
  const Alert& alert = detail.alert;
  const wire::HistorySeries& series = alert.series;
  const std::string& unit = series.unit;
  std::string out = "### perfwarden " + Md(TitleLine(alert)) + "\n\n";
  auto fact = [&](const std::string& name, const std::string& value) {
    out += MdRow({"**" + name + "**", value});
  };
  out += "| | |\n|---|---|\n";
  fact("State", StateText(alert, [](const std::string& t) { return Md(t); }));
  fact("Series", MdCode(BenchmarkName(alert)) + " " + Md(OrDash(series.key.metric)) +
                     (unit.empty() ? "" : " (" + Md(unit) + ")"));
  fact("Where", "project " + Md(OrDash(alert.project)) + ", branch " + Md(OrDash(series.branch)) +
                    ", testbed " + Md(OrDash(series.testbed)));
  fact("Level", Md(WithUnit(Level(alert.level_before), unit) + " -> " +
                   WithUnit(Level(alert.level_after), unit)));
  fact("p / q", Md(PValue(alert.p_value) + " / " + PValue(alert.q_value)));
  fact("Detectors", Md(OrDash(Join(alert.detectors, ", "))));
  fact("Cause", Md(OrDash(alert.cause)));
  const std::string bad = CommitLine(alert.range.first_bad, true);
  const std::string good = CommitLine(alert.range.last_good, true);
  fact("First bad", bad.empty() ? "-" : bad);
  fact("Last good", good.empty() ? Md(kNoLastGood) : good);

  if (std::vector<std::string> env = EnvironmentLines(alert); !env.empty()) {
    out += "\n**Environment change** (the testbed, not the code, may explain this step):\n\n";
    for (const std::string& line : env) out += "- " + Md(line) + "\n";
  }
  if (!detail.excerpt.empty()) {
    out +=
        "\n| | Position | Commit | Level | Reps | Subject | |\n"
        "|---|---:|---|---:|---:|---|---|\n";
    for (const ExcerptPoint& point : detail.excerpt) {
      const bool first_bad = IsFirstBad(point, alert);
      out += MdRow({first_bad ? "**>**" : "", Md(std::to_string(point.position)),
                    MdCode(ShortSha(point.commit.sha, 7)), Md(Level(point.level)),
                    std::to_string(point.values.size()), Md(point.commit.subject),
                    Md(PointNote(point, alert))});
    }
  }
  if (!detail.history.empty()) {
    out += "\n**Triage history**\n\n";
    for (const wire::AlertEvent& h : detail.history) {
      std::string line = Md(OrDash(h.at)) + " " + Md(OrDash(h.state));
      if (!h.by.empty()) line += " by " + Md(h.by);
      if (!h.note.empty()) line += ": " + Md(h.note);
      out += "- " + line + "\n";
    }
  }
  if (!alert.note.empty()) out += "\nNote: " + Md(alert.note) + "\n";
  if (std::string bisect = BisectCommand(alert); !bisect.empty()) {
    out += "\n```sh\n" + bisect + "\n```\n";
  }
  return out;
}

std::string RenderTriageText(const Alert& alert) {
  std::string line = "alert " + std::to_string(alert.id) + " is now " + OrDash(alert.state) + ": " +
                     AlertKindLabel(alert) + " " + FormatAlertChange(alert) + " in " +
                     BenchmarkName(alert) + " " + OrDash(alert.series.key.metric);
  if (!alert.series.testbed.empty()) line += " on " + alert.series.testbed;
  line += " (" + AlertRangeKey(alert) + ")";
  std::string out = Clean(line) + "\n";
  if (!alert.note.empty()) out += "  note: " + Clean(alert.note) + "\n";
  return out;
}

std::string RenderAlertSummaryText(const wire::AlertSummary& summary) {
  auto count = [](int64_t n) { return std::to_string(n); };
  std::string out =
      "alerts: " + count(summary.total) + " (open " + count(summary.by_state.open) +
      ", acknowledged " + count(summary.by_state.acknowledged) + ", false positive " +
      count(summary.by_state.false_positive) + ", resolved " + count(summary.by_state.resolved) +
      "); regressions " + count(summary.by_kind.regression) + ", improvements " +
      count(summary.by_kind.improvement) + ", creeps " + count(summary.by_kind.creep) +
      ", environment changes " + count(summary.by_cause.environment) + "\n";
  const std::optional<double>& rate = summary.false_positive_rate;
  out += "triaged regressions: " + count(summary.triaged_regressions) + ", false positives: " +
         (rate ? Percent(*rate).substr(1) : std::string("- (none triaged yet)")) + "\n";
  return out;
}

std::string RenderJson(const json& value) {
  return value.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string RenderJson(const nlohmann::ordered_json& value) { return RenderJson(json(value)); }

}  // namespace perfwarden::report
