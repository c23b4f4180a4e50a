// SPDX-License-Identifier: Apache-2.0
// Alert groups' ranges (core/commit_range.h) and went away (server/history/went_away.h) without
// a database: overlapping ranges intersect to the narrowest common one and join the first open
// group they overlap; a step whose level came back for 3 points, or whose revert the analysis
// confirmed, goes away and takes its refresh and the revert's alert with it; a step that holds,
// or comes back only part of the way, stays open.
#include "server/history/went_away.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/commit_range.h"

namespace perfwarden::server::history {
namespace {

// Commit n of a branch whose commits first ran at n seconds.
BranchCommit At(int64_t n) { return {n * 1'000'000, 100 + n}; }
CommitRange Range(int64_t good, int64_t bad) { return {At(good), At(bad)}; }

TEST(CommitRange, OverlappingRangesIntersectToTheNarrowestCommonOne) {
  EXPECT_EQ(Intersect(Range(19, 21), Range(18, 22)), Range(19, 21));
  EXPECT_EQ(Intersect(Range(18, 22), Range(20, 25)), Range(20, 22));
  EXPECT_EQ(Intersect(Range(10, 12), Range(12, 14)), std::nullopt);  // (10,12] and (12,14]
  EXPECT_EQ(Intersect(Range(10, 11), Range(11, 12)), std::nullopt);
  EXPECT_EQ(Intersect(Range(10, 12), Range(11, 12)), Range(11, 12));
  // Same first-run time: the commit id orders them.
  const CommitRange tie{{5, 1}, {5, 3}};
  EXPECT_EQ(Intersect(tie, CommitRange{{5, 2}, {5, 4}}), (CommitRange{{5, 2}, {5, 3}}));
}

TEST(CommitRange, ARangeJoinsTheFirstGroupItOverlaps) {
  const std::vector<CommitRange> groups = {Range(1, 3), Range(19, 21), Range(18, 22)};
  EXPECT_EQ(GroupToJoin(Range(20, 30), groups), 1u);
  EXPECT_EQ(GroupToJoin(Range(17, 19), groups), 2u);
  EXPECT_EQ(GroupToJoin(Range(30, 31), groups), std::nullopt);
  EXPECT_EQ(GroupToJoin(Range(0, 1), {}), std::nullopt);
}

// A series at 1000, with one open alert at `position` (level 1000 -> 1100), then `tail`.
store::HistorySeriesData Series(std::vector<double> levels, int64_t position) {
  store::HistorySeriesData s;
  s.levels = std::move(levels);
  s.testbed_ids.assign(s.levels.size(), 1);
  s.length = static_cast<int64_t>(s.levels.size());
  s.open_alerts.push_back({position, 1e-6, 1e-5, 1000, 1100});
  return s;
}

std::vector<double> Levels(int before, int bumped, const std::vector<double>& after) {
  std::vector<double> out(static_cast<std::size_t>(before), 1000.0);
  out.insert(out.end(), static_cast<std::size_t>(bumped), 1100.0);
  out.insert(out.end(), after.begin(), after.end());
  return out;
}

TEST(WentAway, ALevelBackForThreePointsGoesAwayAndRebaselinesThere) {
  store::HistorySeriesData s = Series(Levels(30, 5, {1004, 996, 1010}), 30);
  SeriesOutput out;
  store::NewAlertRecord revert;
  revert.position = 35;
  out.alerts.push_back(revert);
  out.refreshed.push_back({30, {}});
  const WentAwayDecision d = ApplyWentAway(s, out, {0.05, 3});
  ASSERT_EQ(d.went_away.size(), 1u);
  EXPECT_EQ(d.went_away[0].position, 30);
  EXPECT_NE(d.went_away[0].note.find("3 points from position 35 within 2.5%"), std::string::npos)
      << d.went_away[0].note;
  EXPECT_EQ(d.rebaseline_from, 35);
  EXPECT_TRUE(out.alerts.empty()) << "the revert is not an alert of its own";
  EXPECT_TRUE(out.refreshed.empty());
}

TEST(WentAway, AStepThatHoldsOrComesBackPartWayStaysOpen) {
  for (const std::vector<double>& tail :
       {std::vector<double>{1100, 1098, 1103}, std::vector<double>{1040, 1040, 1040},  // 4% off
        std::vector<double>{1000, 1000}}) {  // 2 points only
    store::HistorySeriesData s = Series(Levels(30, 5, tail), 30);
    SeriesOutput out;
    EXPECT_TRUE(ApplyWentAway(s, out, {0.05, 3}).went_away.empty()) << tail[0];
  }
}

TEST(WentAway, ARevertTheAnalysisConfirmedGoesAwayDespiteANoisyLastPoint) {
  // Back from 36 on, but the last point is 3% off: the trailing run is too short, the detector's
  // confirmed revert (1100 -> 1001) decides.
  store::HistorySeriesData s = Series(Levels(30, 6, {1001, 999, 1030}), 30);
  SeriesOutput out;
  StepFound found;
  found.position = 36;
  found.step.level_before = 1100;
  found.step.level_after = 1001;
  found.step.magnitude = 1001.0 / 1100 - 1;
  out.steps.push_back(found);
  const WentAwayDecision d = ApplyWentAway(s, out, {0.05, 3});
  ASSERT_EQ(d.went_away.size(), 1u);
  EXPECT_NE(d.went_away[0].note.find("reverted at position 36"), std::string::npos);
  EXPECT_EQ(d.rebaseline_from, 36);
  // A second step up (not back) is not a revert.
  out.steps[0].step.level_after = 1210;
  out.steps[0].step.magnitude = 0.1;
  EXPECT_TRUE(ApplyWentAway(s, out, {0.05, 3}).went_away.empty());
}

}  // namespace
}  // namespace perfwarden::server::history
