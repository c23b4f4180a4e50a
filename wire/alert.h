// SPDX-License-Identifier: Apache-2.0
// The alert messages of tracked branches' history (docs/api.md, "Alerts and change points") as
// typed values: an alert (GET .../alerts's elements, the PATCH answer, the webhook's alerts), one
// alert with its series excerpt, triage history and bisects (GET .../alerts/{id}), a page of
// alerts, the counts of GET .../alert-summary, the PATCH body, and the change points of a whole
// series (GET .../change-points). The server maps its records to them and encodes; the runner
// (`perfwarden alerts`, `perfwarden bisect --alert`) decodes and renders.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "wire/verdict.h"  // Interval

namespace perfwarden::wire {

// The series of a tracked branch an alert or change point belongs to: its identity on a branch
// and testbed, and what its values are.
struct HistorySeries {
  std::string branch;
  std::string testbed;  // the testbed's name: the series spans its fingerprints
  SeriesKey key;        // suite, benchmark, metric
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;

  bool operator==(const HistorySeries&) const = default;
};

// A commit of the series (an end of a step's range). time and run_id are null on the wire when
// the server does not know them.
struct CommitRef {
  std::string sha;
  std::string subject;
  std::string author;
  std::optional<std::string> time;  // RFC 3339
  std::optional<std::string> run_id;

  bool operator==(const CommitRef&) const = default;
};

// The last point before a step and the first after it. A decoder leaves last_good empty (sha "")
// when the answer has none: nothing to bisect from.
struct AlertRange {
  CommitRef last_good;
  CommitRef first_bad;

  bool operator==(const AlertRange&) const = default;
};

// An environment step: the testbed's fingerprints (free-form objects, as the server stored them)
// on either side, and the names of the fingerprint's fields that differ.
struct EnvironmentChange {
  nlohmann::ordered_json before = nlohmann::ordered_json::object();
  nlohmann::ordered_json after = nlohmann::ordered_json::object();
  std::vector<std::string> changed;

  bool operator==(const EnvironmentChange&) const = default;
};

// A creep alert's drift (stats/creep.h): positions [start, end] of the series (start is the
// alert's position), the relative change per point (Theil-Sen) and its confidence interval at the
// alert's confidence (Sen's).
struct AlertCreep {
  int64_t start = 0;
  int64_t end = 0;
  double slope = 0;
  double slope_low = 0;
  double slope_high = 0;

  bool operator==(const AlertCreep&) const = default;
};

// A step the history analysis found and kept: a regression or an improvement of a series,
// triaged by people. kind, cause and state are kept as text, so that a newer server's word
// still renders: kind "regression"/"improvement", cause "code"/"environment" (the testbed's
// fingerprint changed at the step), state "open"/"acknowledged"/"false_positive"/"resolved".
struct Alert {
  int64_t id = 0;
  std::string project;
  HistorySeries series;
  std::string kind;
  std::string cause;
  std::string state;
  int64_t position = 0;  // the first bad point's position in the series
  AlertRange range;
  std::string group;           // "<last_good sha[:12]>..<first_bad sha[:12]>": its own range
  int64_t group_id = 0;        // the alert group it belongs to; 0 (null on the wire): none
  double magnitude = 0;        // level_after / level_before - 1
  std::optional<Interval> ci;  // of the magnitude; absent when it could not be computed
  double confidence = 0.95;    // the interval's confidence level
  double p_value = 1;
  double q_value = 1;  // Benjamini-Hochberg across the series the run measured
  double level_before = 0;
  double level_after = 0;
  std::vector<std::string> detectors;  // "e-divisive", "ewma", "cusum"
  std::optional<EnvironmentChange> environment_change;
  // The history analysis' parameters when the alert was raised (free-form, as stored).
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
  std::string note;
  std::optional<std::string> state_changed_by;  // absent until someone triaged it
  std::optional<std::string> state_changed_at;
  std::string created_at;
  // Kind "creep" (a drift beyond the threshold with no step beyond it): magnitude is its total
  // change, level_before/level_after the levels at its ends, p_value the Mann-Kendall test's.
  std::optional<AlertCreep> creep;

  bool operator==(const Alert&) const = default;
};

// A point of the series around the step.
struct ExcerptPoint {
  int64_t position = 0;
  CommitRef commit;
  double level = 0;
  std::vector<double> values;  // the repetitions
  bool first_bad = false;
  bool testbed_fingerprint_changed = false;  // since the point before

  bool operator==(const ExcerptPoint&) const = default;
};

// A triage step: the state set, why, by whom, when.
struct AlertEvent {
  std::string state;
  std::string note;
  std::string by;
  std::string at;

  bool operator==(const AlertEvent&) const = default;
};

// A bisect posted for the alert, without its report (GET .../bisects/{id} has it).
struct AlertBisect {
  int64_t id = 0;
  std::string state;
  std::optional<std::string> culprit;  // the first culprit's sha
  std::string good;
  std::string bad;
  std::string created_by;
  std::string created_at;

  bool operator==(const AlertBisect&) const = default;
};

struct AlertDetail {
  Alert alert;
  std::vector<ExcerptPoint> excerpt;  // oldest first
  std::vector<AlertEvent> history;    // oldest first
  std::vector<AlertBisect> bisects;   // newest first

  bool operator==(const AlertDetail&) const = default;
};

// A page of GET .../alerts: newest first; next_cursor fetches the next page, absent on the last.
struct AlertPage {
  std::vector<Alert> alerts;
  std::optional<std::string> next_cursor;

  bool operator==(const AlertPage&) const = default;
};

// GET .../alert-summary: alerts counted by state, kind and cause, and how triage went for
// regressions with a code cause.
struct AlertSummary {
  struct ByState {
    int64_t open = 0;
    int64_t acknowledged = 0;
    int64_t false_positive = 0;
    int64_t resolved = 0;
    int64_t went_away = 0;
    bool operator==(const ByState&) const = default;
  };
  struct ByKind {
    int64_t regression = 0;
    int64_t improvement = 0;
    int64_t creep = 0;
    bool operator==(const ByKind&) const = default;
  };
  struct ByCause {
    int64_t code = 0;
    int64_t environment = 0;
    bool operator==(const ByCause&) const = default;
  };
  int64_t total = 0;
  ByState by_state;
  ByKind by_kind;
  ByCause by_cause;
  int64_t triaged_regressions = 0;            // no longer open
  std::optional<double> false_positive_rate;  // of the triaged ones; absent when none was

  bool operator==(const AlertSummary&) const = default;
};

// PATCH .../alerts/{id}: a new state, a note, or both.
struct AlertUpdate {
  std::optional<std::string> state;
  std::optional<std::string> note;

  bool operator==(const AlertUpdate&) const = default;
};

// One step of GET .../change-points.
struct ChangePoint {
  int64_t index = 0;  // of the first bad point in the series
  double magnitude = 0;
  double p_value = 1;
  double level_before = 0;
  double level_after = 0;
  std::vector<std::string> detectors;
  std::string kind;                 // "regression" or "improvement"
  bool environment_change = false;  // the testbed's fingerprint changed at the step
  CommitRef last_good;
  CommitRef first_bad;

  bool operator==(const ChangePoint&) const = default;
};

// GET .../change-points: the analysis of a whole stored series, computed on demand.
struct ChangePoints {
  HistorySeries series;
  int64_t points = 0;  // the series' length
  int64_t baseline_from = 0;
  nlohmann::ordered_json parameters = nlohmann::ordered_json::object();  // the analysis'
  std::vector<ChangePoint> change_points;                                // oldest first

  bool operator==(const ChangePoints&) const = default;
};

// Alerts of one branch whose commit ranges overlap, with their narrowest common range
// (docs/history.md, "Alert groups"). state is "open" while a member is, "closed" after; states
// counts the members by state (every alert state, zeros included).
struct AlertGroup {
  int64_t id = 0;
  std::string project;
  std::string branch;
  AlertRange range;  // the commits' run_id is null
  std::string state;
  std::vector<std::pair<std::string, int64_t>> states;  // in kAlertStates' order
  int64_t members = 0;
  int64_t most_significant = 0;      // the member a bisect is for
  std::optional<int64_t> bisect_id;  // the group's bisect (not failed or cancelled)
  std::string created_at;
  bool operator==(const AlertGroup&) const = default;
};

// GET|PATCH .../alert-groups/{id}: the group's keys, then its members (most significant first)
// and bisects (newest first).
struct AlertGroupDetail {
  AlertGroup group;
  std::vector<Alert> members;
  std::vector<AlertBisect> bisects;
  bool operator==(const AlertGroupDetail&) const = default;
};

struct AlertGroupPage {
  std::vector<AlertGroup> groups;  // newest first
  std::optional<std::string> next_cursor;
  bool operator==(const AlertGroupPage&) const = default;
};

// The states an alert can be set to (AlertUpdate.state), in the order messages list them.
// went_away: the history worker closed it when its series came back (or someone said so).
inline constexpr std::string_view kAlertStates[] = {"open", "acknowledged", "false_positive",
                                                    "resolved", "went_away"};
bool IsAlertState(std::string_view state);

// Encoders: the keys in the order the server writes them, absent optionals as null (an
// AlertUpdate writes only the keys it has); a non-finite number is written as null, as
// nlohmann writes it.
nlohmann::ordered_json EncodeAlert(const Alert& alert);
// The alert's keys, then "excerpt", "history" and "bisects".
nlohmann::ordered_json EncodeAlertDetail(const AlertDetail& detail);
nlohmann::ordered_json EncodeAlertPage(const AlertPage& page);
nlohmann::ordered_json EncodeAlertSummary(const AlertSummary& summary);
nlohmann::ordered_json EncodeAlertUpdate(const AlertUpdate& update);
nlohmann::ordered_json EncodeAlertGroup(const AlertGroup& group);
nlohmann::ordered_json EncodeAlertGroupDetail(const AlertGroupDetail& detail);
nlohmann::ordered_json EncodeAlertGroupPage(const AlertGroupPage& page);
// Keys in byte order at every level (nlohmann::json), as the change-points route writes them.
nlohmann::json EncodeChangePoints(const ChangePoints& change_points);

// Decoders of the server's answers. Unknown keys are ignored (a newer server must not break an
// older runner) and an absent or null key takes its default; a key that is present must have its
// type. Required: an alert's id, kind, state, series (benchmark and metric) and magnitude, a page's
// "alerts", a summary's "total", the change points' series and "change_points". Errors are
// kInvalidArgument with `field` naming the key ("alerts[2].series.metric").
Result<Alert> DecodeAlert(std::string_view json);
Result<AlertDetail> DecodeAlertDetail(std::string_view json);
Result<AlertPage> DecodeAlertPage(std::string_view json);
Result<AlertSummary> DecodeAlertSummary(std::string_view json);
Result<ChangePoints> DecodeChangePoints(std::string_view json);
// Required: a group's id and state, a detail's members, a page's "groups".
Result<AlertGroupDetail> DecodeAlertGroupDetail(std::string_view json);
Result<AlertGroupPage> DecodeAlertGroupPage(std::string_view json);

// The PATCH body as the server reads it (an object already parsed by its strict reader): only
// "state" (one of kAlertStates) and "note" (a string of at most 4096 bytes), at least one of
// them; anything else is kInvalidArgument naming the key.
Result<AlertUpdate> DecodeAlertUpdate(const nlohmann::json& body);

}  // namespace perfwarden::wire
