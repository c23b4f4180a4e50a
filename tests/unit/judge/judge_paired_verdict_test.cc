// SPDX-License-Identifier: Apache-2.0
// A paired measurement as the typed verdict (judge/paired_verdict.h): a planted measurement
// (10% head slowdown on one series, an unchanged one, a noisy one, one with too few blocks, one
// ignored by a rule) judged into REGRESSION / EQUIVALENT / UNSTABLE / NEW / IGNORED rows with
// the paired detail, counts, outcome, warnings and the "paired" summary; the time budget's end;
// and an unpaired verdict amended by a re-measurement (confirmed, withdrawn, kept, the outcome).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "judge/paired_verdict.h"
#include "tests/testing/planted_paired.h"
#include "wire/verdict.h"

namespace perfwarden::judge {
namespace {

using testing::PlantedMeasurement;
using testing::PlantedSeries;
using wire::Outcome;
using wire::ResultKind;

const std::string kBase(40, 'a');

std::map<std::string, wire::MetricResult> RowsByBenchmark(const wire::Verdict& verdict) {
  std::map<std::string, wire::MetricResult> out;
  for (const wire::MetricResult& row : verdict.results) out[row.key.benchmark] = row;
  return out;
}

TEST(PairedVerdictTest, APlantedMeasurementBecomesOneRowPerSeries) {
  auto verdict = JudgeMeasurement(PlantedMeasurement(kBase));
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  std::map<std::string, wire::MetricResult> rows = RowsByBenchmark(*verdict);
  ASSERT_EQ(rows.size(), 5u);

  const wire::MetricResult& slow = rows["BM_Slow"];
  EXPECT_EQ(slow.kind, ResultKind::kRegression);
  ASSERT_TRUE(slow.change && slow.change_ci && slow.base && slow.current && slow.p_adjusted);
  EXPECT_NEAR(*slow.change, 0.10, 0.01);
  EXPECT_LT(slow.change_ci->lower, *slow.change);
  EXPECT_GT(slow.change_ci->upper, *slow.change);
  EXPECT_EQ(slow.base->n, 30);  // 6 blocks of 5 repetitions
  EXPECT_EQ(slow.current->n, 30);
  EXPECT_NEAR(*slow.current->median / *slow.base->median, 1.10, 0.01);
  EXPECT_LT(*slow.p_adjusted, 0.05);
  EXPECT_EQ(slow.repetitions_needed, 0);
  EXPECT_EQ(slow.threshold, 0.05);
  ASSERT_TRUE(slow.paired.has_value());
  const wire::PairedDetail& detail = *slow.paired;
  EXPECT_EQ(detail.blocks, 6);
  EXPECT_EQ(detail.decided_at_look, 0);
  EXPECT_EQ(detail.blocks_needed, 0);
  // The machine's 3% drift between blocks is measured and cancelled by the pairing.
  EXPECT_GT(detail.drift, 0.005);
  EXPECT_LT(detail.noise, 0.01);
  EXPECT_TRUE(detail.t_ci.has_value());
  EXPECT_TRUE(detail.bootstrap_ci.has_value());

  EXPECT_EQ(rows["BM_Same"].kind, ResultKind::kEquivalent);
  EXPECT_EQ(rows["BM_Same"].repetitions_needed, 0);

  // Undecidable at the last look: UNSTABLE, with the repetitions that would decide it.
  const wire::MetricResult& noisy = rows["BM_Noisy"];
  EXPECT_EQ(noisy.kind, ResultKind::kUnstable);
  ASSERT_TRUE(noisy.paired.has_value());
  EXPECT_GT(noisy.paired->blocks_needed, 6);
  EXPECT_EQ(noisy.repetitions_needed, noisy.paired->blocks_needed * 5);
  EXPECT_EQ(noisy.paired->decided_at_look, -1);

  // Measured at the baseline in 3 blocks of the first look's 6: NEW, with what the head measured.
  const wire::MetricResult& few = rows["BM_Few"];
  EXPECT_EQ(few.kind, ResultKind::kNew);
  EXPECT_FALSE(few.base.has_value());
  EXPECT_FALSE(few.change.has_value());
  EXPECT_FALSE(few.change_ci.has_value());
  EXPECT_FALSE(few.p_value.has_value());
  ASSERT_TRUE(few.current.has_value());
  EXPECT_EQ(few.current->n, 30);
  EXPECT_FALSE(few.paired.has_value());
  EXPECT_NE(few.reason.find("3 block(s)"), std::string::npos) << few.reason;

  EXPECT_EQ(rows["BM_Skip"].kind, ResultKind::kIgnored);
  EXPECT_FALSE(rows["BM_Skip"].paired.has_value());

  wire::Counts counts;
  counts.regression = 1;
  counts.equivalent = 1;
  counts.ignored = 1;
  counts.new_metrics = 1;
  counts.unstable = 1;
  EXPECT_EQ(verdict->counts, counts);
  EXPECT_EQ(verdict->outcome, Outcome::kRegression);
  ASSERT_EQ(verdict->warnings.size(), 1u);
  EXPECT_NE(verdict->warnings[0].find("BM_Few"), std::string::npos) << verdict->warnings[0];

  ASSERT_TRUE(verdict->paired.has_value());
  const wire::PairedSummary& s = *verdict->paired;
  EXPECT_EQ(s.baseline_commit, kBase);
  EXPECT_EQ(s.design.stopped, "max_blocks");
  EXPECT_FALSE(s.amends.has_value());
  EXPECT_EQ(s.measured, 3);
  EXPECT_EQ(s.look, 0);
  EXPECT_EQ(s.looks, 1);
  EXPECT_EQ(s.blocks, 6);
  ASSERT_TRUE(s.geomean_change.has_value());
  ASSERT_TRUE(s.geomean_ci.has_value());
  EXPECT_LE(s.geomean_ci->lower, *s.geomean_change);
  EXPECT_GE(s.geomean_ci->upper, *s.geomean_change);
}

TEST(PairedVerdictTest, WithoutARegressionRowTheOutcomeIsPass) {
  auto verdict = JudgeMeasurement(
      PlantedMeasurement(kBase, {{"BM_Same", 2000, 1.0, 0, -1}, {"BM_Fast", 1000, 0.8, 0, -1}}));
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  EXPECT_EQ(verdict->outcome, Outcome::kPass);
  EXPECT_EQ(RowsByBenchmark(*verdict)["BM_Fast"].kind, ResultKind::kImprovement);
  EXPECT_EQ(verdict->counts.improvement, 1);
  EXPECT_TRUE(verdict->warnings.empty());
}

// A benchmark gates its real_time alone: its cpu_time, 10% slower, is REPORTED with its paired
// numbers and what it shows, counted apart, and the measurement passes.
TEST(PairedVerdictTest, ANonPrimaryMetricIsReportedNotGated) {
  wire::PairedMeasurement m =
      PlantedMeasurement(kBase, {{"BM_Same", 2000, 1.0, 0, -1}, {"BM_Cpu", 1000, 1.10, 0, -1}});
  m.series[1].key = {"planted", "BM_Same", "cpu_time"};
  auto verdict = JudgeMeasurement(m);
  ASSERT_TRUE(verdict.has_value()) << verdict.error().ToString();
  EXPECT_EQ(verdict->outcome, Outcome::kPass);
  ASSERT_EQ(verdict->results.size(), 2u);
  const wire::MetricResult& cpu = verdict->results[1];
  EXPECT_EQ(cpu.kind, ResultKind::kReported);
  ASSERT_TRUE(cpu.change.has_value() && cpu.paired.has_value());
  EXPECT_NEAR(*cpu.change, 0.10, 0.01);
  EXPECT_EQ(cpu.reason.rfind("not gated; shows REGRESSION: ", 0), 0u) << cpu.reason;
  EXPECT_EQ(verdict->counts.reported, 1);
  EXPECT_EQ(verdict->counts.regression, 0);
  EXPECT_EQ(verdict->counts.equivalent, 1);
  ASSERT_TRUE(verdict->paired.has_value());
  EXPECT_EQ(verdict->paired->measured, 1);  // the gated series

  // Every series reported: nothing can gate, which is said rather than passed.
  m.parameters.rules.push_back({.metric = "real_time", .gate = false});
  auto none = JudgeMeasurement(m);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().field, "series");
  EXPECT_NE(none.error().message.find("gate: false"), std::string::npos) << none.error().message;
}

TEST(PairedVerdictTest, TheTimeBudgetMakesTheLookReachedTheLast) {
  const std::vector<PlantedSeries> series = {{"BM_Slow", 1000, 1.10, 0, -1},
                                             {"BM_Noisy", 3000, 1.0, 0.20, -1}};
  wire::PairedMeasurement m = PlantedMeasurement(kBase, series);
  m.design.max_blocks = 30;  // looks at 6, 9, 13, 20, 30; the 6 blocks reach the first
  m.design.stopped = "decided";
  auto early = JudgeMeasurement(m);
  ASSERT_TRUE(early.has_value()) << early.error().ToString();
  EXPECT_EQ(RowsByBenchmark(*early)["BM_Noisy"].kind, ResultKind::kInconclusive);
  EXPECT_EQ(RowsByBenchmark(*early)["BM_Noisy"].repetitions_needed, 0);
  EXPECT_EQ(early->paired->looks, 5);

  m.design.stopped = "time_budget";
  auto ended = JudgeMeasurement(m);
  ASSERT_TRUE(ended.has_value()) << ended.error().ToString();
  EXPECT_EQ(RowsByBenchmark(*ended)["BM_Noisy"].kind, ResultKind::kUnstable);
  EXPECT_EQ(ended->counts.unstable, 1);
  ASSERT_EQ(ended->warnings.size(), 1u);
  EXPECT_NE(ended->warnings[0].find("time budget"), std::string::npos) << ended->warnings[0];
}

TEST(PairedVerdictTest, AMeasurementTheJudgeRefusesIsAnInvalidArgumentNamingTheField) {
  wire::PairedMeasurement m = PlantedMeasurement(kBase);
  m.design.test = "z";
  auto bad_test = JudgeMeasurement(m);
  ASSERT_FALSE(bad_test.has_value());
  EXPECT_EQ(bad_test.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad_test.error().field, "design.test");

  // A value the statistics cannot take is named by its path in the body.
  m = PlantedMeasurement(kBase);
  m.series[1].blocks[4].head[3] = 0;
  auto zero = JudgeMeasurement(m);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(zero.error().field, "series[1].blocks[4].head[3]");
  EXPECT_NE(zero.error().message.find("positive"), std::string::npos) << zero.error().message;

  auto too_few = JudgeMeasurement(PlantedMeasurement(kBase, {{"BM_Few", 4000, 1.0, 0, 3}}));
  ASSERT_FALSE(too_few.has_value());
  EXPECT_EQ(too_few.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(too_few.error().field, "series");
}

// An unpaired verdict as the server stored it: BM_Slow and BM_Same regressed, BM_Other did not,
// BM_Few regressed too.
wire::Verdict Unpaired(Outcome outcome) {
  auto row = [](const std::string& benchmark, ResultKind kind) {
    wire::MetricResult r;
    r.key = {"planted", benchmark, "real_time"};
    r.unit = "ns";
    r.threshold = 0.05;
    r.kind = kind;
    r.change = 0.09;
    r.p_value = 0.001;
    r.p_adjusted = 0.002;
    r.reason = "unpaired";
    return r;
  };
  wire::Verdict v;
  v.outcome = outcome;
  v.results = {row("BM_Slow", ResultKind::kRegression), row("BM_Same", ResultKind::kRegression),
               row("BM_Other", ResultKind::kEquivalent), row("BM_Few", ResultKind::kRegression)};
  v.counts.regression = 3;
  v.counts.equivalent = 1;
  v.warnings = {"an earlier warning"};
  v.commit = std::string(40, 'c');
  return v;
}

wire::Verdict Judged(const wire::PairedMeasurement& m) {
  auto verdict = JudgeMeasurement(m);
  EXPECT_TRUE(verdict.has_value()) << verdict.error().ToString();
  return verdict ? *verdict : wire::Verdict{};
}

TEST(PairedVerdictTest, AnAmendmentReplacesTheReMeasuredRows) {
  wire::PairedMeasurement m = PlantedMeasurement(kBase, {{"BM_Slow", 1000, 1.10, 0, -1},
                                                         {"BM_Same", 2000, 1.0, 0, -1},
                                                         {"BM_Few", 4000, 1.0, 0, 3},
                                                         {"BM_Added", 500, 1.0, 0, -1}});
  m.amends = 4;
  const wire::Verdict paired = Judged(m);
  const wire::Verdict amended = Amend(Unpaired(Outcome::kRegression), paired);
  std::map<std::string, wire::MetricResult> rows = RowsByBenchmark(amended);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows["BM_Slow"].kind, ResultKind::kRegression);  // confirmed, with its paired detail
  EXPECT_TRUE(rows["BM_Slow"].paired.has_value());
  EXPECT_EQ(rows["BM_Same"].kind, ResultKind::kEquivalent);  // withdrawn
  EXPECT_EQ(rows["BM_Other"].kind, ResultKind::kEquivalent);
  EXPECT_EQ(rows["BM_Other"].reason, "unpaired");  // not re-measured: as it was
  // Too few blocks is no evidence: the row stands.
  EXPECT_EQ(rows["BM_Few"].kind, ResultKind::kRegression);
  EXPECT_FALSE(rows["BM_Few"].paired.has_value());
  EXPECT_EQ(rows["BM_Added"].kind, ResultKind::kEquivalent);
  wire::Counts counts;
  counts.regression = 2;
  counts.equivalent = 3;
  EXPECT_EQ(amended.counts, counts);
  EXPECT_EQ(amended.outcome, Outcome::kRegression);
  ASSERT_GE(amended.warnings.size(), 2u);
  EXPECT_EQ(amended.warnings.front(), "an earlier warning");
  EXPECT_EQ(amended.warnings.back(),
            "2 regression(s) re-measured side by side against aaaaaaaaaaaa: 1 confirmed, "
            "1 withdrawn");
  // The rest is the amended verdict's; the "paired" summary the measurement's.
  EXPECT_EQ(amended.commit, std::string(40, 'c'));
  ASSERT_TRUE(amended.paired.has_value());
  EXPECT_EQ(amended.paired->amends, 4);
}

TEST(PairedVerdictTest, TheAmendedOutcomeFollowsTheRegressionsLeft) {
  // Every regression withdrawn: pass.
  const wire::Verdict all = Judged(PlantedMeasurement(kBase, {{"BM_Slow", 1000, 1.0, 0, -1},
                                                              {"BM_Same", 2000, 1.0, 0, -1},
                                                              {"BM_Few", 4000, 1.0, 0, -1}}));
  const wire::Verdict passed = Amend(Unpaired(Outcome::kRegression), all);
  EXPECT_EQ(passed.outcome, Outcome::kPass);
  EXPECT_EQ(passed.counts.regression, 0);
  EXPECT_EQ(passed.warnings.back(),
            "3 regression(s) re-measured side by side against aaaaaaaaaaaa: 0 confirmed, "
            "3 withdrawn");

  // A throttled host's verdict whose regressions left are all unpaired stays noisy; a paired
  // regression among them makes it a regression.
  const wire::Verdict same_only =
      Judged(PlantedMeasurement(kBase, {{"BM_Same", 2000, 1.0, 0, -1}}));
  const wire::Verdict noisy = Amend(Unpaired(Outcome::kNoisyEnvironment), same_only);
  EXPECT_EQ(noisy.outcome, Outcome::kNoisyEnvironment);
  EXPECT_EQ(noisy.counts.regression, 2);

  const wire::Verdict slow_only =
      Judged(PlantedMeasurement(kBase, {{"BM_Slow", 1000, 1.1, 0, -1}}));
  EXPECT_EQ(Amend(Unpaired(Outcome::kNoisyEnvironment), slow_only).outcome, Outcome::kRegression);
}

}  // namespace
}  // namespace perfwarden::judge
