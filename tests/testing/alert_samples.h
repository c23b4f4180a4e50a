// SPDX-License-Identifier: Apache-2.0
// The alert messages of wire/alert.h with every optional part present, for the tests that hold
// those types against their round trip (tests/unit/wire) and against docs/openapi.yaml
// (tests/unit/docs). Header-only; the test links perfwarden_wire.
#pragma once

#include <string>

#include "wire/alert.h"

namespace perfwarden::testing {

inline wire::CommitRef SampleCommit(char fill, const std::string& subject) {
  return {std::string(40, fill), subject, "Ada Lovelace", "2026-11-20T10:00:00Z",
          "6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3"};
}

inline wire::HistorySeries SampleSeries() {
  return {"main",
          "ci-1",
          {"gbench_sample", "BM_Sort/1024", "real_time"},
          "ns",
          Direction::kHigherIsBetter};
}

// An environment step, triaged, with an interval and parameters in the server's (jsonb's) order.
inline wire::Alert SampleAlert() {
  wire::Alert a;
  a.id = 12;
  a.project = "demo";
  a.series = SampleSeries();
  a.kind = "regression";
  a.cause = "environment";
  a.state = "acknowledged";
  a.position = 17;
  a.range = {SampleCommit('a', "Bump version"), SampleCommit('b', "Sort: insertion sort")};
  a.group = "aaaaaaaaaaaa..bbbbbbbbbbbb";
  a.group_id = 3;
  a.magnitude = 0.081;
  a.ci = wire::Interval{0.072, 0.09};
  a.confidence = 0.9;
  a.p_value = 1e-6;
  a.q_value = 2e-5;
  a.level_before = 1000.5;
  a.level_after = 1081.0;
  a.detectors = {"e-divisive", "mann-whitney", "cusum"};
  wire::EnvironmentChange change;
  change.before = {{"kernel", "6.1"}, {"cpu_model", "Xeon 8375C"}, {"gpu", {{{"name", "A100"}}}}};
  change.after = {{"kernel", "6.8"}, {"cpu_model", "EPYC 7763"}, {"gpu", nullptr}};
  change.changed = {"gpu", "kernel", "cpu_model"};
  a.environment_change = change;
  a.parameters = {
      {"seed", 1}, {"window", 30}, {"algorithm", "e-divisive+confirm/1"}, {"ci_confidence", 0.9}};
  a.note = "looking at it";
  a.state_changed_by = "alice";
  a.state_changed_at = "2026-11-22T09:00:00Z";
  a.created_at = "2026-11-21T08:00:00Z";
  return a;
}

// A creep alert (a drift; kind "creep"): every key an alert can have, "creep" included.
inline wire::Alert SampleCreepAlert() {
  wire::Alert a = SampleAlert();
  a.id = 13;
  a.kind = "creep";
  a.cause = "code";
  a.state = "open";
  a.ci.reset();
  a.magnitude = 0.09;
  a.detectors = {"mann-kendall", "theil-sen"};
  a.creep = wire::AlertCreep{a.position, a.position + 58, 0.0015, 0.0014, 0.0016};
  return a;
}

inline wire::AlertDetail SampleAlertDetail() {
  wire::AlertDetail d;
  d.alert = SampleAlert();
  d.excerpt = {{16, SampleCommit('a', "Bump version"), 1000.5, {1000.0, 1001.0}, false, false},
               {17, SampleCommit('b', "Sort"), 1081.0, {1080.0, 1082.0, 1081.0}, true, true}};
  d.history = {{"open", "", "perfwarden", "2026-11-21T08:00:00Z"},
               {"acknowledged", "looking at it", "alice", "2026-11-22T09:00:00Z"}};
  d.bisects = {{3, "succeeded", std::string(40, 'c'), std::string(40, 'a'), std::string(40, 'b'),
                "oncall", "2026-11-23T10:00:00Z"}};
  return d;
}

inline wire::AlertPage SampleAlertPage() {
  wire::AlertPage page;
  wire::Alert other = SampleAlert();
  other.id = 11;
  other.cause = "code";
  other.environment_change.reset();
  other.ci.reset();
  other.state_changed_by.reset();
  other.state_changed_at.reset();
  other.range.last_good.time.reset();
  other.range.last_good.run_id.reset();
  page.alerts = {SampleAlert(), other};
  page.next_cursor = "c2";
  return page;
}

// A group of two alerts with a bisect, every optional part present.
inline wire::AlertGroupDetail SampleAlertGroupDetail() {
  wire::AlertGroupDetail d;
  d.group.id = 3;
  d.group.project = "shop";
  d.group.branch = "main";
  d.group.range = {SampleCommit('a', "Bump version"), SampleCommit('b', "Sort: insertion sort")};
  d.group.range.last_good.run_id.reset();
  d.group.range.first_bad.run_id.reset();
  d.group.state = "open";
  d.group.states = {
      {"open", 1}, {"acknowledged", 1}, {"false_positive", 0}, {"resolved", 0}, {"went_away", 0}};
  d.group.members = 2;
  d.group.most_significant = 12;
  d.group.bisect_id = 5;
  d.group.created_at = "2026-11-20T11:00:00Z";
  wire::Alert other = SampleAlert();
  other.id = 13;
  other.state = "acknowledged";
  d.members = {SampleAlert(), other};
  d.bisects = SampleAlertDetail().bisects;
  return d;
}

inline wire::AlertSummary SampleAlertSummary() {
  wire::AlertSummary s;
  s.total = 9;
  s.by_state = {4, 2, 1, 2, 1};
  s.by_kind = {7, 2, 1};
  s.by_cause = {8, 1};
  s.triaged_regressions = 4;
  s.false_positive_rate = 0.25;
  return s;
}

// The change points are written with their keys in byte order at every level, so a round trip
// keeps the parameters only when they are in that order already.
inline wire::ChangePoints SampleChangePoints() {
  wire::ChangePoints c;
  c.series = SampleSeries();
  c.points = 40;
  c.baseline_from = 3;
  c.parameters = {{"algorithm", "e-divisive+confirm/1"}, {"threshold", 0.05}};
  c.change_points = {{17,
                      0.081,
                      1e-9,
                      1000.5,
                      1081.0,
                      {"e-divisive", "mann-whitney"},
                      "regression",
                      true,
                      SampleCommit('a', "Bump version"),
                      SampleCommit('b', "Sort")}};
  return c;
}

}  // namespace perfwarden::testing
