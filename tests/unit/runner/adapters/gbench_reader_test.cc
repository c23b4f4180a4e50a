// Tests of the Google Benchmark JSON reader: compare.py's input fixtures, real Google Benchmark
// 1.7.1 outputs (tests/fixtures/gbench/README.md says how they were made), the non-finite
// tokens, and every error path, each error naming its source and its place.
#include "runner/adapters/gbench_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runner/adapters/json_text.h"
#include "tests/testing/oracle_csv.h"

namespace perfgate::adapters {
namespace {

using ::perfgate::testing::FixturePath;
using ::perfgate::testing::NearRel;
using ::perfgate::testing::ReadFile;

// gmock is not linked: "message contains part" as a gtest predicate, failing with both texts.
::testing::AssertionResult ContainsText(const char* text_expr, const char* part_expr,
                                        const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text_expr << " does not contain " << part_expr
                                       << "\n  text: " << text << "\n  part: " << part;
}
std::string HasSubstr(std::string part) { return part; }

// Values are read from decimal text and scaled by at most 1e9; one rounding each way.
constexpr double kRel = 1e-15;

GbenchFile MustParse(const std::string& text, const std::string& source = "t.json") {
  Result<GbenchFile> file = ParseGbenchJson(text, source);
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().message);
  return file ? *file : GbenchFile{};
}

GbenchFile MustRead(const std::string& relative) {
  Result<GbenchFile> file = ReadGbenchFile(FixturePath(relative));
  EXPECT_TRUE(file.has_value()) << relative << ": " << (file ? "" : file.error().message);
  return file ? *file : GbenchFile{};
}

const MetricSeries* Find(const std::vector<MetricSeries>& series, const std::string& name) {
  for (const MetricSeries& one : series) {
    if (one.benchmark == name) return &one;
  }
  return nullptr;
}

std::vector<MetricSeries> MustCollect(const GbenchFile& file, const std::string& metric) {
  Result<std::vector<MetricSeries>> series = CollectMetric(file, metric);
  EXPECT_TRUE(series.has_value()) << metric << ": " << (series ? "" : series.error().message);
  return series ? *series : std::vector<MetricSeries>{};
}

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
  EXPECT_EQ(real[0].benchmark, "BM_SameTimes");
  EXPECT_EQ(real[13].benchmark, "BM_hasLabel");
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
      EXPECT_EQ(real[i].benchmark, expected[i].benchmark);  // order of first appearance
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

// ---- Real Google Benchmark 1.7.1 outputs ----------------------------------------------------

TEST(GbenchReaderReal, SampleContext) {
  const GbenchFile file = MustRead("gbench/sample_gb171_reps3.json");
  const GbenchContext& context = file.context;
  EXPECT_EQ(context.date, "2026-11-22T03:35:11+00:00");
  EXPECT_EQ(context.host_name, "vm");
  EXPECT_EQ(context.executable, "./gbench_sample");
  EXPECT_EQ(context.num_cpus, 2);
  EXPECT_EQ(context.mhz_per_cpu, 2596);
  ASSERT_TRUE(context.cpu_scaling_enabled.has_value());
  EXPECT_FALSE(*context.cpu_scaling_enabled);
  EXPECT_EQ(context.library_build_type, "debug");
  ASSERT_EQ(context.caches.size(), 4u);
  EXPECT_EQ(context.caches[0].type, "Data");
  EXPECT_EQ(context.caches[1].type, "Instruction");
  EXPECT_EQ(context.caches[3].type, "Unified");
  EXPECT_EQ(context.caches[3].level, 3);
  EXPECT_EQ(context.caches[3].size, 33554432);
  EXPECT_EQ(context.caches[3].num_sharing, 2);
  EXPECT_EQ(context.load_avg, (std::vector<double>{2.92578, 1.12891, 0.433105}));
  ASSERT_EQ(context.extra.size(), 1u);
  EXPECT_EQ(context.extra.at("ci_job"), "\"demo\"");
}

TEST(GbenchReaderReal, SampleRunsAndAggregates) {
  const GbenchFile file = MustRead("gbench/sample_gb171_reps3.json");
  ASSERT_EQ(file.runs.size(), 21u);  // 3 benchmarks x (3 repetitions + mean, median, stddev, cv)
  const GbenchRun& first = file.runs[0];
  EXPECT_EQ(first.name, "BM_Sort/1024");
  EXPECT_EQ(first.run_name, "BM_Sort/1024");
  EXPECT_EQ(first.family_index, 0);
  EXPECT_EQ(first.per_family_instance_index, 0);
  EXPECT_EQ(first.repetitions, 3);
  EXPECT_EQ(first.repetition_index, 0);
  EXPECT_EQ(first.threads, 1);
  EXPECT_EQ(first.iterations, 1930);
  EXPECT_EQ(first.real_time_ns, 1.7606143523237974e+04);
  EXPECT_EQ(first.cpu_time_ns, 7.2252538860103623e+03);
  EXPECT_EQ(first.time_unit, "ns");
  EXPECT_EQ(first.counters,
            (std::map<std::string, double>{{"items_per_second", 1.4172512359498993e+08}}));
  EXPECT_FALSE(first.skipped);

  const GbenchRun& cv = file.runs[6];
  EXPECT_EQ(cv.name, "BM_Sort/1024_cv");
  EXPECT_EQ(cv.run_name, "BM_Sort/1024");
  EXPECT_EQ(cv.aggregate_name, "cv");
  EXPECT_EQ(cv.aggregate_unit, "percentage");
  EXPECT_EQ(cv.repetition_index, -1);
  EXPECT_EQ(cv.real_time_ns, 0.2843031463799072);
  EXPECT_FALSE(cv.IsMeasurement());

  // Google Benchmark's own mean and median aggregates agree with the repetitions we collect.
  for (const char* metric : {"real_time", "cpu_time"}) {
    SCOPED_TRACE(metric);
    const std::vector<MetricSeries> series = MustCollect(file, metric);
    ASSERT_EQ(series.size(), 3u);
    for (const MetricSeries& one : series) {
      SCOPED_TRACE(one.benchmark);
      ASSERT_EQ(one.values.size(), 3u);
      std::vector<double> sorted = one.values;
      std::sort(sorted.begin(), sorted.end());
      const double mean = (one.values[0] + one.values[1] + one.values[2]) / 3;
      for (const GbenchRun& run : file.runs) {
        if (run.run_name != one.benchmark) continue;
        const double value =
            std::string(metric) == "real_time" ? run.real_time_ns : run.cpu_time_ns;
        // GB sums in another order and prints 17 digits: a few ulps apart.
        if (run.aggregate_name == "mean") {
          EXPECT_TRUE(NearRel(value, mean, 1e-14));
        } else if (run.aggregate_name == "median") {
          EXPECT_TRUE(NearRel(value, sorted[1], 1e-14));
        }
      }
    }
  }
  EXPECT_EQ(MustCollect(file, "real_time")[1].benchmark, "BM_Hash/16384");

  const std::vector<MetricSeries> bytes = MustCollect(file, "bytes_per_second");
  ASSERT_EQ(bytes.size(), 2u);  // BM_Sort reports items only
  EXPECT_EQ(bytes[0].benchmark, "BM_Hash/16384");
  EXPECT_EQ(bytes[1].benchmark, "BM_ParseInts/1024");
  EXPECT_EQ(bytes[0].unit, "1/s");
  EXPECT_EQ(bytes[0].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(bytes[0].values[0], 915006459.6777407);
  const std::vector<MetricSeries> items = MustCollect(file, "items_per_second");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].benchmark, "BM_Sort/1024");
  EXPECT_EQ(items[1].values.size(), 3u);
}

TEST(GbenchReaderReal, FeaturesErrorsCountersUnitsComplexity) {
  const GbenchFile file = MustRead("gbench/features_gb171.json");
  ASSERT_EQ(file.runs.size(), 14u);
  EXPECT_EQ(file.context.extra.at("pr"), "\"123\"");

  const GbenchRun& errored = file.runs[1];
  EXPECT_EQ(errored.name, "BM_Errors/1");
  EXPECT_TRUE(errored.error_occurred);
  EXPECT_TRUE(errored.skipped);
  EXPECT_EQ(errored.error_message, "resource unavailable");

  const GbenchRun& counters = file.runs[2];
  EXPECT_EQ(counters.time_unit, "us");
  EXPECT_TRUE(NearRel(counters.real_time_ns, 4.0059614595583055e-02 * 1e3, kRel));
  EXPECT_TRUE(NearRel(counters.cpu_time_ns, 1.8594519727883882e-02 * 1e3, kRel));
  EXPECT_EQ(counters.label, "label with \"quotes\"");
  EXPECT_EQ(counters.counters.size(), 6u);
  EXPECT_EQ(counters.counters.at("custom"), 42.5);
  EXPECT_TRUE(std::isnan(counters.counters.at("nan_counter")));
  EXPECT_TRUE(std::isnan(counters.counters.at("neg_nan_counter")));
  EXPECT_EQ(counters.counters.at("inf_counter"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(counters.counters.at("neg_inf_counter"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(counters.counters.at("ops"), 3.4418743230042763e+09);

  EXPECT_EQ(file.runs[3].time_unit, "ms");
  EXPECT_TRUE(NearRel(file.runs[3].real_time_ns, 1.3936520763801544e-04 * 1e6, kRel));
  const GbenchRun& big_o = file.runs[6];
  EXPECT_EQ(big_o.aggregate_name, "BigO");
  EXPECT_EQ(big_o.counters.at("cpu_coefficient"), 2.7783309770013781e-01);
  const GbenchRun& rms = file.runs[7];
  EXPECT_EQ(rms.aggregate_unit, "percentage");
  EXPECT_EQ(rms.counters.at("rms"), 1.0343650052389367e-02);

  const GbenchRun& threads = file.runs[8];
  EXPECT_EQ(threads.threads, 2);
  EXPECT_EQ(threads.time_unit, "s");
  EXPECT_TRUE(NearRel(threads.real_time_ns, 3.3463950969800782e-10 * 1e9, kRel));
  const GbenchRun& cv = file.runs[13];
  EXPECT_EQ(cv.aggregate_name, "cv");
  EXPECT_EQ(cv.real_time_ns, 7.6678805221533280e-02);  // unscaled although time_unit is "s"

  const std::vector<MetricSeries> real = MustCollect(file, "real_time");
  ASSERT_EQ(real.size(), 7u);  // 2 BM_Errors, BM_Counters, 3 BM_Complexity, BM_Threads
  const MetricSeries* failed = Find(real, "BM_Errors/1");
  ASSERT_NE(failed, nullptr);
  EXPECT_TRUE(failed->values.empty());
  EXPECT_EQ(failed->skipped, 1);
  EXPECT_EQ(Find(real, "BM_Threads/repeats:2/threads:2")->values.size(), 2u);
  EXPECT_EQ(Find(real, "BM_Complexity"), nullptr) << "BigO/RMS rows are aggregates";
}

TEST(GbenchReaderReal, NonFiniteCounterIsAnErrorNamingBenchmarkAndRepetition) {
  const GbenchFile file = MustRead("gbench/features_gb171.json");
  for (const auto& [metric, shown] :
       std::vector<std::pair<std::string, std::string>>{{"nan_counter", "is NaN"},
                                                        {"neg_nan_counter", "is NaN"},
                                                        {"inf_counter", "is Infinity"},
                                                        {"neg_inf_counter", "is -Infinity"}}) {
    SCOPED_TRACE(metric);
    Result<std::vector<MetricSeries>> series = CollectMetric(file, metric);
    ASSERT_FALSE(series.has_value());
    EXPECT_EQ(series.error().code, ErrorCode::kInvalidArgument);
    EXPECT_PRED_FORMAT2(
        ContainsText, series.error().message,
        HasSubstr("features_gb171.json: BM_Counters repetition 0: " + metric + " " + shown));
    EXPECT_EQ(series.error().field, "benchmarks[2]." + metric);
  }
  const std::vector<MetricSeries> custom = MustCollect(file, "custom");
  ASSERT_EQ(custom.size(), 1u);
  EXPECT_EQ(custom[0].unit, "");
  EXPECT_EQ(custom[0].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(custom[0].values, std::vector<double>{42.5});
}

TEST(GbenchReaderHandWritten, NewSkippedSpellingAndContextExtras) {
  const GbenchFile file = MustRead("gbench/skipped_gb18_handwritten.json");
  EXPECT_TRUE(*file.context.cpu_scaling_enabled);
  EXPECT_TRUE(file.context.caches.empty());
  ASSERT_EQ(file.context.load_avg.size(), 3u);
  EXPECT_TRUE(std::isnan(file.context.load_avg[1]));
  EXPECT_EQ(file.context.load_avg[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(file.context.extra,
            (std::map<std::string, std::string>{{"json_schema_version", "1"},
                                                {"library_version", "\"v1.8.3\""},
                                                {"owner", "\"perf-team\""}}));
  ASSERT_EQ(file.runs.size(), 4u);
  EXPECT_TRUE(NearRel(file.runs[0].real_time_ns, 1500, kRel));
  EXPECT_TRUE(file.runs[1].skipped);
  EXPECT_FALSE(file.runs[1].error_occurred);
  EXPECT_EQ(file.runs[1].skip_message, "no device");
  EXPECT_TRUE(file.runs[2].skipped);
  EXPECT_TRUE(file.runs[2].error_occurred);
  EXPECT_EQ(file.runs[2].error_message, "read failed");
  EXPECT_TRUE(std::isnan(file.runs[2].real_time_ns));  // errored: no timing needed
  EXPECT_TRUE(std::isnan(file.runs[3].real_time_ns));
  EXPECT_TRUE(NearRel(file.runs[3].cpu_time_ns, 2e6, kRel));
  EXPECT_EQ(file.runs[3].counters.at("ratio"), -std::numeric_limits<double>::infinity());

  Result<std::vector<MetricSeries>> real = CollectMetric(file, "real_time");
  ASSERT_FALSE(real.has_value());  // BM_Rate's real_time is NaN
  EXPECT_PRED_FORMAT2(
      ContainsText, real.error().message,
      HasSubstr("skipped_gb18_handwritten.json: BM_Rate repetition 0: real_time is NaN"));
  const std::vector<MetricSeries> cpu = MustCollect(file, "cpu_time");
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_TRUE(NearRel(cpu[0].values.at(0), 1250, kRel));
  EXPECT_EQ(cpu[0].values.size(), 1u);
  EXPECT_EQ(cpu[0].skipped, 2);
}

// ---- The bundled demo results of bench/workloads/gbench_sample ----------------------------

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The demo must show exactly one regression: BM_Sort/16384 made 10% slower by
// PERFGATE_SAMPLE_SLOWDOWN, every other benchmark unchanged (see the sample's README.md).
TEST(GbenchReaderBundled, SampleResultsShowOneTenPercentRegression) {
  const std::string folder = "../../bench/workloads/gbench_sample/results/";
  const GbenchFile base = MustRead(folder + "base.json");
  const GbenchFile contender = MustRead(folder + "contender.json");
  EXPECT_EQ(base.context.extra.count("perfgate_sample_slowdown"), 0u);
  EXPECT_EQ(contender.context.extra.at("perfgate_sample_slowdown"), "\"BM_Sort/16384=10\"");
  for (const char* metric : {"real_time", "cpu_time", "items_per_second"}) {
    SCOPED_TRACE(metric);
    const std::vector<MetricSeries> before = MustCollect(base, metric);
    const std::vector<MetricSeries> after = MustCollect(contender, metric);
    ASSERT_EQ(before.size(), std::string(metric) == "items_per_second" ? 9u : 12u);
    ASSERT_EQ(after.size(), before.size());
    for (const MetricSeries& one : before) {
      SCOPED_TRACE(one.benchmark);
      const MetricSeries* other = Find(after, one.benchmark);
      ASSERT_NE(other, nullptr);
      ASSERT_EQ(one.values.size(), 10u);
      ASSERT_EQ(other->values.size(), 10u);
      const double change = Median(other->values) / Median(one.values) - 1;
      // Rates fall by 1 - 1/1.1 when times grow by 10%.
      const double expected = one.benchmark != "BM_Sort/16384"            ? 0.0
                              : std::string(metric) == "items_per_second" ? 1 / 1.1 - 1
                                                                          : 0.1;
      EXPECT_NEAR(change, expected, 0.02);
    }
  }
}

// ---- Non-finite tokens ----------------------------------------------------------------------

TEST(GbenchReaderNonFinite, TokensOutsideStringsBecomeNumbers) {
  const GbenchFile file = MustParse(
      R"({"context": {"custom": [NaN, 1.5, -Infinity, "NaN"], "x":-NaN},
          "benchmarks": [{"name": "NaN Infinity", "label": "-Infinity, NaN",
                          "iterations": 1, "real_time": NaN, "cpu_time":-Infinity,
                          "time_unit": "ns", "up":Infinity, "NaN": -NaN}]})");
  ASSERT_EQ(file.runs.size(), 1u);
  const GbenchRun& run = file.runs[0];
  EXPECT_EQ(run.name, "NaN Infinity");
  EXPECT_EQ(run.label, "-Infinity, NaN");
  EXPECT_TRUE(std::isnan(run.real_time_ns));
  EXPECT_EQ(run.cpu_time_ns, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run.counters.at("up"), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(run.counters.at("NaN")));
  // Written back in the same dialect, so the context stays lossless.
  EXPECT_EQ(file.context.extra.at("custom"), R"([NaN,1.5,-Infinity,"NaN"])");
  EXPECT_EQ(file.context.extra.at("x"), "-NaN");
}

TEST(GbenchReaderNonFinite, DumpRoundTrips) {
  for (const char* text : {"NaN", "-NaN", "Infinity", "-Infinity",
                           R"({"a":[1,2.5,NaN],"b":{"c":"NaN"}})", R"(["\u0000NaN"])"}) {
    SCOPED_TRACE(text);
    Result<nlohmann::json> value = ParseJsonText(text, "t");
    ASSERT_TRUE(value.has_value()) << value.error().message;
    Result<nlohmann::json> again = ParseJsonText(DumpJsonText(*value), "t");
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(DumpJsonText(*again), DumpJsonText(*value));
  }
}

// ---- Errors ---------------------------------------------------------------------------------

struct ErrorCase {
  const char* what;
  std::string text;
  std::vector<std::string> expected;  // substrings of the message
  std::string field;                  // expected Error::field ("" when a position is given)
};

const std::string kGoodRun =
    R"({"name": "ok", "iterations": 10, "real_time": 1, "cpu_time": 1, "time_unit": "ns"})";

std::string WithRun(const std::string& run) {
  return R"({"benchmarks": [)" + kGoodRun + ", " + run + "]}";
}

TEST(GbenchReaderErrors, TableOfMalformedInputs) {
  const std::vector<ErrorCase> cases = {
      {"empty",
       "",
       {"base.json:1:1: invalid JSON:", "unexpected end of input", "(the input is empty)"},
       ""},
      {"blank lines", "\n\n  ", {"base.json:3:3: invalid JSON:", "unexpected end of input"}, ""},
      {"missing colon", R"({"benchmarks" []})", {"base.json:1:15:", "expected ':'"}, ""},
      {"trailing garbage",
       "{\"benchmarks\": []}\nx",
       {"base.json:2:1:", "expected end of input"},
       ""},
      {"bad literal after NaN tokens",
       "{\"a\": NaN, \"b\": -Infinity,\n \"c\": tru}",
       {"base.json:2:10:", "invalid literal"},
       ""},
      {"truncated after NaN",
       R"({"benchmarks": [{"real_time": NaN,)",
       {"base.json:1:35:", "unexpected end of input", "(the input ends there: truncated?)"},
       ""},
      {"NaN as a key", R"({"benchmarks": [], NaN: 1})", {"base.json:1:20:", "invalid literal"}, ""},
      {"token glued to a word", R"({"benchmarks": [], "a": NaNa})", {"base.json:1:"}, ""},
      {"lowercase nan", R"({"benchmarks": [], "a": nan})", {"base.json:1:26:"}, ""},
      {"number overflow",
       "{\"benchmarks\": [],\n\"a\": 1e999}",
       {"base.json:2:", "number overflow"},
       ""},
      {"invalid UTF-8", "{\"benchmarks\": [], \"a\": \"\xff\"}", {"base.json:1:", "UTF-8"}, ""},
      {"nesting too deep", std::string(300, '['), {"base.json:1:257:", "nesting deeper"}, ""},
      {"top level array", "[]", {"base.json: expected a JSON object", "got an array"}, ""},
      {"top level NaN", "NaN", {"base.json: expected a JSON object", "got a number"}, ""},
      {"missing benchmarks",
       R"({"context": {}})",
       {"base.json: benchmarks: missing"},
       "benchmarks"},
      {"benchmarks not an array",
       R"({"benchmarks": {}})",
       {"base.json: benchmarks: expected an array, got an object"},
       "benchmarks"},
      {"entry not an object",
       R"({"benchmarks": [1]})",
       {"base.json: benchmarks[0]: expected an object, got a number"},
       "benchmarks[0]"},
      {"name missing",
       WithRun(R"({"real_time": 1})"),
       {"base.json: benchmarks[1].name: missing"},
       "benchmarks[1].name"},
      {"name not a string",
       WithRun(R"({"name": 7})"),
       {"base.json: benchmarks[1].name: expected a string, got a number"},
       "benchmarks[1].name"},
      {"real_time a string",
       R"({"benchmarks": [)" + kGoodRun + "," + kGoodRun + "," + kGoodRun + "," +
           R"({"name": "x", "iterations": 1, "real_time": "12", "cpu_time": 1, "time_unit": "ns"}]})",
       {"base.json: benchmarks[3].real_time: expected a number, got a string"},
       "benchmarks[3].real_time"},
      {"cpu_time null",
       WithRun(R"({"name": "x", "real_time": 1, "cpu_time": null})"),
       {"base.json: benchmarks[1].cpu_time: expected a number, got null"},
       "benchmarks[1].cpu_time"},
      {"iterations fractional",
       WithRun(R"({"name": "x", "iterations": 1.5})"),
       {"base.json: benchmarks[1].iterations: expected an integer, got 1.5"},
       "benchmarks[1].iterations"},
      {"iterations too large",
       WithRun(R"({"name": "x", "iterations": 18446744073709551615})"),
       {"base.json: benchmarks[1].iterations: integer 18446744073709551615 is out of range"},
       "benchmarks[1].iterations"},
      {"threads a string",
       WithRun(R"({"name": "x", "threads": "2"})"),
       {"base.json: benchmarks[1].threads: expected an integer, got a string"},
       "benchmarks[1].threads"},
      {"repetition_index NaN",
       WithRun(R"({"name": "x", "repetition_index": NaN})"),
       {"base.json: benchmarks[1].repetition_index: expected an integer, got NaN"},
       "benchmarks[1].repetition_index"},
      {"error_occurred a string",
       WithRun(R"({"name": "x", "error_occurred": "yes"})"),
       {"base.json: benchmarks[1].error_occurred: expected a boolean, got a string"},
       "benchmarks[1].error_occurred"},
      {"skipped a number",
       WithRun(R"({"name": "x", "skipped": 1})"),
       {"base.json: benchmarks[1].skipped: expected a boolean, got a number"},
       "benchmarks[1].skipped"},
      {"label an array",
       WithRun(R"({"name": "x", "label": []})"),
       {"base.json: benchmarks[1].label: expected a string, got an array"},
       "benchmarks[1].label"},
      {"unknown run_type",
       WithRun(R"({"name": "x", "run_type": "warmup"})"),
       {"base.json: benchmarks[1].run_type: expected \"iteration\" or \"aggregate\", got "
        "\"warmup\""},
       "benchmarks[1].run_type"},
      {"unknown time_unit",
       WithRun(
           R"({"name": "x", "iterations": 1, "real_time": 1, "cpu_time": 1, "time_unit": "xs"})"),
       {"base.json: benchmarks[1].time_unit: unknown time_unit \"xs\""},
       "benchmarks[1].time_unit"},
      {"time_unit a number",
       WithRun(R"({"name": "x", "time_unit": 1})"),
       {"base.json: benchmarks[1].time_unit: expected a string, got a number"},
       "benchmarks[1].time_unit"},
      {"iteration without real_time",
       WithRun(R"({"name": "x", "iterations": 1, "cpu_time": 1, "time_unit": "ns"})"),
       {"base.json: benchmarks[1].real_time: missing"},
       "benchmarks[1].real_time"},
      {"iteration without cpu_time",
       WithRun(R"({"name": "x", "iterations": 1, "real_time": 1, "time_unit": "ns"})"),
       {"base.json: benchmarks[1].cpu_time: missing"},
       "benchmarks[1].cpu_time"},
      {"iteration with a unit and no times",
       WithRun(R"({"name": "x", "time_unit": "ns"})"),
       {"base.json: benchmarks[1].real_time: missing"},
       "benchmarks[1].real_time"},
      {"context not an object",
       R"({"context": [], "benchmarks": []})",
       {"base.json: context: expected an object, got an array"},
       "context"},
      {"num_cpus a string",
       R"({"context": {"num_cpus": "2"}, "benchmarks": []})",
       {"base.json: context.num_cpus: expected an integer, got a string"},
       "context.num_cpus"},
      {"mhz_per_cpu a boolean",
       R"({"context": {"mhz_per_cpu": true}, "benchmarks": []})",
       {"base.json: context.mhz_per_cpu: expected a number, got a boolean"},
       "context.mhz_per_cpu"},
      {"cpu_scaling_enabled a string",
       R"({"context": {"cpu_scaling_enabled": "false"}, "benchmarks": []})",
       {"base.json: context.cpu_scaling_enabled: expected a boolean, got a string"},
       "context.cpu_scaling_enabled"},
      {"caches an object",
       R"({"context": {"caches": {}}, "benchmarks": []})",
       {"base.json: context.caches: expected an array, got an object"},
       "context.caches"},
      {"cache size a string",
       R"({"context": {"caches": [{"level": 1}, {"size": "32K"}]}, "benchmarks": []})",
       {"base.json: context.caches[1].size: expected an integer, got a string"},
       "context.caches[1].size"},
      {"cache entry a string",
       R"({"context": {"caches": ["L1"]}, "benchmarks": []})",
       {"base.json: context.caches[0]: expected an object, got a string"},
       "context.caches[0]"},
      {"load_avg item a string",
       R"({"context": {"load_avg": [1, 2, "3"]}, "benchmarks": []})",
       {"base.json: context.load_avg[2]: expected a number, got a string"},
       "context.load_avg[2]"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.what);
    Result<GbenchFile> file = ParseGbenchJson(c.text, "base.json");
    ASSERT_FALSE(file.has_value());
    EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
    for (const std::string& part : c.expected)
      EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr(part));
    EXPECT_EQ(file.error().field, c.field);
  }
}

TEST(GbenchReaderErrors, TruncatedRealOutputNamesTheEndPosition) {
  const std::string text = ReadFile(FixturePath("gbench/sample_gb171_reps3.json"));
  ASSERT_GT(text.size(), 1000u);
  // Every 173rd byte, plus cuts inside a string, a number, a literal and after a comma.
  std::vector<size_t> cuts;
  for (size_t cut = 1; cut < text.size() - 2; cut += 173) cuts.push_back(cut);
  for (const char* marker : {"\"BM_Hash/16", "1.7606143", "fal", "\"ns\",", "[2.92578,"}) {
    const size_t at = text.find(marker);
    ASSERT_NE(at, std::string::npos) << marker;
    cuts.push_back(at + std::string(marker).size());
  }
  cuts.push_back(text.rfind(']') + 1);  // only the final brace missing
  for (size_t cut : cuts) {
    const std::string truncated = text.substr(0, cut);
    SCOPED_TRACE("cut at " + std::to_string(cut) + ": ..." +
                 truncated.substr(truncated.size() - std::min<size_t>(20, truncated.size())));
    // The parser notices only at the end of the text.
    const size_t line =
        1 + static_cast<size_t>(std::count(truncated.begin(), truncated.end(), '\n'));
    const size_t last_newline = truncated.rfind('\n');
    const size_t column =
        truncated.size() - (last_newline == std::string::npos ? 0 : last_newline + 1) + 1;
    Result<GbenchFile> file = ParseGbenchJson(truncated, "base.json");
    ASSERT_FALSE(file.has_value());
    EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                        HasSubstr("base.json:" + std::to_string(line) + ":" +
                                  std::to_string(column) + ": invalid JSON: "));
    EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                        HasSubstr("(the input ends there: truncated?)"));
  }
}

TEST(GbenchReaderErrors, RandomCorruptionNeverCrashes) {
  const std::string text = ReadFile(FixturePath("gbench/features_gb171.json"));
  std::mt19937_64 rng(7);
  const std::string alphabet = "{}[],:\"\\-+.eE0123456789NaInfity tnul\n\xff";
  int parsed = 0;
  for (int round = 0; round < 1000; ++round) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0:
          mutated[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          mutated.erase(at, 1 + rng() % 8);
          break;
        default:
          mutated.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
      if (mutated.empty()) mutated = "{";
    }
    Result<GbenchFile> file = ParseGbenchJson(mutated, "fuzz.json");
    if (file) {
      ++parsed;
      for (const char* metric : {"real_time", "cpu_time", "custom", "ops"}) {
        (void)CollectMetric(*file, metric);
      }
    } else {
      EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument) << file.error().message;
      EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr("fuzz.json")) << mutated;
    }
  }
  EXPECT_GT(parsed, 0);  // some edits land in harmless places (digits, whitespace)
}

// ---- Files ----------------------------------------------------------------------------------

TEST(GbenchReaderFiles, MissingFileAndDirectoryAreNamed) {
  const std::string missing = FixturePath("gbench/does_not_exist.json");
  Result<GbenchFile> file = ReadGbenchFile(missing);
  ASSERT_FALSE(file.has_value());
  EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr(missing));
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr("no such file"));

  const std::string directory = FixturePath("gbench");
  file = ReadGbenchFile(directory);
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                      HasSubstr(directory + ": cannot read: is a directory"));
}

TEST(GbenchReaderFiles, ParseErrorsInAFileNameThePath) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("gbench_reader_test_" + std::to_string(std::random_device{}()) + ".json");
  {
    std::ofstream out(path);
    out << "{\n  \"benchmarks\": [\n    {\"name\": \"a\", \"real_time\": }\n";
  }
  Result<GbenchFile> file = ReadGbenchFile(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                      HasSubstr(path.string() + ":3:32: invalid JSON:"));
}

TEST(GbenchReaderFiles, DashReadsStandardInput) {
  std::istringstream input(R"({"benchmarks": [{"name": "a", "real_time": 5, "cpu_time": 4,
                                "iterations": 1, "time_unit": "us"}]})");
  std::streambuf* saved = std::cin.rdbuf(input.rdbuf());
  Result<GbenchFile> file = ReadGbenchFile("-");
  std::cin.rdbuf(saved);
  ASSERT_TRUE(file.has_value()) << file.error().message;
  EXPECT_EQ(file->source, "<stdin>");
  EXPECT_EQ(file->runs.at(0).real_time_ns, 5000);

  std::istringstream broken("{");
  saved = std::cin.rdbuf(broken.rdbuf());
  file = ReadGbenchFile("-");
  std::cin.rdbuf(saved);
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr("<stdin>:1:2: invalid JSON:"));
}

// ---- Metrics --------------------------------------------------------------------------------

TEST(GbenchReaderMetrics, DefaultDirection) {
  const std::vector<std::pair<const char*, Direction>> cases = {
      {"real_time", Direction::kLowerIsBetter},
      {"cpu_time", Direction::kLowerIsBetter},
      {"custom", Direction::kLowerIsBetter},
      {"max_bytes_used", Direction::kLowerIsBetter},
      {"allocs_per_iter", Direction::kLowerIsBetter},
      {"per_second_overhead", Direction::kLowerIsBetter},
      {"bytes_per_second", Direction::kHigherIsBetter},
      {"items_per_second", Direction::kHigherIsBetter},
      {"frames_per_second", Direction::kHigherIsBetter},
      {"ops_per_sec", Direction::kHigherIsBetter},
      {"GB/s", Direction::kHigherIsBetter},
      {"Throughput_MB", Direction::kHigherIsBetter},
      {"read_throughput", Direction::kHigherIsBetter},
  };
  for (const auto& [metric, direction] : cases) {
    EXPECT_EQ(DefaultDirection(metric), direction) << metric;
  }
}

TEST(GbenchReaderMetrics, UnitsOrderSkippedAndMissingMetric) {
  const GbenchFile file = MustParse(R"({"benchmarks": [
    {"name": "b", "iterations": 1, "real_time": 2, "cpu_time": 2, "time_unit": "us",
     "items_per_second": 10, "GB/s": 3, "custom": 1},
    {"name": "a", "iterations": 1, "real_time": 1, "cpu_time": 1, "time_unit": "ms"},
    {"name": "b", "iterations": 1, "real_time": 4, "cpu_time": 4, "time_unit": "us",
     "items_per_second": 12, "GB/s": 5, "custom": 2},
    {"name": "b_mean", "run_name": "b", "run_type": "aggregate", "aggregate_name": "mean",
     "iterations": 2, "real_time": 3, "cpu_time": 3, "time_unit": "us", "items_per_second": 11},
    {"name": "b", "error_occurred": true, "error_message": "boom"},
    {"name": "a", "iterations": 1, "real_time": NaN, "cpu_time": 1, "time_unit": "ms"}
  ]})");
  const std::vector<MetricSeries> cpu = MustCollect(file, "cpu_time");
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_EQ(cpu[0].benchmark, "b");
  EXPECT_EQ(cpu[0].values, (std::vector<double>{2000, 4000}));  // the mean row is left out
  EXPECT_EQ(cpu[0].skipped, 1);
  EXPECT_EQ(cpu[1].benchmark, "a");
  EXPECT_EQ(cpu[1].values, (std::vector<double>{1e6, 1e6}));

  const std::vector<MetricSeries> items = MustCollect(file, "items_per_second");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].values, (std::vector<double>{10, 12}));
  EXPECT_EQ(items[0].unit, "1/s");
  EXPECT_EQ(items[0].skipped, 1);
  EXPECT_EQ(items[0].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(MustCollect(file, "GB/s")[0].unit, "1/s");
  EXPECT_EQ(MustCollect(file, "custom")[0].unit, "");

  // No repetition_index in the file: the repetition is counted per benchmark.
  Result<std::vector<MetricSeries>> real = CollectMetric(file, "real_time");
  ASSERT_FALSE(real.has_value());
  EXPECT_EQ(real.error().message,
            "t.json: a repetition 1: real_time is NaN; it cannot be compared");
  EXPECT_EQ(real.error().field, "benchmarks[5].real_time");

  Result<std::vector<MetricSeries>> none = CollectMetric(file, "bytes_per_second");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(none.error().message,
            "t.json: no benchmark reports metric \"bytes_per_second\" (available: GB/s, "
            "cpu_time, custom, items_per_second, real_time)");
}

}  // namespace
}  // namespace perfgate::adapters
