// SPDX-License-Identifier: Apache-2.0
// What the history analysis and the alerts API need from persistence: a unit of work per run
// taken into a tracked branch's history (claimed, its points appended and the touched series
// loaded; the analysis' results applied and committed, all in one transaction), and alerts with
// their triage.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "server/store/store.h"

namespace perfwarden::store {

// A series of a tracked branch on a testbed: the series' identity where it was measured.
struct HistorySeriesKey {
  int64_t id = 0;
  std::string branch;
  std::string testbed;  // name: the series spans the testbed's fingerprints
  SeriesKey key;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
};

// An open alert as a refresh needs it: where it is and the significance stored with it.
struct OpenAlertRecord {
  int64_t position = 0;
  double p_value = 1;
  double q_value = 1;
  double level_before = 0;  // what a step that went away comes back to
  double level_after = 0;
};

// A series as the analysis sees it (server/history AnalyseSeries): points [baseline_from,
// length), the persisted states of its detectors, and its alerts.
struct HistorySeriesData {
  HistorySeriesKey key;
  int64_t length = 0;
  int64_t baseline_from = 0;                 // absolute position of levels[0]
  std::string detector_state_json;           // "" when it must be recomputed
  std::string monitor_state_json;            // "{}" when fresh
  std::vector<double> levels;                // per-commit medians from baseline_from on
  std::vector<int64_t> testbed_ids;          // the fingerprint that measured each point
  std::vector<int64_t> alerted_positions;    // positions of this series' alerts, any state
  std::vector<OpenAlertRecord> open_alerts;  // those of them still open, by position
};

struct HistoryStepRecord {
  int64_t position = 0;
  double magnitude = 0;
  double p_value = 1;
  double level_before = 0;
  double level_after = 0;
  std::vector<std::string> detectors;
};

// A creep alert's own figures (kind "creep", stats/creep.h; migration 0017): its range is
// [position, range_end]; slope the relative change per point and its confidence interval.
struct CreepFigures {
  int64_t range_end = 0;
  double slope = 0;
  double slope_low = 0;
  double slope_high = 0;
};

// An alert the analysis raises (or an open one measured again).
struct NewAlertRecord {
  int64_t position = 0;  // absolute first point of the new level
  std::string kind;      // regression (worse in the metric's direction), improvement
  std::string cause;     // code; environment when the testbed fingerprint changed there
  double magnitude = 0;
  std::optional<double> ci_low, ci_high;  // none when a side has a single point
  double p_value = 1;
  double q_value = 1;  // Benjamini-Hochberg, across the series of the ingest that raised it
  double level_before = 0;
  double level_after = 0;
  std::vector<std::string> detectors;
  // {"before": fingerprint, "after": fingerprint, "changed": [keys]} for an environment
  // change, "" otherwise. Stored with a new alert only.
  std::string environment_change_json;
  std::string parameters_json = "{}";
  std::optional<CreepFigures> creep;  // with kind "creep" only
};

struct WentAwayRecord {
  int64_t position = 0;  // the open alert's
  std::string note;      // why
};

struct HistorySeriesUpdate {
  int64_t series_id = 0;
  std::string detector_state_json;
  std::string monitor_state_json;
  std::vector<HistoryStepRecord> steps;  // replace the series' change points
  std::vector<NewAlertRecord> alerts;
  // Open alerts measured again: (their old position, the new figures, q-value included).
  std::vector<std::pair<int64_t, NewAlertRecord>> refreshed;
  // Open alerts whose series came back to the level before their step (server/history
  // went_away.h): set to went_away by "perfwarden" with the note as the event's.
  std::vector<WentAwayRecord> went_away;
  // Re-baseline the series there (its detector and monitor states are then not stored).
  std::optional<int64_t> rebaseline_from;
};

struct HistoryRunWork {
  std::string run_id;
  Project project;
  std::vector<HistorySeriesData> series;  // the series the run added a point to
  // The fingerprints (JSON objects) of the testbeds on either side of every point where a
  // series' testbed changes, by testbed id: what an environment change reports.
  std::map<int64_t, std::string> testbed_fingerprints;
};

struct HistoryRunResult {
  std::string run_id;
  Project project;
  std::size_t series = 0;
  std::vector<int64_t> new_alert_ids;
  std::vector<int64_t> new_group_ids;  // groups this run's alerts created (oldest first)
};

struct CommitRef {
  std::string sha;
  std::string subject;
  std::string author;
  std::string time;  // "" when unknown
  std::string run_id;
};

struct AlertRecord {
  int64_t id = 0;
  std::string project;
  int64_t group_id = 0;  // 0: none (never for an alert the worker raised)
  HistorySeriesKey series;
  int64_t position = 0;
  std::string kind;
  std::string cause;
  std::string state;
  CommitRef last_good;
  CommitRef first_bad;
  double magnitude = 0;
  std::optional<double> ci_low, ci_high;
  double p_value = 1;
  double q_value = 1;
  double level_before = 0;
  double level_after = 0;
  std::vector<std::string> detectors;
  std::string environment_change_json;  // "" when none
  std::string parameters_json = "{}";
  std::string note;
  std::string state_changed_by;  // "" when never changed
  std::string state_changed_at;
  std::string created_at;
  std::optional<CreepFigures> creep;  // with kind "creep" only
};

struct ExcerptPoint {
  int64_t position = 0;
  CommitRef commit;
  double level = 0;
  std::vector<double> values;
  int64_t testbed_id = 0;
};

struct AlertEvent {
  std::string state;
  std::string note;
  std::string by;
  std::string at;
};

// A bisect the runner posted (`perfwarden bisect --format json`), optionally for an alert.
struct NewBisect {
  std::optional<int64_t> alert_id;
  std::string good_sha, bad_sha;
  std::string culprit_sha;  // "" when none (the regression did not reproduce)
  std::string state;        // succeeded, failed
  std::string report_json;  // the whole answer
  std::string created_by;   // token name
};

// One step of a remote bisect (bisect_store.h): a measurement queued for the testbed's agents.
struct BisectStepRecord {
  int64_t id = 0;
  int64_t ordinal = 0;
  std::string state;         // queued, claimed, done, failed, cancelled
  std::string agent;         // the last agent that claimed it, "" when none
  int64_t attempts = 0;      // claims so far
  std::string request_json;  // bisect::RequestJson
  std::string result_json;   // bisect::MeasurementJson, "" until done
  int64_t builds = 0, runs = 0;
  std::string lease_expires_at;  // "" when not claimed
  std::string last_error;
  std::string created_at, finished_at;
  std::optional<int64_t> reused_from;  // done from another bisect's measurement (no agent)
};

struct BisectRecord {
  int64_t id = 0;
  std::optional<int64_t> alert_id;
  std::string good_sha, bad_sha, culprit_sha, state, created_by, created_at;
  std::string report_json;  // "" in lists
  // Queueing answered this earlier bisect of the alert's group instead of a new one.
  bool existing = false;
  // Remote bisects only (testbed "" for a posted local answer). GetBisect fills them; lists
  // leave request_json and steps empty.
  std::string testbed;
  std::string request_json;  // what it was queued with (commits, options, benchmarks...)
  std::string error;         // why it failed without a report
  std::string finished_at;
  std::vector<BisectStepRecord> steps;  // in ordinal order
};

struct AlertDetail {
  AlertRecord alert;
  std::vector<BisectRecord> bisects;  // newest first, without their reports
  std::vector<ExcerptPoint> excerpt;  // points around the step, oldest first
  std::vector<AlertEvent> history;    // oldest first
};

struct AlertFilter {
  std::string state = "open";  // or "all"
  std::string kind;            // "" = any
  std::string branch, testbed, suite, benchmark, metric;
  int limit = 50;
  std::string cursor;  // opaque
};

struct AlertPage {
  std::vector<AlertRecord> alerts;  // newest first
  std::string next_cursor;          // "" on the last page
};

struct AlertUpdate {
  std::optional<std::string> state;  // open, acknowledged, false_positive, resolved
  std::optional<std::string> note;
  std::string actor;  // token name
};

struct AlertCount {
  std::string kind;
  std::string cause;
  std::string state;
  int64_t count = 0;
};

// Alerts of one branch whose commit ranges overlap (core/commit_range.h), with the narrowest
// common range. Its state is its members': "open" while one is, "closed" after.
struct AlertGroupRecord {
  int64_t id = 0;
  std::string project;
  std::string branch;
  CommitRef last_good;  // the group's range (run_id "")
  CommitRef first_bad;
  std::string state;                      // open, closed
  std::map<std::string, int64_t> states;  // members by state
  int64_t members = 0;
  // The member a bisect is for: the smallest q-value, then the largest |magnitude|, then id.
  int64_t most_significant = 0;
  std::optional<int64_t> bisect_id;  // the group's newest bisect not failed or cancelled
  std::string created_at;
};

struct AlertGroupDetail {
  AlertGroupRecord group;
  std::vector<AlertRecord> members;   // most significant first
  std::vector<BisectRecord> bisects;  // newest first, without their reports
};

struct AlertGroupFilter {
  std::string state = "open";  // open, closed or all
  std::string branch;          // "" = any
  int limit = 50;
  std::string cursor;  // opaque
};

struct AlertGroupPage {
  std::vector<AlertGroupRecord> groups;  // newest first
  std::string next_cursor;               // "" on the last page
};

// One whole series of a tracked branch, for on-demand analysis.
struct HistorySeriesQuery {
  std::string branch, testbed, suite, benchmark, metric, unit;
};

struct HistorySeriesPoints {
  HistorySeriesKey key;
  int64_t baseline_from = 0;
  std::vector<ExcerptPoint> points;  // every point, oldest first
};

// How many points of a series the detectors see at most: when a series has grown `max_points`
// past its baseline, the baseline moves forward to its last `keep_points` (the detector state is
// dropped and rebuilt once), so that the cost of an append stays bounded however long the
// history. Steps further back were alerted (or not) long before.
struct HistoryWindow {
  int64_t max_points = 4000;
  int64_t keep_points = 2000;
};

// One run being taken into history: an open transaction holding the run's project lock, in
// which the run is claimed, its points appended and the series it touched loaded (Work). The
// caller analyses them and hands the results to Commit. Destroyed without a successful Commit
// (the analysis failed, the worker stops), the transaction rolls back: the run stays pending and
// none of its points are appended.
class HistoryRunTransaction {
 public:
  virtual ~HistoryRunTransaction() = default;
  virtual const HistoryRunWork& Work() const = 0;
  // Stores the updates (states, change points, new and refreshed alerts), marks the run
  // analysed and commits. Once per transaction; after an error nothing of the run is stored.
  virtual Result<HistoryRunResult> Commit(const std::vector<HistorySeriesUpdate>& updates) = 0;
};

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Begins the unit of work for the oldest run not yet in history (created_at order; runs of
  // branches not in `tracked_branches` are only marked done): under a per-project lock, claims
  // it, appends its points (one per commit: a later run of a commit already in the series pools
  // its values into that point, and the series' detector state is dropped so that the next
  // analysis recomputes) and loads the series it touched. nullptr when no run is pending.
  virtual Result<std::unique_ptr<HistoryRunTransaction>> BeginNextRun(
      const std::vector<std::string>& tracked_branches) = 0;
  virtual Result<int64_t> PendingHistoryRuns() = 0;
  // Sets aside the run BeginNextRun would take next (marked analysed, `error` recorded in
  // runs.history_error, its points not appended), so that a run whose analysis keeps failing
  // does not stop its project's history. Its id; nullopt when no run is pending.
  virtual Result<std::optional<std::string>> SkipNextRun(
      const std::vector<std::string>& tracked_branches, const std::string& error) = 0;

  virtual Result<AlertPage> ListAlerts(const Project& project, const AlertFilter& filter) = 0;
  // Alerts by kind, cause and state, with the filter's series fields (its state, limit and
  // cursor are ignored): triage outcomes as quality figures.
  virtual Result<std::vector<AlertCount>> CountAlerts(const Project& project,
                                                      const AlertFilter& filter) = 0;
  // kNotFound when absent; `excerpt_points` each side of the step.
  virtual Result<AlertDetail> GetAlert(const Project& project, int64_t id, int excerpt_points) = 0;
  // Changes state and/or note and records the event. Moving to acknowledged, false_positive
  // or resolved re-baselines the series at the alert's first bad point (detector and monitor
  // state dropped). kNotFound when absent.
  virtual Result<AlertRecord> UpdateAlert(const Project& project, int64_t id,
                                          const AlertUpdate& update) = 0;
  virtual Result<AlertGroupPage> ListAlertGroups(const Project& project,
                                                 const AlertGroupFilter& filter) = 0;
  // kNotFound when absent.
  virtual Result<AlertGroupDetail> GetAlertGroup(const Project& project, int64_t id) = 0;
  // UpdateAlert on every member, in one transaction (an event per member). kNotFound when absent.
  virtual Result<AlertGroupDetail> UpdateAlertGroup(const Project& project, int64_t id,
                                                    const AlertUpdate& update) = 0;
  // kNotFound when the alert is not in the project; kConflict naming it when the alert's group
  // already has a bisect that is not failed or cancelled (one bisect per group).
  virtual Result<BisectRecord> SaveBisect(const Project& project, const NewBisect& bisect) = 0;
  // kNotFound when absent. A remote bisect comes with its request and steps (results included).
  virtual Result<BisectRecord> GetBisect(const Project& project, int64_t id) = 0;
  // kNotFound when no such series; kInvalidArgument when the query is ambiguous.
  virtual Result<HistorySeriesPoints> GetHistorySeries(const Project& project,
                                                       const HistorySeriesQuery& query) = 0;
};

}  // namespace perfwarden::store
