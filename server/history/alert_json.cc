// SPDX-License-Identifier: Apache-2.0
#include "server/history/alert_json.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "core/text.h"

namespace perfwarden::server::history {
namespace {

using nlohmann::ordered_json;

std::optional<std::string> OrAbsent(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

// The stored {"before", "after", "changed"} object (analysis.h's EnvironmentChangeJson).
std::optional<wire::EnvironmentChange> EnvironmentChange(const std::string& stored) {
  if (stored.empty()) return std::nullopt;
  const ordered_json parsed = ordered_json::parse(stored, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  wire::EnvironmentChange change;
  if (auto it = parsed.find("before"); it != parsed.end() && it->is_object()) change.before = *it;
  if (auto it = parsed.find("after"); it != parsed.end() && it->is_object()) change.after = *it;
  if (auto it = parsed.find("changed"); it != parsed.end() && it->is_array()) {
    for (const ordered_json& name : *it) {
      if (name.is_string()) change.changed.push_back(name.get<std::string>());
    }
  }
  return change;
}

wire::AlertBisect ToWireBisect(const store::BisectRecord& b) {
  return {b.id,         b.state,     OrAbsent(b.culprit_sha), b.good_sha, b.bad_sha,
          b.created_by, b.created_at};
}

// "• regression +8.0% BM_A real_time on bed <link|alert 12>"
std::string MemberLine(const store::AlertRecord& a, const std::string& public_url) {
  const std::string what = a.creep                    ? "creep"
                           : a.cause == "environment" ? "environment change"
                                                      : a.kind;
  std::string line = "\n• " + what + " " + SignedPercent(a.magnitude) + " " +
                     a.series.key.benchmark + " " + a.series.key.metric + " on " + a.series.testbed;
  if (a.creep) line += " " + CreepRange(a);
  if (!public_url.empty()) {
    // The dashboard's alerts page with this one highlighted: series, range, triage.
    line += " <" + public_url + "/#/p/" + a.project +
            "/alerts?state=all&alert=" + std::to_string(a.id) + "|alert " + std::to_string(a.id) +
            ">";
  } else {
    line += " (alert " + std::to_string(a.id) + ")";
  }
  return line;
}

}  // namespace

std::string CreepRange(const store::AlertRecord& alert) {
  if (!alert.creep) return "";
  char slope[32];
  std::snprintf(slope, sizeof slope, "%+.2g%%", alert.creep->slope * 100);
  return std::string("(") + slope + " per point over points " + std::to_string(alert.position) +
         "-" + std::to_string(alert.creep->range_end) + ")";
}

std::string RangeGroup(const store::AlertRecord& alert) {
  return alert.last_good.sha.substr(0, 12) + ".." + alert.first_bad.sha.substr(0, 12);
}

wire::HistorySeries ToWire(const store::HistorySeriesKey& s) {
  return {s.branch, s.testbed, s.key, s.unit, s.direction};
}

wire::CommitRef ToWire(const store::CommitRef& c) {
  return {c.sha, c.subject, c.author, OrAbsent(c.time), OrAbsent(c.run_id)};
}

wire::Alert ToWire(const store::AlertRecord& a) {
  wire::Alert out;
  out.id = a.id;
  out.project = a.project;
  out.series = ToWire(a.series);
  out.kind = a.kind;
  out.cause = a.cause;
  out.state = a.state;
  out.position = a.position;
  out.range = {ToWire(a.last_good), ToWire(a.first_bad)};
  out.group = RangeGroup(a);
  out.group_id = a.group_id;
  out.magnitude = a.magnitude;
  if (a.ci_low && a.ci_high && std::isfinite(*a.ci_low) && std::isfinite(*a.ci_high)) {
    out.ci = wire::Interval{*a.ci_low, *a.ci_high};
  }
  out.parameters = ordered_json::parse(a.parameters_json, nullptr, false);
  if (out.parameters.is_discarded()) out.parameters = ordered_json::object();
  out.confidence = out.parameters.value("ci_confidence", 0.95);
  out.p_value = a.p_value;
  out.q_value = a.q_value;
  out.level_before = a.level_before;
  out.level_after = a.level_after;
  out.detectors = a.detectors;
  out.environment_change = EnvironmentChange(a.environment_change_json);
  out.note = a.note;
  out.state_changed_by = OrAbsent(a.state_changed_by);
  out.state_changed_at = OrAbsent(a.state_changed_at);
  out.created_at = a.created_at;
  if (a.creep) {
    out.creep = wire::AlertCreep{a.position, a.creep->range_end, a.creep->slope, a.creep->slope_low,
                                 a.creep->slope_high};
  }
  return out;
}

wire::AlertDetail ToWire(const store::AlertDetail& detail) {
  wire::AlertDetail out;
  out.alert = ToWire(detail.alert);
  int64_t previous_testbed = -1;
  for (const store::ExcerptPoint& p : detail.excerpt) {
    out.excerpt.push_back({p.position, ToWire(p.commit), p.level, p.values,
                           p.position == detail.alert.position,
                           previous_testbed >= 0 && p.testbed_id != previous_testbed});
    previous_testbed = p.testbed_id;
  }
  for (const store::AlertEvent& e : detail.history) {
    out.history.push_back({e.state, e.note, e.by, e.at});
  }
  for (const store::BisectRecord& b : detail.bisects) out.bisects.push_back(ToWireBisect(b));
  return out;
}

wire::AlertGroup ToWire(const store::AlertGroupRecord& g) {
  wire::AlertGroup out;
  out.id = g.id;
  out.project = g.project;
  out.branch = g.branch;
  out.range = {ToWire(g.last_good), ToWire(g.first_bad)};
  out.state = g.state;
  for (std::string_view state : wire::kAlertStates) {
    const auto it = g.states.find(std::string(state));
    out.states.emplace_back(std::string(state), it == g.states.end() ? 0 : it->second);
  }
  out.members = g.members;
  out.most_significant = g.most_significant;
  out.bisect_id = g.bisect_id;
  out.created_at = g.created_at;
  return out;
}

wire::AlertGroupDetail ToWire(const store::AlertGroupDetail& detail) {
  wire::AlertGroupDetail out;
  out.group = ToWire(detail.group);
  for (const store::AlertRecord& a : detail.members) out.members.push_back(ToWire(a));
  for (const store::BisectRecord& b : detail.bisects) out.bisects.push_back(ToWireBisect(b));
  return out;
}

wire::AlertSummary SummaryOf(const std::vector<store::AlertCount>& counts) {
  wire::AlertSummary out;
  int64_t false_positives = 0;
  for (const store::AlertCount& c : counts) {
    out.total += c.count;
    if (c.state == "open") out.by_state.open += c.count;
    if (c.state == "acknowledged") out.by_state.acknowledged += c.count;
    if (c.state == "false_positive") out.by_state.false_positive += c.count;
    if (c.state == "resolved") out.by_state.resolved += c.count;
    if (c.state == "went_away") out.by_state.went_away += c.count;
    if (c.kind == "regression") out.by_kind.regression += c.count;
    if (c.kind == "improvement") out.by_kind.improvement += c.count;
    if (c.kind == "creep") out.by_kind.creep += c.count;
    if (c.cause == "code") out.by_cause.code += c.count;
    if (c.cause == "environment") out.by_cause.environment += c.count;
    if (c.kind == "regression" && c.cause == "code" && c.state != "open" &&
        c.state != "went_away") {
      out.triaged_regressions += c.count;
      if (c.state == "false_positive") false_positives += c.count;
    }
  }
  if (out.triaged_regressions > 0) {
    out.false_positive_rate =
        static_cast<double>(false_positives) / static_cast<double>(out.triaged_regressions);
  }
  return out;
}

ordered_json GroupWebhookBody(const store::AlertGroupDetail& detail,
                              const std::string& public_url) {
  const store::AlertGroupRecord& g = detail.group;
  const std::size_t n = detail.members.size();
  std::string text = "perfwarden: new alert group " + std::to_string(g.id) + " in " + g.project +
                     ", " + std::to_string(n) + (n == 1 ? " alert" : " alerts");
  text += "\n*" + g.last_good.sha.substr(0, 12) + ".." + g.first_bad.sha.substr(0, 12) + "* (" +
          g.branch + ", " + g.first_bad.subject + ")";
  if (!public_url.empty()) {
    text += " <" + public_url + "/#/p/" + g.project +
            "/alerts?state=all&group=" + std::to_string(g.id) + "|group " + std::to_string(g.id) +
            ">";
  }
  for (const store::AlertRecord& a : detail.members) text += MemberLine(a, public_url);
  ordered_json list = ordered_json::array();
  for (const store::AlertRecord& a : detail.members) list.push_back(wire::EncodeAlert(ToWire(a)));
  return {
      {"text", text}, {"group", wire::EncodeAlertGroup(ToWire(g))}, {"alerts", std::move(list)}};
}

}  // namespace perfwarden::server::history
