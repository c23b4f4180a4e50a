// A paired measurement as a verdict's rows (server/gate/paired_rows.h): a planted measurement
// (10% head slowdown on one series, an unchanged one, a noisy one, one with too few blocks, one
// ignored by a rule) judged into REGRESSION / EQUIVALENT / UNSTABLE / NEW / IGNORED rows with
// the paired detail, counts, warnings and the "paired" summary; the time budget's end; and an
// unpaired verdict amended by a re-measurement (confirmed, withdrawn, kept, the outcome).
#include "server/gate/paired_rows.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/planted_paired.h"
#include "wire/verdict.h"

namespace perfgate::server::gate {
namespace {

using nlohmann::json;
using testing::PlantedMeasurement;
using testing::PlantedSeries;

const std::string kBase(40, 'a');

std::map<std::string, json> RowsByBenchmark(const std::string& results_json) {
  std::map<std::string, json> out;
  for (const json& row : json::parse(results_json)) out[row["benchmark"]] = row;
  return out;
}

TEST(PairedRowsTest, APlantedMeasurementBecomesOneRowPerSeries) {
  auto parts = JudgeMeasurement(PlantedMeasurement(kBase));
  ASSERT_TRUE(parts.has_value()) << parts.error().ToString();
  // Written in the order nlohmann writes (sorted keys), so that the text parses and dumps back
  // to itself.
  EXPECT_EQ(json::parse(parts->results_json).dump(), parts->results_json);
  std::map<std::string, json> rows = RowsByBenchmark(parts->results_json);
  ASSERT_EQ(rows.size(), 5u);

  const json& slow = rows["BM_Slow"];
  EXPECT_EQ(slow["verdict"], "REGRESSION");
  EXPECT_NEAR(slow["change"].get<double>(), 0.10, 0.01);
  EXPECT_LT(slow["change_ci"][0].get<double>(), slow["change"].get<double>());
  EXPECT_GT(slow["change_ci"][1].get<double>(), slow["change"].get<double>());
  EXPECT_EQ(slow["base"]["n"], 30);  // 6 blocks of 5 repetitions
  EXPECT_EQ(slow["current"]["n"], 30);
  EXPECT_NEAR(slow["current"]["median"].get<double>() / slow["base"]["median"].get<double>(), 1.10,
              0.01);
  EXPECT_LT(slow["p_adjusted"].get<double>(), 0.05);
  EXPECT_EQ(slow["repetitions_needed"], 0);
  EXPECT_EQ(slow["threshold"], 0.05);
  const json& detail = slow["paired"];
  EXPECT_EQ(detail["blocks"], 6);
  EXPECT_EQ(detail["decided_at_look"], 0);
  EXPECT_EQ(detail["blocks_needed"], 0);
  // The machine's 3% drift between blocks is measured and cancelled by the pairing.
  EXPECT_GT(detail["drift"].get<double>(), 0.005);
  EXPECT_LT(detail["noise"].get<double>(), 0.01);
  EXPECT_TRUE(detail["t_ci"].is_array());
  EXPECT_TRUE(detail["bootstrap_ci"].is_array());

  EXPECT_EQ(rows["BM_Same"]["verdict"], "EQUIVALENT");
  EXPECT_EQ(rows["BM_Same"]["repetitions_needed"], 0);

  // Undecidable at the last look: UNSTABLE, with the repetitions that would decide it.
  const json& noisy = rows["BM_Noisy"];
  EXPECT_EQ(noisy["verdict"], "UNSTABLE");
  const int64_t blocks_needed = noisy["paired"]["blocks_needed"].get<int64_t>();
  EXPECT_GT(blocks_needed, 6);
  EXPECT_EQ(noisy["repetitions_needed"].get<int64_t>(), blocks_needed * 5);
  EXPECT_EQ(noisy["paired"]["decided_at_look"], -1);

  // Measured at the baseline in 3 blocks of the first look's 6: NEW, with what the head measured.
  const json& few = rows["BM_Few"];
  EXPECT_EQ(few["verdict"], "NEW");
  EXPECT_TRUE(few["base"].is_null());
  EXPECT_TRUE(few["change"].is_null());
  EXPECT_TRUE(few["change_ci"].is_null());
  EXPECT_TRUE(few["p_value"].is_null());
  EXPECT_EQ(few["current"]["n"], 30);
  EXPECT_FALSE(few.contains("paired"));
  EXPECT_NE(few["reason"].get<std::string>().find("3 block(s)"), std::string::npos)
      << few["reason"];

  EXPECT_EQ(rows["BM_Skip"]["verdict"], "IGNORED");
  EXPECT_FALSE(rows["BM_Skip"].contains("paired"));

  EXPECT_EQ(parts->counts, (json{{"regression", 1},
                                 {"improvement", 0},
                                 {"equivalent", 1},
                                 {"inconclusive", 0},
                                 {"ignored", 1},
                                 {"new", 1},
                                 {"unstable", 1},
                                 {"pass", 0}}));
  EXPECT_EQ(parts->outcome, "regression");
  ASSERT_EQ(parts->warnings.size(), 1u);
  EXPECT_NE(parts->warnings[0].find("BM_Few"), std::string::npos) << parts->warnings[0];

  const wire::PairedSummary& s = parts->summary;
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

TEST(PairedRowsTest, WithoutARegressionRowTheOutcomeIsPass) {
  auto parts = JudgeMeasurement(
      PlantedMeasurement(kBase, {{"BM_Same", 2000, 1.0, 0, -1}, {"BM_Fast", 1000, 0.8, 0, -1}}));
  ASSERT_TRUE(parts.has_value()) << parts.error().ToString();
  EXPECT_EQ(parts->outcome, "pass");
  std::map<std::string, json> rows = RowsByBenchmark(parts->results_json);
  EXPECT_EQ(rows["BM_Fast"]["verdict"], "IMPROVEMENT");
  EXPECT_EQ(parts->counts["improvement"], 1);
  EXPECT_TRUE(parts->warnings.empty());
}

TEST(PairedRowsTest, TheTimeBudgetMakesTheLookReachedTheLast) {
  const std::vector<PlantedSeries> series = {{"BM_Slow", 1000, 1.10, 0, -1},
                                             {"BM_Noisy", 3000, 1.0, 0.20, -1}};
  wire::PairedMeasurement m = PlantedMeasurement(kBase, series);
  m.design.max_blocks = 30;  // looks at 6, 9, 13, 20, 30; the 6 blocks reach the first
  m.design.stopped = "decided";
  auto early = JudgeMeasurement(m);
  ASSERT_TRUE(early.has_value()) << early.error().ToString();
  EXPECT_EQ(RowsByBenchmark(early->results_json)["BM_Noisy"]["verdict"], "INCONCLUSIVE");
  EXPECT_EQ(RowsByBenchmark(early->results_json)["BM_Noisy"]["repetitions_needed"], 0);
  EXPECT_EQ(early->summary.looks, 5);

  m.design.stopped = "time_budget";
  auto ended = JudgeMeasurement(m);
  ASSERT_TRUE(ended.has_value()) << ended.error().ToString();
  EXPECT_EQ(RowsByBenchmark(ended->results_json)["BM_Noisy"]["verdict"], "UNSTABLE");
  EXPECT_EQ(ended->counts["unstable"], 1);
  ASSERT_EQ(ended->warnings.size(), 1u);
  EXPECT_NE(ended->warnings[0].find("time budget"), std::string::npos) << ended->warnings[0];
}

TEST(PairedRowsTest, AMeasurementTheJudgeRefusesIsAnInvalidArgumentNamingTheField) {
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
store::NewVerdict Unpaired(const std::string& outcome) {
  auto row = [](const std::string& benchmark, const std::string& verdict) {
    return json{{"suite", "planted"},  {"benchmark", benchmark},  {"metric", "real_time"},
                {"unit", "ns"},        {"direction", "lower"},    {"threshold", 0.05},
                {"verdict", verdict},  {"base", nullptr},         {"current", nullptr},
                {"change", 0.09},      {"change_ci", nullptr},    {"p_value", 0.001},
                {"p_adjusted", 0.002}, {"repetitions_needed", 0}, {"reason", "unpaired"}};
  };
  store::NewVerdict v;
  v.outcome = outcome;
  v.results_json = json::array({row("BM_Slow", "REGRESSION"), row("BM_Same", "REGRESSION"),
                                row("BM_Other", "EQUIVALENT"), row("BM_Few", "REGRESSION")})
                       .dump();
  v.summary_json = json{{"warnings", {"an earlier warning"}}}.dump();
  return v;
}

TEST(PairedRowsTest, AnAmendmentReplacesTheReMeasuredRows) {
  wire::PairedMeasurement m = PlantedMeasurement(kBase, {{"BM_Slow", 1000, 1.10, 0, -1},
                                                         {"BM_Same", 2000, 1.0, 0, -1},
                                                         {"BM_Few", 4000, 1.0, 0, 3},
                                                         {"BM_Added", 500, 1.0, 0, -1}});
  m.amends = 4;
  auto parts = JudgeMeasurement(m);
  ASSERT_TRUE(parts.has_value()) << parts.error().ToString();
  auto amended = Amend(Unpaired("regression"), *parts, m);
  ASSERT_TRUE(amended.has_value()) << amended.error().ToString();
  std::map<std::string, json> rows = RowsByBenchmark(amended->results_json);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows["BM_Slow"]["verdict"], "REGRESSION");  // confirmed, now with its paired detail
  EXPECT_TRUE(rows["BM_Slow"].contains("paired"));
  EXPECT_EQ(rows["BM_Same"]["verdict"], "EQUIVALENT");  // withdrawn
  EXPECT_EQ(rows["BM_Other"]["verdict"], "EQUIVALENT");
  EXPECT_EQ(rows["BM_Other"]["reason"], "unpaired");  // not re-measured: as it was
  // Too few blocks is no evidence: the row stands.
  EXPECT_EQ(rows["BM_Few"]["verdict"], "REGRESSION");
  EXPECT_FALSE(rows["BM_Few"].contains("paired"));
  EXPECT_EQ(rows["BM_Added"]["verdict"], "EQUIVALENT");
  EXPECT_EQ(amended->counts, (json{{"regression", 2},
                                   {"improvement", 0},
                                   {"equivalent", 3},
                                   {"inconclusive", 0},
                                   {"ignored", 0},
                                   {"new", 0},
                                   {"unstable", 0},
                                   {"pass", 0}}));
  EXPECT_EQ(amended->outcome, "regression");
  ASSERT_GE(amended->warnings.size(), 2u);
  EXPECT_EQ(amended->warnings.front(), "an earlier warning");
  EXPECT_EQ(amended->warnings.back(),
            "2 regression(s) re-measured side by side against aaaaaaaaaaaa: 1 confirmed, "
            "1 withdrawn");
}

TEST(PairedRowsTest, TheAmendedOutcomeFollowsTheRegressionsLeft) {
  // Every regression withdrawn: pass.
  wire::PairedMeasurement all = PlantedMeasurement(
      kBase,
      {{"BM_Slow", 1000, 1.0, 0, -1}, {"BM_Same", 2000, 1.0, 0, -1}, {"BM_Few", 4000, 1.0, 0, -1}});
  auto parts = JudgeMeasurement(all);
  ASSERT_TRUE(parts.has_value()) << parts.error().ToString();
  auto passed = Amend(Unpaired("regression"), *parts, all);
  ASSERT_TRUE(passed.has_value());
  EXPECT_EQ(passed->outcome, "pass");
  EXPECT_EQ(passed->counts["regression"], 0);
  EXPECT_EQ(passed->warnings.back(),
            "3 regression(s) re-measured side by side against aaaaaaaaaaaa: 0 confirmed, "
            "3 withdrawn");

  // A throttled host's verdict whose regressions left are all unpaired stays noisy; a paired
  // regression among them makes it a regression.
  wire::PairedMeasurement same_only = PlantedMeasurement(kBase, {{"BM_Same", 2000, 1.0, 0, -1}});
  parts = JudgeMeasurement(same_only);
  ASSERT_TRUE(parts.has_value()) << parts.error().ToString();
  auto noisy = Amend(Unpaired("noisy_environment"), *parts, same_only);
  ASSERT_TRUE(noisy.has_value());
  EXPECT_EQ(noisy->outcome, "noisy_environment");
  EXPECT_EQ(noisy->counts["regression"], 2);

  wire::PairedMeasurement slow_only = PlantedMeasurement(kBase, {{"BM_Slow", 1000, 1.1, 0, -1}});
  parts = JudgeMeasurement(slow_only);
  ASSERT_TRUE(parts.has_value()) << parts.error().ToString();
  auto confirmed = Amend(Unpaired("noisy_environment"), *parts, slow_only);
  ASSERT_TRUE(confirmed.has_value());
  EXPECT_EQ(confirmed->outcome, "regression");
}

}  // namespace
}  // namespace perfgate::server::gate
