// SPDX-License-Identifier: Apache-2.0
// The Google Benchmark JSON reader on compare.py's input fixtures (tests/fixtures/oracles): every
// fixture parses, context and times as compare.py reads them, time units normalised, the series
// and the aggregates kept apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runner/adapters/gbench_reader.h"
#include "tests/testing/gbench_reading.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::adapters {
namespace {

using ::perfwarden::testing::ContainsText;
using ::perfwarden::testing::FixturePath;
using ::perfwarden::testing::HasSubstr;
using ::perfwarden::testing::kRel;
using ::perfwarden::testing::MustCollect;
using ::perfwarden::testing::MustRead;
using ::perfwarden::testing::NearRel;

// ---- compare.py's fixtures ------------------------------------------------------------------

struct OracleFileCase {
  const char* file;
  size_t runs;
  size_t aggregates;
  const char* first_name;
};

TEST(GbenchReaderOracles, EveryFixtureParses) {
  // Counts taken with Python's json module.
  const std::vector<OracleFileCase> cases = {
      {"test1_run1.json", 16, 2, "BM_SameTimes"},
      {"test1_run2.json", 16, 2, "BM_SameTimes"},
      {"test2_run.json", 10, 0, "BM_Hi"},
      {"test3_run0.json", 7, 3, "BM_One"},
      {"test3_run1.json", 7, 3, "BM_One"},
      {"test4_run.json", 12, 4, "99 family 0 instance 0 repetition 0"},
      {"test4_run0.json", 1, 1, "whocares"},
      {"test4_run1.json", 1, 1, "whocares"},
      {"test5_run0.json", 1, 0, "BM_ManyRepetitions"},
      {"test5_run1.json", 1, 0, "BM_ManyRepetitions"},
  };
  // The table must list every input fixture of the folder.
  size_t on_disk = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FixturePath("oracles/gbench"))) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("test", 0) == 0 && entry.path().extension() == ".json") ++on_disk;
  }
  EXPECT_EQ(on_disk, cases.size());
  for (const OracleFileCase& c : cases) {
    SCOPED_TRACE(c.file);
    const GbenchFile file = MustRead(std::string("oracles/gbench/") + c.file);
    ASSERT_EQ(file.runs.size(), c.runs);
    EXPECT_EQ(file.runs[0].name, c.first_name);
    EXPECT_EQ(static_cast<size_t>(std::count_if(
                  file.runs.begin(), file.runs.end(),
                  [](const GbenchRun& r) { return r.run_type == GbenchRunType::kAggregate; })),
              c.aggregates);
    EXPECT_PRED_FORMAT2(ContainsText, file.source, HasSubstr(c.file));
  }
}

TEST(GbenchReaderOracles, ExpectedOutputsIsNotBenchmarkOutput) {
  Result<GbenchFile> file = ReadGbenchFile(FixturePath("oracles/gbench/expected_outputs.json"));
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                      HasSubstr("expected_outputs.json: benchmarks: missing"));
  EXPECT_EQ(file.error().field, "benchmarks");
}

TEST(GbenchReaderOracles, Test1ContextTimesAndComplexityRows) {
  const GbenchFile file = MustRead("oracles/gbench/test1_run1.json");
  EXPECT_EQ(file.context.date, "2016-08-02 17:44:46");
  EXPECT_EQ(file.context.num_cpus, 4);
  EXPECT_EQ(file.context.mhz_per_cpu, 4228);
  ASSERT_TRUE(file.context.cpu_scaling_enabled.has_value());
  EXPECT_FALSE(*file.context.cpu_scaling_enabled);
  EXPECT_EQ(file.context.library_build_type, "release");
  EXPECT_TRUE(file.context.extra.empty());

  const GbenchRun& same = file.runs[0];
  EXPECT_EQ(same.run_name, "BM_SameTimes");  // no run_name in the file: the name
  EXPECT_EQ(same.run_type, GbenchRunType::kIteration);
  EXPECT_EQ(same.iterations, 1000);
  EXPECT_EQ(same.real_time_ns, 10);
  EXPECT_EQ(same.cpu_time_ns, 10);
  EXPECT_EQ(same.repetition_index, -1);
  EXPECT_EQ(same.family_index, -1);
  EXPECT_TRUE(same.IsMeasurement());

  const GbenchRun& big_o = file.runs[11];
  EXPECT_EQ(big_o.name, "MyComplexityTest_BigO");
  EXPECT_EQ(big_o.run_name, "MyComplexityTest");
  EXPECT_EQ(big_o.aggregate_name, "BigO");
  EXPECT_FALSE(big_o.IsMeasurement());
  EXPECT_EQ(big_o.counters.at("cpu_coefficient"), 4.274985629459288);
  EXPECT_EQ(big_o.counters.at("real_coefficient"), 6.478927528978978);
  EXPECT_EQ(big_o.counters.count("big_o"), 0u);  // a string, not a counter
  const GbenchRun& rms = file.runs[12];
  EXPECT_EQ(rms.counters.at("rms"), 0.004509780251247287);
  EXPECT_TRUE(std::isnan(rms.real_time_ns));

  EXPECT_EQ(file.runs[13].name, "BM_NotBadTimeUnit");
  EXPECT_TRUE(NearRel(file.runs[13].real_time_ns, 0.4e9, kRel));
  EXPECT_TRUE(NearRel(file.runs[13].cpu_time_ns, 0.5e9, kRel));
  EXPECT_EQ(file.runs[13].time_unit, "s");
  EXPECT_EQ(file.runs[15].label, "a label");

  // The complexity rows are aggregates: 14 measured benchmarks, one value each.
  const std::vector<MetricSeries> real = MustCollect(file, "real_time");
  ASSERT_EQ(real.size(), 14u);
  EXPECT_EQ(real[0].key.benchmark, "BM_SameTimes");
  EXPECT_EQ(real[13].key.benchmark, "BM_hasLabel");
  EXPECT_EQ(real[13].values, std::vector<double>{1e9});
}

struct UnitCase {
  const char* file;
  size_t index;
  const char* unit;
  double real_ns;
  double cpu_ns;
};

TEST(GbenchReaderOracles, TimeUnitsAreNormalisedToNanoseconds) {
  const std::vector<UnitCase> cases = {
      {"test2_run.json", 0, "ms", 42e6, 24e6},
      {"test2_run.json", 9, "ns", 11, 63},
      {"test5_run0.json", 0, "s", 1e9, 1000e9},
      {"test5_run1.json", 0, "s", 1000e9, 1e9},
      {"test1_run2.json", 7, "ns", 1e4, 1e4},  // written as 1.0000e+04
      {"test1_run2.json", 3, "ns", 98.9999999, 98.9999999},
  };
  for (const UnitCase& c : cases) {
    SCOPED_TRACE(std::string(c.file) + "#" + std::to_string(c.index));
    const GbenchFile file = MustRead(std::string("oracles/gbench/") + c.file);
    ASSERT_LT(c.index, file.runs.size());
    const GbenchRun& run = file.runs[c.index];
    EXPECT_EQ(run.time_unit, c.unit);
    EXPECT_TRUE(NearRel(run.real_time_ns, c.real_ns, kRel));
    EXPECT_TRUE(NearRel(run.cpu_time_ns, c.cpu_ns, kRel));
  }
}

struct SeriesCase {
  const char* benchmark;
  std::vector<double> real;
  std::vector<double> cpu;
};

// The U-test inputs of compare.py's TestReportDifferenceWithUTest (fixture README): "short"
// aggregates without aggregate_name are repetitions of "short".
TEST(GbenchReaderOracles, Test3SeriesAsComparePyReadsThem) {
  const std::vector<std::pair<const char*, std::vector<SeriesCase>>> files = {
      {"test3_run0.json",
       {{"BM_One", {10}, {100}},
        {"BM_Two", {9, 8}, {90, 86}},
        {"short", {8, 8}, {80, 77}},
        {"medium", {8, 9}, {80, 82}}}},
      {"test3_run1.json",
       {{"BM_One", {9}, {110}},
        {"BM_Two", {10, 7}, {89, 72}},
        {"short", {7, 4.54, 800}, {75, 66.6, 1}},
        {"medium", {5}, {53}}}},
  };
  for (const auto& [name, expected] : files) {
    SCOPED_TRACE(name);
    const GbenchFile file = MustRead(std::string("oracles/gbench/") + name);
    const std::vector<MetricSeries> real = MustCollect(file, "real_time");
    const std::vector<MetricSeries> cpu = MustCollect(file, "cpu_time");
    ASSERT_EQ(real.size(), expected.size());
    ASSERT_EQ(cpu.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE(expected[i].benchmark);
      EXPECT_EQ(real[i].key.benchmark, expected[i].benchmark);  // order of first appearance
      EXPECT_EQ(real[i].values, expected[i].real);
      EXPECT_EQ(cpu[i].values, expected[i].cpu);
      EXPECT_EQ(real[i].unit, "ns");
      EXPECT_EQ(real[i].direction, Direction::kLowerIsBetter);
      EXPECT_EQ(real[i].skipped, 0);
    }
  }
  const GbenchFile file = MustRead("oracles/gbench/test3_run0.json");
  EXPECT_EQ(file.runs[3].run_type, GbenchRunType::kAggregate);
  EXPECT_TRUE(file.runs[3].aggregate_name.empty());
  EXPECT_TRUE(file.runs[3].IsMeasurement());
}

TEST(GbenchReaderOracles, Test4PercentageAggregatesKeptApart) {
  for (const auto& [name, real, cpu] : std::vector<std::tuple<const char*, double, double>>{
           {"test4_run0.json", 0.01, 0.10}, {"test4_run1.json", 0.005, 0.15}}) {
    SCOPED_TRACE(name);
    const GbenchFile file = MustRead(std::string("oracles/gbench/") + name);
    ASSERT_EQ(file.runs.size(), 1u);
    const GbenchRun& run = file.runs[0];
    EXPECT_EQ(run.run_type, GbenchRunType::kAggregate);
    EXPECT_EQ(run.aggregate_name, "zz");
    EXPECT_EQ(run.aggregate_unit, "percentage");
    EXPECT_FALSE(run.IsMeasurement());
    // A fraction, not a time: not scaled by time_unit.
    EXPECT_EQ(run.real_time_ns, real);
    EXPECT_EQ(run.cpu_time_ns, cpu);
    Result<std::vector<MetricSeries>> series = CollectMetric(file, "real_time");
    ASSERT_FALSE(series.has_value());
    EXPECT_PRED_FORMAT2(ContainsText, series.error().message,
                        HasSubstr("no benchmark reports metric \"real_time\""));
  }
}

TEST(GbenchReaderOracles, Test4OrderingFixtureWithoutTimings) {
  const GbenchFile file = MustRead("oracles/gbench/test4_run.json");
  ASSERT_EQ(file.runs.size(), 12u);
  for (size_t i = 0; i < file.runs.size(); ++i) {
    SCOPED_TRACE(i);
    const GbenchRun& run = file.runs[i];
    EXPECT_EQ(run.family_index, static_cast<int64_t>(i / 6));
    EXPECT_EQ(run.per_family_instance_index, static_cast<int64_t>((i / 3) % 2));
    const bool aggregate = i % 3 == 2;
    EXPECT_EQ(run.run_type, aggregate ? GbenchRunType::kAggregate : GbenchRunType::kIteration);
    EXPECT_EQ(run.aggregate_name, aggregate ? "9 aggregate" : "");
    EXPECT_EQ(run.repetition_index, aggregate ? -1 : static_cast<int64_t>(i % 3));
    EXPECT_TRUE(std::isnan(run.real_time_ns));
    EXPECT_TRUE(std::isnan(run.cpu_time_ns));
    EXPECT_TRUE(run.time_unit.empty());
  }
  EXPECT_EQ(file.context.num_cpus, 0);  // no context at all
  EXPECT_FALSE(CollectMetric(file, "real_time").has_value());
}

}  // namespace
}  // namespace perfwarden::adapters
