// SPDX-License-Identifier: Apache-2.0
// Tests of the Google Benchmark JSON reader: real Google Benchmark
// 1.7.1 outputs (tests/fixtures/gbench/README.md says how they were made), the non-finite
// tokens and the metrics collected. compare.py's input fixtures are
// gbench_reader_oracles_test.cc, every error path gbench_reader_errors_test.cc.
#include "runner/adapters/gbench_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runner/adapters/json_text.h"
#include "tests/testing/gbench_reading.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::adapters {
namespace {

using ::perfwarden::testing::ContainsText;
using ::perfwarden::testing::Find;
using ::perfwarden::testing::HasSubstr;
using ::perfwarden::testing::kRel;
using ::perfwarden::testing::MustCollect;
using ::perfwarden::testing::MustParse;
using ::perfwarden::testing::MustRead;
using ::perfwarden::testing::NearRel;

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
      SCOPED_TRACE(one.key.benchmark);
      ASSERT_EQ(one.values.size(), 3u);
      std::vector<double> sorted = one.values;
      std::sort(sorted.begin(), sorted.end());
      const double mean = (one.values[0] + one.values[1] + one.values[2]) / 3;
      for (const GbenchRun& run : file.runs) {
        if (run.run_name != one.key.benchmark) continue;
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
  EXPECT_EQ(MustCollect(file, "real_time")[1].key.benchmark, "BM_Hash/16384");

  const std::vector<MetricSeries> bytes = MustCollect(file, "bytes_per_second");
  ASSERT_EQ(bytes.size(), 2u);  // BM_Sort reports items only
  EXPECT_EQ(bytes[0].key.benchmark, "BM_Hash/16384");
  EXPECT_EQ(bytes[1].key.benchmark, "BM_ParseInts/1024");
  EXPECT_EQ(bytes[0].unit, "1/s");
  EXPECT_EQ(bytes[0].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(bytes[0].values[0], 915006459.6777407);
  const std::vector<MetricSeries> items = MustCollect(file, "items_per_second");
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].key.benchmark, "BM_Sort/1024");
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
// PERFWARDEN_SAMPLE_SLOWDOWN, every other benchmark unchanged (see the sample's README.md).
TEST(GbenchReaderBundled, SampleResultsShowOneTenPercentRegression) {
  const std::string folder = "../../bench/workloads/gbench_sample/results/";
  const GbenchFile base = MustRead(folder + "base.json");
  const GbenchFile contender = MustRead(folder + "contender.json");
  EXPECT_EQ(base.context.extra.count("perfwarden_sample_slowdown"), 0u);
  EXPECT_EQ(contender.context.extra.at("perfwarden_sample_slowdown"), "\"BM_Sort/16384=10\"");
  for (const char* metric : {"real_time", "cpu_time", "items_per_second"}) {
    SCOPED_TRACE(metric);
    const std::vector<MetricSeries> before = MustCollect(base, metric);
    const std::vector<MetricSeries> after = MustCollect(contender, metric);
    ASSERT_EQ(before.size(), std::string(metric) == "items_per_second" ? 9u : 12u);
    ASSERT_EQ(after.size(), before.size());
    for (const MetricSeries& one : before) {
      SCOPED_TRACE(one.key.benchmark);
      const MetricSeries* other = Find(after, one.key.benchmark);
      ASSERT_NE(other, nullptr);
      ASSERT_EQ(one.values.size(), 10u);
      ASSERT_EQ(other->values.size(), 10u);
      const double change = Median(other->values) / Median(one.values) - 1;
      // Rates fall by 1 - 1/1.1 when times grow by 10%.
      const double expected = one.key.benchmark != "BM_Sort/16384"        ? 0.0
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
  EXPECT_EQ(cpu[0].key.benchmark, "b");
  EXPECT_EQ(cpu[0].values, (std::vector<double>{2000, 4000}));  // the mean row is left out
  EXPECT_EQ(cpu[0].skipped, 1);
  EXPECT_EQ(cpu[1].key.benchmark, "a");
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
}  // namespace perfwarden::adapters
