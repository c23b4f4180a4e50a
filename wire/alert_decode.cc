// SPDX-License-Identifier: Apache-2.0
// Decoding the alert messages: the server's answers (read as nlohmann::ordered_json, so that the
// free-form objects, an alert's parameters and fingerprints, keep the order the server wrote)
// through wire/json_reader.h, and the PATCH body the server accepts.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "wire/alert.h"
#include "wire/alert_keys.h"
#include "wire/json_reader.h"

namespace perfwarden::wire {
namespace {

using nlohmann::ordered_json;
using Reader = JsonReader<ordered_json>;

HistorySeries ReadSeries(Reader& reader, const ordered_json& object, const std::string& path) {
  HistorySeries s;
  s.branch = reader.String(object, keys::series::kBranch, path);
  s.testbed = reader.String(object, keys::series::kTestbed, path);
  s.key.suite = reader.String(object, keys::series::kSuite, path);
  s.key.benchmark = reader.String(object, keys::series::kBenchmark, path, /*required=*/true);
  s.key.metric = reader.String(object, keys::series::kMetric, path, /*required=*/true);
  s.unit = reader.String(object, keys::series::kUnit, path);
  s.direction = reader.Direction(object, keys::series::kDirection, path);
  return s;
}

HistorySeries ReadSeriesMember(Reader& reader, const ordered_json& object, std::string_view key,
                               const std::string& path) {
  const ordered_json* series = reader.Object(object, key, path, /*required=*/true);
  if (series == nullptr) return {};
  return ReadSeries(reader, *series, FieldPath(path, key));
}

// The commit's keys of `object` (a commit, or an excerpt point that carries them).
CommitRef ReadCommitKeys(Reader& reader, const ordered_json& object, const std::string& path) {
  CommitRef c;
  c.sha = reader.String(object, keys::commit::kSha, path);
  c.subject = reader.String(object, keys::commit::kSubject, path);
  c.author = reader.String(object, keys::commit::kAuthor, path);
  c.time = reader.OptString(object, keys::commit::kTime, path);
  c.run_id = reader.OptString(object, keys::commit::kRunId, path);
  return c;
}

CommitRef ReadCommit(Reader& reader, const ordered_json& object, std::string_view key,
                     const std::string& path) {
  const ordered_json* commit = reader.Object(object, key, path);
  if (commit == nullptr) return {};
  return ReadCommitKeys(reader, *commit, FieldPath(path, key));
}

// A free-form object member; an empty object when absent or null.
ordered_json ReadFreeObject(Reader& reader, const ordered_json& object, std::string_view key,
                            const std::string& path) {
  return reader.OptObject(object, key, path).value_or(ordered_json::object());
}

std::optional<Interval> ReadInterval(Reader& reader, const ordered_json& object,
                                     std::string_view key, const std::string& path) {
  const ordered_json* ci = reader.Array(object, key, path);
  if (ci == nullptr) return std::nullopt;
  const std::string at = FieldPath(path, key);
  if (ci->size() != 2) {
    reader.Fail(at, "expected [lower, upper], got " + std::to_string(ci->size()) + " elements");
    return std::nullopt;
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!reader.Expect((*ci)[i], (*ci)[i].is_number(), "a number", ElementPath(at, i))) {
      return std::nullopt;
    }
  }
  return Interval{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
}

std::optional<EnvironmentChange> ReadEnvironmentChange(Reader& reader, const ordered_json& object,
                                                       const std::string& path) {
  const ordered_json* change = reader.Object(object, keys::alert::kEnvironmentChange, path);
  if (change == nullptr) return std::nullopt;
  const std::string at = FieldPath(path, keys::alert::kEnvironmentChange);
  EnvironmentChange e;
  e.before = ReadFreeObject(reader, *change, keys::environment_change::kBefore, at);
  e.after = ReadFreeObject(reader, *change, keys::environment_change::kAfter, at);
  e.changed = reader.Strings(*change, keys::environment_change::kChanged, at);
  return e;
}

Alert ReadAlert(Reader& reader, const ordered_json& object, const std::string& path) {
  Alert a;
  a.id = reader.Integer(object, keys::alert::kId, path, 1, /*required=*/true).value_or(0);
  a.project = reader.String(object, keys::alert::kProject, path);
  a.series = ReadSeriesMember(reader, object, keys::alert::kSeries, path);
  a.kind = reader.String(object, keys::alert::kKind, path, /*required=*/true);
  a.cause = reader.String(object, keys::alert::kCause, path);
  a.state = reader.String(object, keys::alert::kState, path, /*required=*/true);
  a.position = reader.Integer(object, keys::alert::kPosition, path, 0).value_or(0);
  if (const ordered_json* range = reader.Object(object, keys::alert::kRange, path)) {
    const std::string at = FieldPath(path, keys::alert::kRange);
    a.range.last_good = ReadCommit(reader, *range, keys::range::kLastGood, at);
    a.range.first_bad = ReadCommit(reader, *range, keys::range::kFirstBad, at);
  }
  a.group = reader.String(object, keys::alert::kGroup, path);
  a.group_id = reader.Integer(object, keys::alert::kGroupId, path, 1).value_or(0);
  a.magnitude = reader.Number(object, keys::alert::kMagnitude, path, /*required=*/true).value_or(0);
  a.ci = ReadInterval(reader, object, keys::alert::kCi, path);
  a.confidence = reader.Number(object, keys::alert::kConfidence, path).value_or(a.confidence);
  a.p_value = reader.Number(object, keys::alert::kPValue, path).value_or(a.p_value);
  a.q_value = reader.Number(object, keys::alert::kQValue, path).value_or(a.q_value);
  a.level_before = reader.Number(object, keys::alert::kLevelBefore, path).value_or(0);
  a.level_after = reader.Number(object, keys::alert::kLevelAfter, path).value_or(0);
  a.detectors = reader.Strings(object, keys::alert::kDetectors, path);
  a.environment_change = ReadEnvironmentChange(reader, object, path);
  a.parameters = ReadFreeObject(reader, object, keys::alert::kParameters, path);
  a.note = reader.String(object, keys::alert::kNote, path);
  a.state_changed_by = reader.OptString(object, keys::alert::kStateChangedBy, path);
  a.state_changed_at = reader.OptString(object, keys::alert::kStateChangedAt, path);
  a.created_at = reader.String(object, keys::alert::kCreatedAt, path);
  if (const ordered_json* creep = reader.Object(object, keys::alert::kCreep, path)) {
    const std::string at = FieldPath(path, keys::alert::kCreep);
    AlertCreep c;
    c.start = reader.Integer(*creep, keys::creep::kStart, at, 0, /*required=*/true).value_or(0);
    c.end = reader.Integer(*creep, keys::creep::kEnd, at, 0, /*required=*/true).value_or(0);
    c.slope = reader.Number(*creep, keys::creep::kSlope, at, /*required=*/true).value_or(0);
    c.slope_low = reader.Number(*creep, keys::creep::kSlopeLow, at).value_or(c.slope);
    c.slope_high = reader.Number(*creep, keys::creep::kSlopeHigh, at).value_or(c.slope);
    a.creep = c;
  }
  return a;
}

ExcerptPoint ReadPoint(Reader& reader, const ordered_json& object, const std::string& path) {
  ExcerptPoint p;
  p.position = reader.Integer(object, keys::excerpt::kPosition, path, 0).value_or(0);
  p.commit = ReadCommitKeys(reader, object, path);
  p.level = reader.Number(object, keys::excerpt::kLevel, path).value_or(0);
  p.values = reader.Numbers(object, keys::excerpt::kValues, path);
  p.first_bad = reader.Bool(object, keys::excerpt::kFirstBad, path).value_or(false);
  p.testbed_fingerprint_changed =
      reader.Bool(object, keys::excerpt::kTestbedFingerprintChanged, path).value_or(false);
  return p;
}

AlertBisect ReadBisect(Reader& reader, const ordered_json& object, const std::string& path) {
  AlertBisect b;
  b.id = reader.Integer(object, keys::alert_bisect::kId, path, 1, /*required=*/true).value_or(0);
  b.state = reader.String(object, keys::alert_bisect::kState, path);
  b.culprit = reader.OptString(object, keys::alert_bisect::kCulprit, path);
  b.good = reader.String(object, keys::alert_bisect::kGood, path);
  b.bad = reader.String(object, keys::alert_bisect::kBad, path);
  b.created_by = reader.String(object, keys::alert_bisect::kCreatedBy, path);
  b.created_at = reader.String(object, keys::alert_bisect::kCreatedAt, path);
  return b;
}

AlertDetail ReadDetail(Reader& reader, const ordered_json& object, const std::string& path) {
  AlertDetail d;
  d.alert = ReadAlert(reader, object, path);
  reader.ForEachObject(object, keys::alert::kExcerpt, path, false,
                       [&](const ordered_json& item, const std::string& at) {
                         d.excerpt.push_back(ReadPoint(reader, item, at));
                       });
  reader.ForEachObject(object, keys::alert::kHistory, path, false,
                       [&](const ordered_json& item, const std::string& at) {
                         d.history.push_back({reader.String(item, keys::event::kState, at),
                                              reader.String(item, keys::event::kNote, at),
                                              reader.String(item, keys::event::kBy, at),
                                              reader.String(item, keys::event::kAt, at)});
                       });
  reader.ForEachObject(object, keys::alert::kBisects, path, false,
                       [&](const ordered_json& item, const std::string& at) {
                         d.bisects.push_back(ReadBisect(reader, item, at));
                       });
  return d;
}

AlertPage ReadPage(Reader& reader, const ordered_json& object, const std::string& path) {
  AlertPage page;
  reader.ForEachObject(object, keys::alert_page::kAlerts, path, /*required=*/true,
                       [&](const ordered_json& item, const std::string& at) {
                         page.alerts.push_back(ReadAlert(reader, item, at));
                       });
  page.next_cursor = reader.OptString(object, keys::alert_page::kNextCursor, path);
  return page;
}

AlertSummary ReadSummary(Reader& reader, const ordered_json& object, const std::string& path) {
  namespace k = keys::alert_summary;
  AlertSummary s;
  auto count = [&](const ordered_json& in, std::string_view key, const std::string& at) {
    return reader.Integer(in, key, at, 0).value_or(0);
  };
  s.total = reader.Integer(object, k::kTotal, path, 0, /*required=*/true).value_or(0);
  if (const ordered_json* by = reader.Object(object, k::kByState, path)) {
    const std::string at = FieldPath(path, k::kByState);
    s.by_state = {count(*by, k::kOpen, at), count(*by, k::kAcknowledged, at),
                  count(*by, k::kFalsePositive, at), count(*by, k::kResolved, at),
                  count(*by, k::kWentAway, at)};
  }
  if (const ordered_json* by = reader.Object(object, k::kByKind, path)) {
    const std::string at = FieldPath(path, k::kByKind);
    s.by_kind = {count(*by, k::kRegression, at), count(*by, k::kImprovement, at),
                 count(*by, k::kCreep, at)};
  }
  if (const ordered_json* by = reader.Object(object, k::kByCause, path)) {
    const std::string at = FieldPath(path, k::kByCause);
    s.by_cause = {count(*by, k::kCode, at), count(*by, k::kEnvironment, at)};
  }
  s.triaged_regressions = count(object, k::kTriagedRegressions, path);
  s.false_positive_rate = reader.Number(object, k::kFalsePositiveRate, path);
  return s;
}

ChangePoint ReadChangePoint(Reader& reader, const ordered_json& object, const std::string& path) {
  namespace k = keys::change_point;
  ChangePoint p;
  p.index = reader.Integer(object, k::kIndex, path, 0).value_or(0);
  p.magnitude = reader.Number(object, k::kMagnitude, path).value_or(0);
  p.p_value = reader.Number(object, k::kPValue, path).value_or(p.p_value);
  p.level_before = reader.Number(object, k::kLevelBefore, path).value_or(0);
  p.level_after = reader.Number(object, k::kLevelAfter, path).value_or(0);
  p.detectors = reader.Strings(object, k::kDetectors, path);
  p.kind = reader.String(object, k::kKind, path);
  p.environment_change = reader.Bool(object, k::kEnvironmentChange, path).value_or(false);
  p.last_good = ReadCommit(reader, object, k::kLastGood, path);
  p.first_bad = ReadCommit(reader, object, k::kFirstBad, path);
  return p;
}

ChangePoints ReadChangePoints(Reader& reader, const ordered_json& object, const std::string& path) {
  namespace k = keys::change_points;
  ChangePoints c;
  c.series = ReadSeriesMember(reader, object, k::kSeries, path);
  c.points = reader.Integer(object, k::kPoints, path, 0).value_or(0);
  c.baseline_from = reader.Integer(object, k::kBaselineFrom, path, 0).value_or(0);
  c.parameters = ReadFreeObject(reader, object, k::kParameters, path);
  reader.ForEachObject(object, k::kChangePoints, path, /*required=*/true,
                       [&](const ordered_json& item, const std::string& at) {
                         c.change_points.push_back(ReadChangePoint(reader, item, at));
                       });
  return c;
}

AlertGroup ReadGroup(Reader& reader, const ordered_json& object, const std::string& path) {
  namespace k = keys::alert_group;
  AlertGroup g;
  g.id = reader.Integer(object, k::kId, path, 1, /*required=*/true).value_or(0);
  g.project = reader.String(object, k::kProject, path);
  g.branch = reader.String(object, k::kBranch, path);
  if (const ordered_json* range = reader.Object(object, k::kRange, path)) {
    const std::string at = FieldPath(path, k::kRange);
    g.range.last_good = ReadCommit(reader, *range, keys::range::kLastGood, at);
    g.range.first_bad = ReadCommit(reader, *range, keys::range::kFirstBad, at);
  }
  g.state = reader.String(object, k::kState, path, /*required=*/true);
  if (const ordered_json* states = reader.Object(object, k::kStates, path)) {
    const std::string at = FieldPath(path, k::kStates);
    for (const auto& [state, count] : states->items()) {
      if (!reader.Expect(count, count.is_number_integer(), "an integer", FieldPath(at, state))) {
        continue;
      }
      g.states.emplace_back(state, count.get<int64_t>());
    }
  }
  g.members = reader.Integer(object, k::kMemberCount, path, 0).value_or(0);
  g.most_significant = reader.Integer(object, k::kMostSignificant, path, 0).value_or(0);
  g.bisect_id = reader.Integer(object, k::kBisectId, path, 1);
  g.created_at = reader.String(object, k::kCreatedAt, path);
  return g;
}

AlertGroupDetail ReadGroupDetail(Reader& reader, const ordered_json& object,
                                 const std::string& path) {
  AlertGroupDetail d;
  d.group = ReadGroup(reader, object, path);
  reader.ForEachObject(object, keys::alert_group::kMembers, path, /*required=*/true,
                       [&](const ordered_json& item, const std::string& at) {
                         d.members.push_back(ReadAlert(reader, item, at));
                       });
  reader.ForEachObject(object, keys::alert_group::kBisects, path, false,
                       [&](const ordered_json& item, const std::string& at) {
                         d.bisects.push_back(ReadBisect(reader, item, at));
                       });
  return d;
}

AlertGroupPage ReadGroupPage(Reader& reader, const ordered_json& object, const std::string& path) {
  AlertGroupPage page;
  reader.ForEachObject(object, keys::alert_group_page::kGroups, path, /*required=*/true,
                       [&](const ordered_json& item, const std::string& at) {
                         page.groups.push_back(ReadGroup(reader, item, at));
                       });
  page.next_cursor = reader.OptString(object, keys::alert_group_page::kNextCursor, path);
  return page;
}

// Parses `text` (`what` names it in a syntax error), checks that it is an object and reads it.
template <class T, class Read>
Result<T> Decode(std::string_view text, std::string_view what, Read read) {
  auto document = ParseJsonDocument<ordered_json>(text, what);
  if (!document) return tl::unexpected(document.error());
  return ReadDocument<T>(*document, /*envelope=*/"", read);
}

}  // namespace

Result<Alert> DecodeAlert(std::string_view json) { return Decode<Alert>(json, "alert", ReadAlert); }

Result<AlertDetail> DecodeAlertDetail(std::string_view json) {
  return Decode<AlertDetail>(json, "alert", ReadDetail);
}

Result<AlertPage> DecodeAlertPage(std::string_view json) {
  return Decode<AlertPage>(json, "alert page", ReadPage);
}

Result<AlertSummary> DecodeAlertSummary(std::string_view json) {
  return Decode<AlertSummary>(json, "alert summary", ReadSummary);
}

Result<ChangePoints> DecodeChangePoints(std::string_view json) {
  return Decode<ChangePoints>(json, "change points", ReadChangePoints);
}

Result<AlertGroupDetail> DecodeAlertGroupDetail(std::string_view json) {
  return Decode<AlertGroupDetail>(json, "alert group", ReadGroupDetail);
}

Result<AlertGroupPage> DecodeAlertGroupPage(std::string_view json) {
  return Decode<AlertGroupPage>(json, "alert group page", ReadGroupPage);
}

Result<AlertUpdate> DecodeAlertUpdate(const nlohmann::json& body) {
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  AlertUpdate update;
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (it.key() == keys::alert_update::kState) {
      if (!it->is_string()) return InvalidArgument("must be a string", it.key());
      std::string state = it->get<std::string>();
      if (!IsAlertState(state)) {
        return InvalidArgument(
            "must be open, acknowledged, false_positive, resolved or went_away, got \"" + state +
                "\"",
            it.key());
      }
      update.state = std::move(state);
    } else if (it.key() == keys::alert_update::kNote) {
      if (!it->is_string()) return InvalidArgument("must be a string", it.key());
      std::string note = it->get<std::string>();
      if (note.size() > 4096) return InvalidArgument("longer than 4096 bytes", it.key());
      update.note = std::move(note);
    } else {
      return InvalidArgument("unknown field (expected state, note)", it.key());
    }
  }
  if (!update.state && !update.note) {
    return InvalidArgument("give a state, a note or both", std::string(keys::alert_update::kState));
  }
  return update;
}

}  // namespace perfwarden::wire
