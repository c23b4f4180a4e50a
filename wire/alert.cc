// SPDX-License-Identifier: Apache-2.0
// The alert messages' encoders; the decoders are alert_decode.cc. The key order is the one the
// server has always written (its clients and the stored webhook payloads compare bytes).
#include "wire/alert.h"

#include <algorithm>

#include "wire/alert_keys.h"

namespace perfwarden::wire {
namespace {

using nlohmann::ordered_json;

template <class Json>
Json OrNull(const std::optional<std::string>& text) {
  return text ? Json(*text) : Json(nullptr);
}

template <class Json>
Json SeriesJson(const HistorySeries& s) {
  return {{keys::series::kBranch, s.branch},
          {keys::series::kTestbed, s.testbed},
          {keys::series::kSuite, s.key.suite},
          {keys::series::kBenchmark, s.key.benchmark},
          {keys::series::kMetric, s.key.metric},
          {keys::series::kUnit, s.unit},
          {keys::series::kDirection, std::string(DirectionName(s.direction))}};
}

template <class Json>
Json CommitJson(const CommitRef& c) {
  return {{keys::commit::kSha, c.sha},
          {keys::commit::kSubject, c.subject},
          {keys::commit::kAuthor, c.author},
          {keys::commit::kTime, OrNull<Json>(c.time)},
          {keys::commit::kRunId, OrNull<Json>(c.run_id)}};
}

// The keys in the order PostgreSQL's jsonb keeps them (by length), in which the server has
// always passed the stored object through.
ordered_json EnvironmentJson(const std::optional<EnvironmentChange>& change) {
  if (!change) return nullptr;
  return {{keys::environment_change::kAfter, change->after},
          {keys::environment_change::kBefore, change->before},
          {keys::environment_change::kChanged, change->changed}};
}

ordered_json PointJson(const ExcerptPoint& p) {
  return {{keys::excerpt::kPosition, p.position},
          {keys::commit::kSha, p.commit.sha},
          {keys::commit::kSubject, p.commit.subject},
          {keys::commit::kAuthor, p.commit.author},
          {keys::commit::kTime, OrNull<ordered_json>(p.commit.time)},
          {keys::commit::kRunId, OrNull<ordered_json>(p.commit.run_id)},
          {keys::excerpt::kLevel, p.level},
          {keys::excerpt::kValues, p.values},
          {keys::excerpt::kFirstBad, p.first_bad},
          {keys::excerpt::kTestbedFingerprintChanged, p.testbed_fingerprint_changed}};
}

ordered_json BisectJson(const AlertBisect& b) {
  return {{keys::alert_bisect::kId, b.id},
          {keys::alert_bisect::kState, b.state},
          {keys::alert_bisect::kCulprit, OrNull<ordered_json>(b.culprit)},
          {keys::alert_bisect::kGood, b.good},
          {keys::alert_bisect::kBad, b.bad},
          {keys::alert_bisect::kCreatedBy, b.created_by},
          {keys::alert_bisect::kCreatedAt, b.created_at}};
}

}  // namespace

bool IsAlertState(std::string_view state) {
  return std::find(std::begin(kAlertStates), std::end(kAlertStates), state) !=
         std::end(kAlertStates);
}

namespace {

// The keys every alert has; EncodeAlert adds a creep's own.
ordered_json EncodeAlertKeys(const Alert& a) {
  ordered_json ci = nullptr;
  if (a.ci) ci = ordered_json::array({a.ci->lower, a.ci->upper});
  return {
      {keys::alert::kId, a.id},
      {keys::alert::kProject, a.project},
      {keys::alert::kSeries, SeriesJson<ordered_json>(a.series)},
      {keys::alert::kKind, a.kind},
      {keys::alert::kCause, a.cause},
      {keys::alert::kState, a.state},
      {keys::alert::kPosition, a.position},
      {keys::alert::kRange,
       {{keys::range::kLastGood, CommitJson<ordered_json>(a.range.last_good)},
        {keys::range::kFirstBad, CommitJson<ordered_json>(a.range.first_bad)}}},
      {keys::alert::kGroup, a.group},
      {keys::alert::kGroupId, a.group_id > 0 ? ordered_json(a.group_id) : ordered_json(nullptr)},
      {keys::alert::kMagnitude, a.magnitude},
      {keys::alert::kCi, std::move(ci)},
      {keys::alert::kConfidence, a.confidence},
      {keys::alert::kPValue, a.p_value},
      {keys::alert::kQValue, a.q_value},
      {keys::alert::kLevelBefore, a.level_before},
      {keys::alert::kLevelAfter, a.level_after},
      {keys::alert::kDetectors, a.detectors},
      {keys::alert::kEnvironmentChange, EnvironmentJson(a.environment_change)},
      {keys::alert::kParameters, a.parameters},
      {keys::alert::kNote, a.note},
      {keys::alert::kStateChangedBy, OrNull<ordered_json>(a.state_changed_by)},
      {keys::alert::kStateChangedAt, OrNull<ordered_json>(a.state_changed_at)},
      {keys::alert::kCreatedAt, a.created_at}};
}

}  // namespace

ordered_json EncodeAlert(const Alert& a) {
  ordered_json out = EncodeAlertKeys(a);
  if (a.creep) {
    out[keys::alert::kCreep] = {{keys::creep::kStart, a.creep->start},
                                {keys::creep::kEnd, a.creep->end},
                                {keys::creep::kSlope, a.creep->slope},
                                {keys::creep::kSlopeLow, a.creep->slope_low},
                                {keys::creep::kSlopeHigh, a.creep->slope_high}};
  }
  return out;
}

ordered_json EncodeAlertDetail(const AlertDetail& detail) {
  ordered_json out = EncodeAlert(detail.alert);
  ordered_json excerpt = ordered_json::array();
  for (const ExcerptPoint& p : detail.excerpt) excerpt.push_back(PointJson(p));
  out[keys::alert::kExcerpt] = std::move(excerpt);
  ordered_json history = ordered_json::array();
  for (const AlertEvent& e : detail.history) {
    history.push_back({{keys::event::kState, e.state},
                       {keys::event::kNote, e.note},
                       {keys::event::kBy, e.by},
                       {keys::event::kAt, e.at}});
  }
  out[keys::alert::kHistory] = std::move(history);
  ordered_json bisects = ordered_json::array();
  for (const AlertBisect& b : detail.bisects) bisects.push_back(BisectJson(b));
  out[keys::alert::kBisects] = std::move(bisects);
  return out;
}

ordered_json EncodeAlertPage(const AlertPage& page) {
  ordered_json alerts = ordered_json::array();
  for (const Alert& a : page.alerts) alerts.push_back(EncodeAlert(a));
  return {{keys::alert_page::kAlerts, std::move(alerts)},
          {keys::alert_page::kNextCursor, OrNull<ordered_json>(page.next_cursor)}};
}

ordered_json EncodeAlertSummary(const AlertSummary& s) {
  namespace k = keys::alert_summary;
  return {{k::kTotal, s.total},
          {k::kByState,
           {{k::kOpen, s.by_state.open},
            {k::kAcknowledged, s.by_state.acknowledged},
            {k::kFalsePositive, s.by_state.false_positive},
            {k::kResolved, s.by_state.resolved},
            {k::kWentAway, s.by_state.went_away}}},
          {k::kByKind,
           {{k::kRegression, s.by_kind.regression},
            {k::kImprovement, s.by_kind.improvement},
            {k::kCreep, s.by_kind.creep}}},
          {k::kByCause, {{k::kCode, s.by_cause.code}, {k::kEnvironment, s.by_cause.environment}}},
          {k::kTriagedRegressions, s.triaged_regressions},
          {k::kFalsePositiveRate,
           s.false_positive_rate ? ordered_json(*s.false_positive_rate) : ordered_json(nullptr)}};
}

ordered_json EncodeAlertUpdate(const AlertUpdate& update) {
  ordered_json out = ordered_json::object();
  if (update.state) out[keys::alert_update::kState] = *update.state;
  if (update.note) out[keys::alert_update::kNote] = *update.note;
  return out;
}

ordered_json EncodeAlertGroup(const AlertGroup& g) {
  namespace k = keys::alert_group;
  ordered_json states = ordered_json::object();
  for (const auto& [state, count] : g.states) states[state] = count;
  return {{k::kId, g.id},
          {k::kProject, g.project},
          {k::kBranch, g.branch},
          {k::kRange,
           {{keys::range::kLastGood, CommitJson<ordered_json>(g.range.last_good)},
            {keys::range::kFirstBad, CommitJson<ordered_json>(g.range.first_bad)}}},
          {k::kState, g.state},
          {k::kStates, std::move(states)},
          {k::kMemberCount, g.members},
          {k::kMostSignificant, g.most_significant},
          {k::kBisectId, g.bisect_id ? ordered_json(*g.bisect_id) : ordered_json(nullptr)},
          {k::kCreatedAt, g.created_at}};
}

ordered_json EncodeAlertGroupDetail(const AlertGroupDetail& detail) {
  ordered_json out = EncodeAlertGroup(detail.group);
  ordered_json members = ordered_json::array();
  for (const Alert& a : detail.members) members.push_back(EncodeAlert(a));
  out[keys::alert_group::kMembers] = std::move(members);
  ordered_json bisects = ordered_json::array();
  for (const AlertBisect& b : detail.bisects) bisects.push_back(BisectJson(b));
  out[keys::alert_group::kBisects] = std::move(bisects);
  return out;
}

ordered_json EncodeAlertGroupPage(const AlertGroupPage& page) {
  ordered_json groups = ordered_json::array();
  for (const AlertGroup& g : page.groups) groups.push_back(EncodeAlertGroup(g));
  return {{keys::alert_group_page::kGroups, std::move(groups)},
          {keys::alert_group_page::kNextCursor, OrNull<ordered_json>(page.next_cursor)}};
}

nlohmann::json EncodeChangePoints(const ChangePoints& c) {
  using nlohmann::json;
  json steps = json::array();
  for (const ChangePoint& p : c.change_points) {
    steps.push_back({{keys::change_point::kIndex, p.index},
                     {keys::change_point::kMagnitude, p.magnitude},
                     {keys::change_point::kPValue, p.p_value},
                     {keys::change_point::kLevelBefore, p.level_before},
                     {keys::change_point::kLevelAfter, p.level_after},
                     {keys::change_point::kDetectors, p.detectors},
                     {keys::change_point::kKind, p.kind},
                     {keys::change_point::kEnvironmentChange, p.environment_change},
                     {keys::change_point::kLastGood, CommitJson<json>(p.last_good)},
                     {keys::change_point::kFirstBad, CommitJson<json>(p.first_bad)}});
  }
  return {{keys::change_points::kSeries, SeriesJson<json>(c.series)},
          {keys::change_points::kPoints, c.points},
          {keys::change_points::kBaselineFrom, c.baseline_from},
          {keys::change_points::kParameters, json(c.parameters)},
          {keys::change_points::kChangePoints, std::move(steps)}};
}

}  // namespace perfwarden::wire
