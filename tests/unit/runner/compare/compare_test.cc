// SPDX-License-Identifier: Apache-2.0
// `perfwarden compare` against Google Benchmark's own compare.py: its U-test p-values and
// relative changes on its test fixtures (../shared/oracles/gbench), plus the report's
// options, warnings and renderings.
#include "runner/compare/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/threshold_rule.h"
#include "judge/compare_json.h"
#include "runner/compare/report_format.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::compare {
namespace {

using judge::CompareReport;
using judge::ExitCode;
using perfwarden::ParseThreshold;
using perfwarden::testing::FixturePath;
using perfwarden::testing::NearRel;
using perfwarden::testing::ReadFile;

adapters::GbenchFile Load(const std::string& name) {
  auto file = adapters::ReadGbenchFile(FixturePath("oracles/gbench/" + name));
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().ToString());
  return file ? *file : adapters::GbenchFile{};
}

nlohmann::json ExpectedClass(const std::string& name) {
  auto all = nlohmann::json::parse(ReadFile(FixturePath("oracles/gbench/expected_outputs.json")));
  return all["classes"][name];
}

std::map<std::string, const stats::MetricVerdict*> ByName(const CompareReport& report) {
  std::map<std::string, const stats::MetricVerdict*> out;
  for (const auto& m : report.verdicts.metrics) out[m.name] = &m;
  return out;
}

CompareReport CompareMetric(const adapters::GbenchFile& a, const adapters::GbenchFile& b,
                            const std::string& metric) {
  CompareOptions options;
  options.metric = metric;
  auto report = Compare(a, b, options);
  EXPECT_TRUE(report.has_value()) << (report ? "" : report.error().ToString());
  return report ? *report : CompareReport{};
}

// TestReportDifferenceWithUTest: p-values of real_time ("time_pvalue") and cpu_time
// ("cpu_pvalue") equal compare.py's; benchmarks without a U test have none here either.
TEST(CompareMatchesComparePy, UTestPValues) {
  auto cls = ExpectedClass("TestReportDifferenceWithUTest");
  auto base = Load(cls["inputs"][0]);
  auto contender = Load(cls["inputs"][1]);
  auto real = CompareMetric(base, contender, "real_time");
  auto cpu = CompareMetric(base, contender, "cpu_time");
  auto real_by = ByName(real);
  auto cpu_by = ByName(cpu);
  int checked = 0;
  for (const auto& entry : cls["tests"]["test_json_diff_report"]["expected_output"]) {
    const std::string name = entry["name"];
    if (name == "OVERALL_GEOMEAN") continue;
    ASSERT_TRUE(real_by.count(name)) << name;
    if (entry["utest"].empty()) {
      EXPECT_TRUE(std::isnan(real_by[name]->p_utest)) << name;
      EXPECT_TRUE(std::isnan(cpu_by[name]->p_utest)) << name;
      continue;
    }
    EXPECT_TRUE(NearRel(real_by[name]->p_utest, entry["utest"]["time_pvalue"], 1e-12)) << name;
    EXPECT_TRUE(NearRel(cpu_by[name]->p_utest, entry["utest"]["cpu_pvalue"], 1e-12)) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 2);  // BM_Two and short
}

// TestReportDifferenceWithUTestWhileDisplayingAggregatesOnly2: compare.py replicates the one
// benchmark of test5 1000 times per side; both p-values are 0 (to double precision).
TEST(CompareMatchesComparePy, ThousandRepetitions) {
  auto cls = ExpectedClass("TestReportDifferenceWithUTestWhileDisplayingAggregatesOnly2");
  auto base = Load(cls["inputs"][0]);
  auto contender = Load(cls["inputs"][1]);
  for (auto* file : {&base, &contender}) {
    ASSERT_EQ(file->runs.size(), 1u);
    auto run = file->runs[0];
    file->runs.assign(1000, run);
  }
  const auto& expected = cls["tests"]["test_json_diff_report"]["expected_output"][0]["utest"];
  auto real = CompareMetric(base, contender, "real_time");
  auto cpu = CompareMetric(base, contender, "cpu_time");
  ASSERT_EQ(real.verdicts.metrics.size(), 1u);
  EXPECT_EQ(real.verdicts.metrics[0].base.n, expected["nr_of_repetitions"].get<size_t>());
  EXPECT_TRUE(NearRel(real.verdicts.metrics[0].p_utest, expected["time_pvalue"], 0, 1e-300));
  EXPECT_TRUE(NearRel(cpu.verdicts.metrics[0].p_utest, expected["cpu_pvalue"], 0, 1e-300));
  // real_time went from 1 s to 1000 s: a regression; cpu_time from 1000 s to 1 s: improvement.
  EXPECT_EQ(real.verdicts.metrics[0].verdict, stats::Verdict::kRegression);
  EXPECT_EQ(cpu.verdicts.metrics[0].verdict, stats::Verdict::kImprovement);
}

// TestReportDifference (one repetition each): the relative change of every benchmark, for
// real and CPU time, equals compare.py's (time units normalised), and the overall geometric
// mean to 1e-9 (compare.py's is the geometric mean of all times; with every benchmark paired
// and one repetition each it is the geometric mean of the ratios, as perfwarden computes it).
TEST(CompareMatchesComparePy, RelativeChanges) {
  auto cls = ExpectedClass("TestReportDifference");
  auto base = Load(cls["inputs"][0]);
  auto contender = Load(cls["inputs"][1]);
  auto real = CompareMetric(base, contender, "real_time");
  auto cpu = CompareMetric(base, contender, "cpu_time");
  auto real_by = ByName(real);
  auto cpu_by = ByName(cpu);
  int checked = 0;
  for (const auto& entry : cls["tests"]["test_json_diff_report_output"]["expected_output"]) {
    const std::string name = entry["name"];
    const auto& m = entry["measurements"][0];
    if (name == "OVERALL_GEOMEAN") {
      EXPECT_TRUE(NearRel(real.verdicts.suite.geomean_ratio - 1, m["time"], 1e-9));
      EXPECT_TRUE(NearRel(cpu.verdicts.suite.geomean_ratio - 1, m["cpu"], 1e-9));
      continue;
    }
    ASSERT_TRUE(real_by.count(name)) << name;
    // compare.py's tests compare these to 4 decimal places (assertAlmostEqual places=4), and
    // some expected values are written rounded (BM_ThirdFaster -0.3333).
    EXPECT_TRUE(NearRel(real_by[name]->change, m["time"], 0, 5e-5)) << name;
    EXPECT_TRUE(NearRel(cpu_by[name]->change, m["cpu"], 0, 5e-5)) << name;
    // One repetition per side: never a verdict other than INCONCLUSIVE.
    EXPECT_EQ(real_by[name]->verdict, stats::Verdict::kInconclusive) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

adapters::GbenchFile Synthetic(const std::string& source, double factor, int reps) {
  adapters::GbenchFile file;
  file.source = source;
  file.context.host_name = "host-a";
  file.context.library_build_type = "release";
  for (const char* name : {"BM_A", "BM_B"}) {
    for (int r = 0; r < reps; ++r) {
      adapters::GbenchRun run;
      run.name = run.run_name = name;
      run.repetition_index = r;
      double wobble = 1 + 0.002 * ((r * 7) % 5 - 2);
      double f = std::string(name) == "BM_A" ? factor : 1.0;
      run.real_time_ns = 1000 * f * wobble;
      run.cpu_time_ns = 990 * f * wobble;
      run.counters["items_per_second"] = 1e9 / (1000 * f * wobble);
      file.runs.push_back(run);
    }
  }
  return file;
}

TEST(CompareTest, RegressionExitCodeAndFormats) {
  auto base = Synthetic("base.json", 1.0, 10);
  auto contender = Synthetic("contender.json", 1.10, 10);
  CompareOptions options;
  auto report = Compare(base, contender, options);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(ExitCode(*report), 1);
  auto by = ByName(*report);
  EXPECT_EQ(by["BM_A"]->verdict, stats::Verdict::kRegression);
  EXPECT_EQ(by["BM_B"]->verdict, stats::Verdict::kEquivalent);

  // JSON: the documented object.
  auto json = nlohmann::json::parse(judge::CompareReportJson(*report));
  for (const char* key : {"metric", "threshold", "alpha", "benchmarks", "suite"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  ASSERT_EQ(json["benchmarks"].size(), 2u);
  const auto& a = json["benchmarks"][0];
  for (const char* key : {"name", "base", "contender", "change", "change_ci", "p_welch", "p_utest",
                          "p_adjusted", "verdict"}) {
    EXPECT_TRUE(a.contains(key)) << key;
  }
  EXPECT_EQ(a["name"], "BM_A");
  EXPECT_EQ(a["verdict"], "REGRESSION");
  EXPECT_EQ(a["base"]["n"], 10);
  EXPECT_TRUE(a["change_ci"].is_array());
  EXPECT_EQ(json["suite"]["ci"].size(), 2u);
  EXPECT_DOUBLE_EQ(json["threshold"].get<double>(), 0.05);

  std::string text = FormatText(*report);
  EXPECT_NE(text.find("REGRESSION"), std::string::npos);
  EXPECT_NE(text.find("BM_A"), std::string::npos);
  EXPECT_LT(text.find("BM_A"), text.find("BM_B")) << "regressions are listed first";
  std::string markdown = FormatMarkdown(*report);
  EXPECT_NE(markdown.find("| `BM_A` |"), std::string::npos);
  EXPECT_NE(markdown.find("regression found"), std::string::npos);

  // Throughput counter: higher is better, so the drop is a regression too.
  options.metric = "items_per_second";
  report = Compare(base, contender, options);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->direction, Direction::kHigherIsBetter);
  EXPECT_EQ(ByName(*report)["BM_A"]->verdict, stats::Verdict::kRegression);
  // Overriding the direction turns it into an improvement.
  options.direction = Direction::kLowerIsBetter;
  report = Compare(base, contender, options);
  ASSERT_TRUE(report);
  EXPECT_EQ(ByName(*report)["BM_A"]->verdict, stats::Verdict::kImprovement);
  EXPECT_EQ(ExitCode(*report), 0);
}

TEST(CompareTest, WarningsForEnvironmentAndRepetitions) {
  auto base = Synthetic("base.json", 1.0, 3);
  auto contender = Synthetic("contender.json", 1.0, 3);
  base.context.library_build_type = "debug";
  contender.context.cpu_scaling_enabled = true;
  contender.context.host_name = "host-b";
  auto report = Compare(base, contender, {});
  ASSERT_TRUE(report);
  std::string all;
  for (const auto& w : report->warnings) all += w + "\n";
  EXPECT_NE(all.find("debug"), std::string::npos) << all;
  EXPECT_NE(all.find("frequency scaling"), std::string::npos) << all;
  EXPECT_NE(all.find("different hosts"), std::string::npos) << all;
  EXPECT_NE(all.find("fewer than 9 repetitions"), std::string::npos) << all;
  EXPECT_NE(all.find("--benchmark_repetitions="), std::string::npos) << all;
}

TEST(CompareTest, FilterAndMismatchedBenchmarks) {
  auto base = Synthetic("base.json", 1.0, 5);
  auto contender = Synthetic("contender.json", 1.0, 5);
  CompareOptions options;
  options.filter = "^BM_B$";
  auto report = Compare(base, contender, options);
  ASSERT_TRUE(report);
  ASSERT_EQ(report->verdicts.metrics.size(), 1u);
  EXPECT_EQ(report->verdicts.metrics[0].name, "BM_B");

  options.filter = "(";
  auto bad = Compare(base, contender, options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field, "filter");

  options.filter = "nothing-matches";
  bad = Compare(base, contender, options);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no benchmark"), std::string::npos);

  options = {};
  options.metric = "no_such_counter";
  bad = Compare(base, contender, options);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().ToString().find("no_such_counter"), std::string::npos);

  // Benchmarks present on one side only are listed and warned about.
  contender.runs.erase(contender.runs.begin(), contender.runs.begin() + 5);  // drop BM_A
  report = Compare(base, contender, {});
  ASSERT_TRUE(report);
  EXPECT_EQ(report->only_in_base, std::vector<std::string>{"BM_A"});
}

TEST(CompareTest, ParseThreshold) {
  EXPECT_DOUBLE_EQ(*ParseThreshold("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseThreshold("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(*ParseThreshold("2.5%"), 0.025);
  EXPECT_DOUBLE_EQ(*ParseThreshold("150%"), 1.5);
  for (const char* bad : {"", "%", "five", "-5%", "0", "5", "nan%", "5%%", "1e400%"}) {
    auto r = ParseThreshold(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().field, "threshold");
    }
  }
}

TEST(FormatValueTest, Units) {
  EXPECT_EQ(FormatValue(999, "ns"), "999 ns");
  EXPECT_EQ(FormatValue(12345, "ns"), "12.35 us");
  EXPECT_EQ(FormatValue(2.5e6, "ns"), "2.5 ms");
  EXPECT_EQ(FormatValue(3e9, "ns"), "3 s");
  EXPECT_EQ(FormatValue(1.25e9, "1/s"), "1.25G/s");
  EXPECT_EQ(FormatValue(0.981, ""), "0.981");
  EXPECT_EQ(FormatValue(NAN, "ns"), "-");
}

}  // namespace
}  // namespace perfwarden::compare
