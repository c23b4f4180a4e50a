// SPDX-License-Identifier: Apache-2.0
// The judge: the glob matcher of threshold rules (the cases of perfwarden.yaml's and the verdict
// request's rules), first-match rule precedence, pairing two sides by key (and unit), NEW and
// IGNORED rows with their reasons, duplicates (the first of a key wins), the series only in the
// base, per-series threshold and alpha, the two row orders, and the names the statistics see.
#include "judge/judge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "core/threshold_rule.h"
#include "judge/compare_report.h"

namespace perfwarden::judge {
namespace {

TEST(Glob, FnmatchWithoutPathname) {
  struct Case {
    const char* pattern;
    const char* text;
    bool matches;
  };
  const Case cases[] = {
      {"*", "", true},
      {"*", "anything/with/slashes", true},
      {"BM_Sort/*", "BM_Sort/1024/8", true},  // '*' crosses '/'
      {"BM_Sort/*", "BM_Sort", false},
      {"BM_Noisy*", "BM_NoisyAlloc", true},
      {"wall_?ime", "wall_time", true},
      {"wall_?ime", "wall_tttime", false},
      {"start*", "startup", true},
      {"start*", "core", false},
      {"BM_[AB]x", "BM_Ax", true},
      {"BM_[AB]x", "BM_Bx", true},
      {"BM_[AB]x", "BM_Cx", false},
      {"BM_[!A]x", "BM_Bx", true},
      {"gpu_*", "gpu_utilization", true},
      {"gpu_*", "step_time", false},
      {"real_time", "real_time", true},
      {"real_time", "cpu_time", false},
      {"BM_\\*", "BM_*", true},  // an escaped '*' is literal
      {"BM_\\*", "BM_x", false},
      {"", "", true},
      {"", "x", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Glob(c.pattern, c.text), c.matches) << c.pattern << " ~ " << c.text;
  }
}

TEST(ThresholdRule, MatchesAllThreeGlobsAndEmptySuite) {
  EXPECT_TRUE(ThresholdRule{}.Matches("any", "BM_x/1", "real_time"));
  ThresholdRule rule{.suite = "", .benchmark = "BM_*", .metric = "real_time"};
  EXPECT_TRUE(rule.Matches("core", "BM_a", "real_time"));  // "" matches every suite
  EXPECT_FALSE(rule.Matches("core", "BM_a", "cpu_time"));
  rule.suite = "start*";
  EXPECT_FALSE(rule.Matches("core", "BM_a", "real_time"));
  EXPECT_TRUE(rule.Matches(SeriesKey{"startup", "BM_a", "real_time"}));
}

TEST(ThresholdRule, FirstMatchWins) {
  const std::vector<ThresholdRule> rules = {
      {.benchmark = "BM_Sort/*", .metric = "real_time", .percent = 3},
      {.benchmark = "BM_Noisy*", .ignore = true},
      {.metric = "items_per_second", .direction = Direction::kHigherIsBetter},
      {.suite = "start*", .benchmark = "wall_?ime", .alpha = 0.01},
      {.benchmark = "BM_[AB]x", .percent = 7.5},
  };
  struct Case {
    const char* suite;
    const char* benchmark;
    const char* metric;
    int rule;  // -1: none
  };
  const Case cases[] = {
      {"core", "BM_Sort/1024/8", "real_time", 0}, {"core", "BM_Sort/1024", "cpu_time", -1},
      {"core", "BM_NoisyAlloc", "real_time", 1},  {"core", "BM_Ax", "items_per_second", 2},
      {"startup", "wall_time", "wall_time", 3},   {"core", "wall_time", "wall_time", -1},
      {"core", "BM_Bx", "real_time", 4},          {"core", "BM_Cx", "real_time", -1},
  };
  for (const Case& c : cases) {
    const ThresholdRule* rule = FirstMatch(rules, c.suite, c.benchmark, c.metric);
    EXPECT_EQ(rule == nullptr ? -1 : static_cast<int>(rule - rules.data()), c.rule)
        << c.suite << " " << c.benchmark << " " << c.metric;
  }
  EXPECT_EQ(FirstMatch({}, "a", "b", "c"), nullptr);
}

TEST(ParseThreshold, PercentOrFraction) {
  EXPECT_DOUBLE_EQ(*ParseThreshold("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseThreshold("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseThreshold("150%"), 1.5);
  for (const char* bad : {"", "%", "five", "-5%", "0", "5", "nan%", "5%%", "1e400%"}) {
    auto r = ParseThreshold(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().field, "threshold");
  }
}

// Ten repetitions around `median`, spread +-1%.
std::vector<double> Around(double median) {
  std::vector<double> out;
  for (int i = 0; i < 10; ++i) out.push_back(median * (1 + 0.002 * (i - 5)));
  return out;
}

class JudgeSeriesTest : public ::testing::Test {
 protected:
  Series Make(const std::string& suite, const std::string& benchmark, const std::string& metric,
              const std::vector<double>& values, const std::string& unit = "ns") {
    values_.push_back(values);
    return {.key = {suite, benchmark, metric}, .unit = unit, .values = values_.back()};
  }
  std::deque<std::vector<double>> values_;
};

TEST_F(JudgeSeriesTest, PairsByKeyWithNewIgnoredAndOnlyInBase) {
  const std::vector<Series> base = {
      Make("core", "BM_A", "real_time", Around(100)),
      Make("core", "BM_B", "real_time", Around(100)),
      Make("core", "BM_Gone", "real_time", Around(100)),
      Make("core", "BM_Noisy", "real_time", Around(100)),
  };
  const std::vector<Series> contender = {
      Make("core", "BM_B", "real_time", Around(100)),
      Make("core", "BM_Noisy", "real_time", Around(200)),
      Make("core", "BM_A", "real_time", Around(120)),
      Make("core", "BM_Fresh", "real_time", Around(100)),
  };
  const std::vector<ThresholdRule> rules = {{.benchmark = "BM_Noisy", .ignore = true}};
  JudgeOptions options;
  options.rules = rules;
  auto judged = JudgeSeries(base, contender, options);
  ASSERT_TRUE(judged) << judged.error().ToString();

  struct Expected {
    const char* benchmark;
    RowKind kind;
    const char* verdict;
    const char* reason;  // "" for judged rows
    bool has_base;
  };
  const Expected expected[] = {
      {"BM_B", RowKind::kJudged, "EQUIVALENT", "", true},
      {"BM_Noisy", RowKind::kIgnored, "IGNORED", "ignored by a threshold rule", true},
      {"BM_A", RowKind::kJudged, "REGRESSION", "", true},
      {"BM_Fresh", RowKind::kNew, "NEW", "not in the baseline", false},
  };
  ASSERT_EQ(judged->rows.size(), std::size(expected));
  for (size_t i = 0; i < judged->rows.size(); ++i) {
    const Row& row = judged->rows[i];
    const Expected& e = expected[i];
    SCOPED_TRACE(e.benchmark);
    EXPECT_EQ(row.contender->key.benchmark, e.benchmark);
    EXPECT_EQ(row.kind, e.kind);
    EXPECT_EQ(judged->VerdictName(row), e.verdict);
    EXPECT_EQ(row.reason, e.reason);
    EXPECT_EQ(row.base != nullptr, e.has_base);
    EXPECT_EQ(row.threshold, 0.05);
  }
  // The judged rows' verdicts, in row order, under the names of the series.
  ASSERT_EQ(judged->verdicts.metrics.size(), 2u);
  EXPECT_EQ(judged->verdicts.metrics[0].name, "core/BM_B real_time");
  EXPECT_EQ(judged->verdicts.metrics[1].name, "core/BM_A real_time");
  EXPECT_EQ(judged->ignored, 1);
  EXPECT_EQ(judged->added, 1);
  ASSERT_EQ(judged->only_in_base.size(), 1u);
  EXPECT_EQ(judged->only_in_base[0]->key.benchmark, "BM_Gone");

  const std::vector<AttributionInput> attribution = AttributionInputs(*judged);
  ASSERT_EQ(attribution.size(), 4u);
  EXPECT_EQ(attribution[1].verdict, "IGNORED");
  EXPECT_TRUE(std::isnan(attribution[1].change));
  EXPECT_TRUE(attribution[1].base.has_value());
  EXPECT_EQ(attribution[2].verdict, "REGRESSION");
  EXPECT_NEAR(attribution[2].change, 0.2, 1e-9);
  EXPECT_FALSE(attribution[3].base.has_value());
  EXPECT_EQ(attribution[3].current.size(), 10u);
}

// Lever 3 of the paired gate's cost: a benchmark gates its primary metric (real_time here)
// alone; its other metrics are judged in a family of their own and REPORTED. A benchmark with no
// primary metric gates every metric; a rule's `gate` decides for what it matches.
TEST_F(JudgeSeriesTest, GatesEachBenchmarksPrimaryMetricAndReportsTheRest) {
  const std::vector<Series> base = {
      Make("core", "BM_A", "real_time", Around(100)), Make("core", "BM_A", "cpu_time", Around(100)),
      Make("core", "BM_A", "items_per_second", Around(100)), Make("core", "BM_C", "m", Around(100)),
      Make("core", "BM_C", "n", Around(100))};
  const std::vector<Series> contender = {
      Make("core", "BM_A", "real_time", Around(100)), Make("core", "BM_A", "cpu_time", Around(120)),
      Make("core", "BM_A", "items_per_second", Around(100)), Make("core", "BM_C", "m", Around(120)),
      Make("core", "BM_C", "n", Around(100))};
  auto judged = JudgeSeries(base, contender, {});
  ASSERT_TRUE(judged) << judged.error().ToString();
  const bool gated[] = {true, false, false, true, true};
  ASSERT_EQ(judged->rows.size(), std::size(gated));
  for (size_t i = 0; i < std::size(gated); ++i) {
    EXPECT_EQ(judged->rows[i].gated, gated[i]) << i;
    EXPECT_EQ(judged->rows[i].kind, RowKind::kJudged) << i;
  }
  // Two families: Holm counts only the gated metrics; the reported ones are judged among
  // themselves, and still say what the data show (the attribution reads it).
  ASSERT_EQ(judged->verdicts.metrics.size(), 3u);
  ASSERT_EQ(judged->reported.metrics.size(), 2u);
  EXPECT_EQ(judged->reported.metrics[0].name, "core/BM_A cpu_time");
  EXPECT_EQ(judged->VerdictName(judged->rows[1]), "REGRESSION");
  EXPECT_EQ(judged->VerdictOf(judged->rows[1]), &judged->reported.metrics[0]);
  EXPECT_EQ(judged->VerdictName(judged->rows[3]), "REGRESSION");
  const std::vector<AttributionInput> attribution = AttributionInputs(*judged);
  EXPECT_FALSE(attribution[1].gated);
  EXPECT_TRUE(attribution[3].gated);

  // A rule's gate decides for the series it matches, either way.
  const std::vector<ThresholdRule> rules = {{.metric = "cpu_time", .gate = true},
                                            {.benchmark = "BM_C", .metric = "n", .gate = false}};
  JudgeOptions options;
  options.rules = rules;
  judged = JudgeSeries(base, contender, options);
  ASSERT_TRUE(judged);
  EXPECT_TRUE(judged->rows[1].gated);
  EXPECT_FALSE(judged->rows[2].gated);
  EXPECT_FALSE(judged->rows[4].gated);
  EXPECT_EQ(judged->verdicts.metrics.size(), 3u);
}

TEST(Gating, PrimaryMetricsAndBenchmarksWithout) {
  EXPECT_TRUE(IsPrimaryMetric("real_time"));
  EXPECT_TRUE(IsPrimaryMetric("step_time"));
  EXPECT_TRUE(IsPrimaryMetric("wall_time"));
  EXPECT_FALSE(IsPrimaryMetric("cpu_time"));
  EXPECT_FALSE(IsPrimaryMetric("step_tokens_per_second"));
  Gating gating;
  gating.Add({"train", "gpt", "step_time"});
  gating.Add({"train", "gpt", "tokens_per_second"});
  gating.Add({"posted", "own", "latency"});
  EXPECT_TRUE(gating.Gates({"train", "gpt", "step_time"}, nullptr));
  EXPECT_FALSE(gating.Gates({"train", "gpt", "tokens_per_second"}, nullptr));
  EXPECT_TRUE(gating.Gates({"posted", "own", "latency"}, nullptr));  // no primary metric
  const ThresholdRule on{.gate = true}, off{.gate = false}, silent{.percent = 3};
  EXPECT_TRUE(gating.Gates({"train", "gpt", "tokens_per_second"}, &on));
  EXPECT_FALSE(gating.Gates({"train", "gpt", "step_time"}, &off));
  EXPECT_FALSE(gating.Gates({"train", "gpt", "tokens_per_second"}, &silent));
}

TEST_F(JudgeSeriesTest, NoBaseAtAll) {
  const std::vector<Series> contender = {Make("core", "BM_A", "real_time", Around(100)),
                                         Make("core", "BM_B", "real_time", Around(100))};
  const std::vector<ThresholdRule> rules = {{.benchmark = "BM_B", .ignore = true}};
  JudgeOptions options;
  options.rules = rules;
  auto judged = JudgeSeries(std::nullopt, contender, options);
  ASSERT_TRUE(judged);
  EXPECT_EQ(judged->rows[0].kind, RowKind::kNew);
  EXPECT_EQ(judged->rows[0].reason, "no baseline");
  EXPECT_EQ(judged->rows[1].kind, RowKind::kIgnored);  // a rule ignores before NEW is decided
  EXPECT_TRUE(judged->verdicts.metrics.empty());
  EXPECT_TRUE(judged->only_in_base.empty());
}

TEST_F(JudgeSeriesTest, DuplicatesFirstWins) {
  const std::vector<Series> base = {Make("s", "BM_A", "m", Around(100)),
                                    Make("s", "BM_A", "m", Around(500))};  // never pairs
  const std::vector<Series> contender = {Make("s", "BM_A", "m", Around(100)),
                                         Make("s", "BM_A", "m", Around(100))};
  auto judged = JudgeSeries(base, contender, {});
  ASSERT_TRUE(judged);
  ASSERT_EQ(judged->rows.size(), 2u);
  EXPECT_EQ(judged->rows[0].kind, RowKind::kJudged);
  EXPECT_EQ(judged->rows[0].base, &base[0]);
  EXPECT_EQ(judged->VerdictName(judged->rows[0]), "EQUIVALENT");
  EXPECT_EQ(judged->rows[1].kind, RowKind::kNew);  // the base series is taken
  EXPECT_EQ(judged->rows[1].reason, "not in the baseline");
  EXPECT_TRUE(judged->only_in_base.empty());  // the second base series is in neither list
}

TEST_F(JudgeSeriesTest, PairByKeyOrByKeyAndUnit) {
  const std::vector<Series> base = {Make("s", "BM_A", "m", Around(100), "ns")};
  const std::vector<Series> contender = {Make("s", "BM_A", "m", Around(100), "us")};
  JudgeOptions options;
  options.pair_by = PairBy::kKey;
  EXPECT_EQ(JudgeSeries(base, contender, options)->rows[0].kind, RowKind::kJudged);
  options.pair_by = PairBy::kKeyAndUnit;
  auto judged = JudgeSeries(base, contender, options);
  EXPECT_EQ(judged->rows[0].kind, RowKind::kNew);
  EXPECT_EQ(judged->only_in_base.size(), 1u);
}

TEST_F(JudgeSeriesTest, ThresholdAndAlphaPerSeries) {
  const std::vector<Series> base = {Make("s", "BM_Rule", "m", Around(100)),
                                    Make("s", "BM_Own", "m", Around(100)),
                                    Make("s", "BM_Policy", "m", Around(100))};
  std::vector<Series> contender = {Make("s", "BM_Rule", "m", Around(104)),
                                   Make("s", "BM_Own", "m", Around(104)),
                                   Make("s", "BM_Policy", "m", Around(104))};
  contender[1].threshold = 0.01;  // resolved by the caller: wins over the rule
  contender[1].alpha = 0.01;
  const std::vector<ThresholdRule> rules = {{.percent = 10, .alpha = 0.2}};
  JudgeOptions options;
  options.rules = rules;
  options.policy.threshold = 0.02;
  auto judged = JudgeSeries(base, contender, options);
  ASSERT_TRUE(judged);
  EXPECT_DOUBLE_EQ(judged->rows[0].threshold, 0.10);
  EXPECT_DOUBLE_EQ(judged->rows[1].threshold, 0.01);
  EXPECT_EQ(judged->rows[0].rule, &rules[0]);
  EXPECT_DOUBLE_EQ(judged->VerdictOf(judged->rows[0])->threshold, 0.10);
  EXPECT_DOUBLE_EQ(judged->VerdictOf(judged->rows[1])->threshold, 0.01);
  EXPECT_EQ(judged->VerdictOf(judged->rows[0])->verdict, stats::Verdict::kEquivalent);
  EXPECT_EQ(judged->VerdictOf(judged->rows[1])->verdict, stats::Verdict::kRegression);

  options.rules = {};  // the policy's threshold
  judged = JudgeSeries(base, contender, options);
  EXPECT_DOUBLE_EQ(judged->rows[2].threshold, 0.02);
  EXPECT_EQ(judged->VerdictOf(judged->rows[2])->verdict, stats::Verdict::kRegression);
}

TEST_F(JudgeSeriesTest, BaseOrderAndStatsNames) {
  const std::vector<Series> base = {Make("s", "BM_A", "m", Around(100)),
                                    Make("s", "BM_B", "m", Around(100)),
                                    Make("s", "BM_Gone", "m", Around(100))};
  const std::vector<Series> contender = {Make("s", "BM_New", "m", Around(100)),
                                         Make("s", "BM_B", "m", Around(100)),
                                         Make("s", "BM_A", "m", Around(100))};
  JudgeOptions options;
  options.order = RowOrder::kBase;
  options.name = StatsName::kBenchmark;
  auto judged = JudgeSeries(base, contender, options);
  ASSERT_TRUE(judged);
  ASSERT_EQ(judged->rows.size(), 3u);
  EXPECT_EQ(judged->rows[0].contender->key.benchmark, "BM_A");
  EXPECT_EQ(judged->rows[1].contender->key.benchmark, "BM_B");
  EXPECT_EQ(judged->rows[2].contender->key.benchmark, "BM_New");
  EXPECT_EQ(judged->verdicts.metrics[0].name, "BM_A");
  EXPECT_EQ(judged->verdicts.metrics[1].name, "BM_B");
  EXPECT_EQ(NameOf({"s", "BM_A", "m"}, StatsName::kSuiteBenchmark), "s/BM_A");
  EXPECT_EQ(NameOf({"s", "BM_A", "m"}, StatsName::kSeries), "s/BM_A m");
  EXPECT_EQ(SeriesName({"s", "BM_A", "m"}), "s/BM_A m");
}

TEST_F(JudgeSeriesTest, CompareReportListsOneSidedSeriesAndWarns) {
  const std::vector<Series> base = {Make("", "BM_A", "real_time", {1, 2, 3}),
                                    Make("", "BM_Gone", "real_time", Around(1))};
  const std::vector<Series> contender = {Make("", "BM_A", "real_time", {1, 2, 3, 4}),
                                         Make("", "BM_New", "real_time", Around(1))};
  CompareOptions options;
  options.metric = "real_time";
  auto report = Compare("a.json", base, "b.json", contender, options);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->unit, "ns");
  EXPECT_EQ(report->base.source, "a.json");
  EXPECT_EQ(report->base.benchmarks, 2u);
  EXPECT_EQ(report->base.min_repetitions, 3u);
  EXPECT_EQ(report->contender.max_repetitions, 10u);
  EXPECT_EQ(report->only_in_base, std::vector<std::string>{"BM_Gone"});
  EXPECT_EQ(report->only_in_contender, std::vector<std::string>{"BM_New"});
  EXPECT_EQ(report->warnings,
            std::vector<std::string>{
                "1 benchmark(s) only in the base and 1 only in the contender are not compared"});
  options.advise_repetitions = true;
  report = Compare("a.json", base, "b.json", contender, options);
  ASSERT_EQ(report->warnings.size(), 2u);
  EXPECT_EQ(report->warnings[0].rfind("1 of 1 benchmark(s) have fewer than 9 repetitions", 0), 0u)
      << report->warnings[0];
  EXPECT_EQ(ExitCode(*report), 0);
}

}  // namespace
}  // namespace perfwarden::judge
