// SPDX-License-Identifier: Apache-2.0
// The key names of the alert messages (docs/api.md, "Alerts"; docs/openapi.yaml's Alert,
// AlertDetail, AlertPage, AlertSummary, AlertUpdate, ChangePoints), kept in one place for the
// encoders (wire/alert.cc) and the decoders (wire/alert_decode.cc), so that a renamed key
// changes both at once.
#pragma once

#include <string_view>

namespace perfwarden::wire::keys {

// An alert (GET .../alerts's elements, the PATCH answer, the webhook's "alerts").
namespace alert {
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kProject = "project";
inline constexpr std::string_view kSeries = "series";
inline constexpr std::string_view kKind = "kind";
inline constexpr std::string_view kCause = "cause";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kPosition = "position";
inline constexpr std::string_view kRange = "range";
inline constexpr std::string_view kGroup = "group";
inline constexpr std::string_view kGroupId = "group_id";
inline constexpr std::string_view kMagnitude = "magnitude";
inline constexpr std::string_view kCi = "ci";
inline constexpr std::string_view kConfidence = "confidence";
inline constexpr std::string_view kPValue = "p_value";
inline constexpr std::string_view kQValue = "q_value";
inline constexpr std::string_view kLevelBefore = "level_before";
inline constexpr std::string_view kLevelAfter = "level_after";
inline constexpr std::string_view kDetectors = "detectors";
inline constexpr std::string_view kEnvironmentChange = "environment_change";
inline constexpr std::string_view kParameters = "parameters";
inline constexpr std::string_view kNote = "note";
inline constexpr std::string_view kStateChangedBy = "state_changed_by";
inline constexpr std::string_view kStateChangedAt = "state_changed_at";
inline constexpr std::string_view kCreatedAt = "created_at";
inline constexpr std::string_view kCreep = "creep";  // with kind "creep" only
// GET .../alerts/{id} adds these.
inline constexpr std::string_view kExcerpt = "excerpt";
inline constexpr std::string_view kHistory = "history";
inline constexpr std::string_view kBisects = "bisects";
}  // namespace alert

// A creep alert's "creep": its range of positions and its slope per point (relative) with the
// slope's confidence interval.
namespace creep {
inline constexpr std::string_view kStart = "start";
inline constexpr std::string_view kEnd = "end";
inline constexpr std::string_view kSlope = "slope";
inline constexpr std::string_view kSlopeLow = "slope_low";
inline constexpr std::string_view kSlopeHigh = "slope_high";
}  // namespace creep

// The series of an alert or of the change points (HistorySeries).
namespace series {
inline constexpr std::string_view kBranch = "branch";
inline constexpr std::string_view kTestbed = "testbed";
inline constexpr std::string_view kSuite = "suite";
inline constexpr std::string_view kBenchmark = "benchmark";
inline constexpr std::string_view kMetric = "metric";
inline constexpr std::string_view kUnit = "unit";
inline constexpr std::string_view kDirection = "direction";
}  // namespace series

// An alert's "range" and the change points' ends.
namespace range {
inline constexpr std::string_view kLastGood = "last_good";
inline constexpr std::string_view kFirstBad = "first_bad";
}  // namespace range

// A commit (CommitRef); an excerpt point carries the same keys.
namespace commit {
inline constexpr std::string_view kSha = "sha";
inline constexpr std::string_view kSubject = "subject";
inline constexpr std::string_view kAuthor = "author";
inline constexpr std::string_view kTime = "time";
inline constexpr std::string_view kRunId = "run_id";
}  // namespace commit

namespace environment_change {
inline constexpr std::string_view kAfter = "after";
inline constexpr std::string_view kBefore = "before";
inline constexpr std::string_view kChanged = "changed";
}  // namespace environment_change

// One element of an alert's "excerpt", after the commit's keys.
namespace excerpt {
inline constexpr std::string_view kPosition = "position";
inline constexpr std::string_view kLevel = "level";
inline constexpr std::string_view kValues = "values";
inline constexpr std::string_view kFirstBad = "first_bad";
inline constexpr std::string_view kTestbedFingerprintChanged = "testbed_fingerprint_changed";
}  // namespace excerpt

// One element of an alert's triage "history".
namespace event {
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kNote = "note";
inline constexpr std::string_view kBy = "by";
inline constexpr std::string_view kAt = "at";
}  // namespace event

// One element of an alert's "bisects".
namespace alert_bisect {
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kCulprit = "culprit";
inline constexpr std::string_view kGood = "good";
inline constexpr std::string_view kBad = "bad";
inline constexpr std::string_view kCreatedBy = "created_by";
inline constexpr std::string_view kCreatedAt = "created_at";
}  // namespace alert_bisect

// GET .../alerts.
namespace alert_page {
inline constexpr std::string_view kAlerts = "alerts";
inline constexpr std::string_view kNextCursor = "next_cursor";
}  // namespace alert_page

// GET .../alert-summary, and the names of its counts.
namespace alert_summary {
inline constexpr std::string_view kTotal = "total";
inline constexpr std::string_view kByState = "by_state";
inline constexpr std::string_view kByKind = "by_kind";
inline constexpr std::string_view kByCause = "by_cause";
inline constexpr std::string_view kTriagedRegressions = "triaged_regressions";
inline constexpr std::string_view kFalsePositiveRate = "false_positive_rate";
inline constexpr std::string_view kOpen = "open";
inline constexpr std::string_view kAcknowledged = "acknowledged";
inline constexpr std::string_view kFalsePositive = "false_positive";
inline constexpr std::string_view kResolved = "resolved";
inline constexpr std::string_view kWentAway = "went_away";
inline constexpr std::string_view kRegression = "regression";
inline constexpr std::string_view kImprovement = "improvement";
inline constexpr std::string_view kCreep = "creep";
inline constexpr std::string_view kCode = "code";
inline constexpr std::string_view kEnvironment = "environment";
}  // namespace alert_summary

// PATCH .../alerts/{id}'s body.
namespace alert_update {
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kNote = "note";
}  // namespace alert_update

// An alert group (GET .../alert-groups's elements); GET|PATCH .../alert-groups/{id} add
// "members" and "bisects".
namespace alert_group {
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kProject = "project";
inline constexpr std::string_view kBranch = "branch";
inline constexpr std::string_view kRange = "range";
inline constexpr std::string_view kState = "state";
inline constexpr std::string_view kStates = "states";
inline constexpr std::string_view kMemberCount = "member_count";
inline constexpr std::string_view kMembers = "members";
inline constexpr std::string_view kMostSignificant = "most_significant";
inline constexpr std::string_view kBisectId = "bisect_id";
inline constexpr std::string_view kCreatedAt = "created_at";
inline constexpr std::string_view kBisects = "bisects";
}  // namespace alert_group

// GET .../alert-groups.
namespace alert_group_page {
inline constexpr std::string_view kGroups = "groups";
inline constexpr std::string_view kNextCursor = "next_cursor";
}  // namespace alert_group_page

// GET .../change-points.
namespace change_points {
inline constexpr std::string_view kSeries = "series";
inline constexpr std::string_view kPoints = "points";
inline constexpr std::string_view kBaselineFrom = "baseline_from";
inline constexpr std::string_view kParameters = "parameters";
inline constexpr std::string_view kChangePoints = "change_points";
}  // namespace change_points

// One element of "change_points".
namespace change_point {
inline constexpr std::string_view kIndex = "index";
inline constexpr std::string_view kMagnitude = "magnitude";
inline constexpr std::string_view kPValue = "p_value";
inline constexpr std::string_view kLevelBefore = "level_before";
inline constexpr std::string_view kLevelAfter = "level_after";
inline constexpr std::string_view kDetectors = "detectors";
inline constexpr std::string_view kKind = "kind";
inline constexpr std::string_view kEnvironmentChange = "environment_change";
inline constexpr std::string_view kLastGood = "last_good";
inline constexpr std::string_view kFirstBad = "first_bad";
}  // namespace change_point

}  // namespace perfwarden::wire::keys
