// SPDX-License-Identifier: Apache-2.0
// Lossless reader of Google Benchmark's JSON output (--benchmark_format=json or
// --benchmark_out). Keeps every repetition, keeps aggregates apart, normalises times to
// nanoseconds, keeps user counters, error/skipped runs and the whole context. Malformed input
// yields an Error naming the file, the place (line:column, or the field path) and the problem.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"

namespace perfwarden::adapters {

struct GbenchCache {
  std::string type;  // "Data", "Instruction", "Unified"
  int64_t level = 0;
  int64_t size = 0;  // bytes
  int64_t num_sharing = 0;
};

struct GbenchContext {
  std::string date;
  std::string host_name;
  std::string executable;
  int64_t num_cpus = 0;
  double mhz_per_cpu = 0;
  std::optional<bool> cpu_scaling_enabled;  // absent in old outputs
  std::string library_build_type;           // "release" / "debug" / "" when absent
  std::vector<GbenchCache> caches;
  std::vector<double> load_avg;
  // Every other key of the context (e.g. custom --benchmark_context=k=v), as JSON text.
  std::map<std::string, std::string> extra;
};

enum class GbenchRunType { kIteration, kAggregate };

// One entry of "benchmarks".
struct GbenchRun {
  std::string name;      // "BM_Sort/1024" or, for aggregates, "BM_Sort/1024_mean"
  std::string run_name;  // the benchmark without the aggregate suffix; = name when absent
  GbenchRunType run_type = GbenchRunType::kIteration;
  std::string aggregate_name;  // "mean", "median", "stddev", "cv", custom; "" for iterations
  std::string aggregate_unit;  // "time" or "percentage" (cv); "" when absent
  int64_t family_index = -1;
  int64_t per_family_instance_index = -1;
  int64_t repetitions = 0;
  int64_t repetition_index = -1;  // -1 when absent
  int64_t threads = 1;
  int64_t iterations = 0;
  // Normalised from time_unit, except in "percentage" aggregates (cv), which hold a plain
  // fraction. NaN when the entry has no such key (complexity rows, compare.py's ordering fixture).
  double real_time_ns = 0;
  double cpu_time_ns = 0;
  std::string time_unit;  // as written: "ns", "us", "ms", "s"; "" when absent (then ns)"
  std::string label;
  bool error_occurred = false;
  std::string error_message;
  // True for "skipped" (SkipWithMessage, Google Benchmark >= 1.8) and for error_occurred
  // (SkipWithError, all versions): such runs carry no usable timing.
  bool skipped = false;
  std::string skip_message;
  // User counters, including bytes_per_second and items_per_second: every numeric key that is
  // not one of the fields above (so also rms, cpu_coefficient, max_bytes_used, ...). Non-finite
  // values ("NaN", "Infinity" as Google Benchmark writes them) are kept as NaN/inf. Non-numeric
  // unknown keys (the BigO row's "big_o" string) are dropped.
  std::map<std::string, double> counters;

  // Whether this entry is a measurement of one repetition. Aggregates with an
  // aggregate_name are not; an "aggregate" without aggregate_name (as in compare.py's test
  // inputs) is treated as a measurement, as compare.py does.
  bool IsMeasurement() const;
};

struct GbenchFile {
  std::string source;  // file name, for messages
  GbenchContext context;
  std::vector<GbenchRun> runs;  // in file order
};

// Parses Google Benchmark JSON text. `source` names the input in error messages.
Result<GbenchFile> ParseGbenchJson(std::string_view text, std::string_view source);

// Reads and parses a file ("-" reads standard input).
Result<GbenchFile> ReadGbenchFile(const std::filesystem::path& path);

// The repetitions of one metric per benchmark, in order of first appearance.
struct MetricSeries {
  SeriesKey key;               // benchmark: run_name; suite "": a file names none, its suite does
  std::vector<double> values;  // one per measured repetition
  std::string unit;            // "ns" for times, "1/s" for *_per_second, "" for counters
  Direction direction = Direction::kLowerIsBetter;
  int64_t skipped = 0;  // repetitions that errored or were skipped
};

// The direction of a metric by its name: real_time, cpu_time and other counters are lower is
// better; bytes_per_second, items_per_second and any counter whose name ends in
// "_per_second", "per_sec", "/s" or contains "throughput" are higher is better.
Direction DefaultDirection(std::string_view metric);

// Collects metric `metric` ("real_time", "cpu_time" or a counter name) of every measurement.
// Benchmarks without that metric are left out. Error: the metric exists nowhere in the file,
// or a value is not finite (the error names the benchmark and repetition).
Result<std::vector<MetricSeries>> CollectMetric(const GbenchFile& file, std::string_view metric);

}  // namespace perfwarden::adapters
