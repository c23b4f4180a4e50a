#include "server/history/alert_json.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "core/text.h"

namespace perfgate::server::history {
namespace {

using nlohmann::ordered_json;

ordered_json OrNull(const std::string& s) {
  return s.empty() ? ordered_json(nullptr) : ordered_json(s);
}

}  // namespace

ordered_json CommitJson(const store::CommitRef& c) {
  return {{"sha", c.sha},
          {"subject", c.subject},
          {"author", c.author},
          {"time", OrNull(c.time)},
          {"run_id", OrNull(c.run_id)}};
}

std::string RangeGroup(const store::AlertRecord& alert) {
  return alert.last_good.sha.substr(0, 12) + ".." + alert.first_bad.sha.substr(0, 12);
}

ordered_json AlertJson(const store::AlertRecord& a) {
  ordered_json ci = nullptr;
  if (a.ci_low && a.ci_high && std::isfinite(*a.ci_low) && std::isfinite(*a.ci_high)) {
    ci = {*a.ci_low, *a.ci_high};
  }
  ordered_json environment = nullptr;
  if (!a.environment_change_json.empty()) {
    environment = ordered_json::parse(a.environment_change_json, nullptr, false);
    if (environment.is_discarded()) environment = nullptr;
  }
  ordered_json parameters = ordered_json::parse(a.parameters_json, nullptr, false);
  if (parameters.is_discarded()) parameters = ordered_json::object();
  return {
      {"id", a.id},
      {"project", a.project},
      {"series",
       {{"branch", a.series.branch},
        {"testbed", a.series.testbed},
        {"suite", a.series.key.suite},
        {"benchmark", a.series.key.benchmark},
        {"metric", a.series.key.metric},
        {"unit", a.series.unit},
        {"direction", std::string(DirectionName(a.series.direction))}}},
      {"kind", a.kind},
      {"cause", a.cause},
      {"state", a.state},
      {"position", a.position},
      {"range", {{"last_good", CommitJson(a.last_good)}, {"first_bad", CommitJson(a.first_bad)}}},
      {"group", RangeGroup(a)},
      {"magnitude", a.magnitude},
      {"ci", ci},
      {"confidence", parameters.value("ci_confidence", 0.95)},
      {"p_value", a.p_value},
      {"q_value", a.q_value},
      {"level_before", a.level_before},
      {"level_after", a.level_after},
      {"detectors", a.detectors},
      {"environment_change", environment},
      {"parameters", parameters},
      {"note", a.note},
      {"state_changed_by", OrNull(a.state_changed_by)},
      {"state_changed_at", OrNull(a.state_changed_at)},
      {"created_at", a.created_at}};
}

ordered_json AlertDetailJson(const store::AlertDetail& detail) {
  ordered_json out = AlertJson(detail.alert);
  ordered_json excerpt = ordered_json::array();
  int64_t previous_testbed = -1;
  for (const store::ExcerptPoint& p : detail.excerpt) {
    excerpt.push_back({{"position", p.position},
                       {"sha", p.commit.sha},
                       {"subject", p.commit.subject},
                       {"author", p.commit.author},
                       {"time", OrNull(p.commit.time)},
                       {"run_id", OrNull(p.commit.run_id)},
                       {"level", p.level},
                       {"values", p.values},
                       {"first_bad", p.position == detail.alert.position},
                       {"testbed_fingerprint_changed",
                        previous_testbed >= 0 && p.testbed_id != previous_testbed}});
    previous_testbed = p.testbed_id;
  }
  out["excerpt"] = std::move(excerpt);
  ordered_json history = ordered_json::array();
  for (const store::AlertEvent& e : detail.history) {
    history.push_back({{"state", e.state}, {"note", e.note}, {"by", e.by}, {"at", e.at}});
  }
  out["history"] = std::move(history);
  ordered_json bisects = ordered_json::array();
  for (const store::BisectRecord& b : detail.bisects) {
    bisects.push_back({{"id", b.id},
                       {"state", b.state},
                       {"culprit", OrNull(b.culprit_sha)},
                       {"good", b.good_sha},
                       {"bad", b.bad_sha},
                       {"created_by", b.created_by},
                       {"created_at", b.created_at}});
  }
  out["bisects"] = std::move(bisects);
  return out;
}

ordered_json AlertSummaryJson(const std::vector<store::AlertCount>& counts) {
  ordered_json by_state = {
      {"open", 0}, {"acknowledged", 0}, {"false_positive", 0}, {"resolved", 0}};
  ordered_json by_kind = {{"regression", 0}, {"improvement", 0}};
  ordered_json by_cause = {{"code", 0}, {"environment", 0}};
  int64_t total = 0, triaged = 0, false_positives = 0;
  for (const store::AlertCount& c : counts) {
    total += c.count;
    by_state[c.state] = by_state.value(c.state, int64_t{0}) + c.count;
    by_kind[c.kind] = by_kind.value(c.kind, int64_t{0}) + c.count;
    by_cause[c.cause] = by_cause.value(c.cause, int64_t{0}) + c.count;
    if (c.kind == "regression" && c.cause == "code" && c.state != "open") {
      triaged += c.count;
      if (c.state == "false_positive") false_positives += c.count;
    }
  }
  ordered_json rate = nullptr;
  if (triaged > 0) rate = static_cast<double>(false_positives) / static_cast<double>(triaged);
  return {{"total", total},       {"by_state", by_state},           {"by_kind", by_kind},
          {"by_cause", by_cause}, {"triaged_regressions", triaged}, {"false_positive_rate", rate}};
}

ordered_json WebhookBody(const std::vector<store::AlertRecord>& alerts,
                         const std::string& public_url) {
  std::map<std::string, std::vector<const store::AlertRecord*>> groups;
  for (const store::AlertRecord& a : alerts) groups[RangeGroup(a)].push_back(&a);
  std::string text = "perfgate: " + std::to_string(alerts.size()) +
                     (alerts.size() == 1 ? " new alert" : " new alerts");
  if (!alerts.empty()) text += " in " + alerts.front().project;
  for (const auto& [group, members] : groups) {
    const store::AlertRecord& first = *members.front();
    text += "\n*" + group + "* (" + first.series.branch + ", " + first.first_bad.subject + ")";
    for (const store::AlertRecord* a : members) {
      const std::string what = a->cause == "environment" ? "environment change" : a->kind;
      std::string line = "\n• " + what + " " + SignedPercent(a->magnitude) + " " +
                         a->series.key.benchmark + " " + a->series.key.metric + " on " +
                         a->series.testbed;
      if (!public_url.empty()) {
        // The dashboard's alerts page with this one highlighted: series, range, triage.
        line += " <" + public_url + "/#/p/" + a->project +
                "/alerts?state=all&alert=" + std::to_string(a->id) + "|alert " +
                std::to_string(a->id) + ">";
      } else {
        line += " (alert " + std::to_string(a->id) + ")";
      }
      text += line;
    }
  }
  ordered_json list = ordered_json::array();
  for (const store::AlertRecord& a : alerts) list.push_back(AlertJson(a));
  return {{"text", text}, {"alerts", std::move(list)}};
}

}  // namespace perfgate::server::history
