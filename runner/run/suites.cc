// SPDX-License-Identifier: Apache-2.0
#include "runner/run/suites.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>

#include "runner/adapters/gbench_reader.h"
#include "runner/run/binary_compiler.h"
#include "runner/run/process.h"
#include "runner/run/train_suite.h"

namespace perfwarden::run {
namespace {

std::string Seconds(std::chrono::nanoseconds d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

// What every process of a suite starts with: the config's directory, the suite's environment.
ProcessOptions SuiteProcess(const config::RunnerConfig& config, const config::Suite& suite) {
  ProcessOptions p;
  p.cwd = config.base_dir;
  p.env = suite.env;
  p.pass_env = suite.pass_env;
  return p;
}

}  // namespace

Result<void> BuildSuite(const config::RunnerConfig& config, const config::Suite& suite,
                        const ProgressLine& progress) {
  if (suite.build.empty()) return {};
  progress("suite " + suite.name + ": building: " + suite.build);
  ProcessOptions p = SuiteProcess(config, suite);
  p.argv = {"/bin/sh", "-c", suite.build};
  auto result = RunProcess(p);
  if (!result) return tl::unexpected(result.error());
  if (result->exit_code != 0) {
    return MakeError(ErrorCode::kUnavailable, "suite " + suite.name + ": the build command `" +
                                                  suite.build + "` failed with exit status " +
                                                  std::to_string(result->exit_code));
  }
  return {};
}

namespace {

Direction DirectionFor(const config::RunnerConfig& config, const SeriesKey& key,
                       Direction reported) {
  return config.Resolve(key).direction.value_or(reported);
}

Result<SuiteOutcome> RunGbench(const config::RunnerConfig& config, const config::Suite& suite,
                               const SuiteOptions& options, const ProgressLine& progress) {
  const int repetitions = options.repetitions > 0 ? options.repetitions : suite.repetitions;
  const std::filesystem::path out = options.work_dir / (suite.name + ".json");
  std::error_code ec;
  std::filesystem::remove(out, ec);
  ProcessOptions p = SuiteProcess(config, suite);
  p.argv = {suite.binary.string(), "--benchmark_out=" + out.string(), "--benchmark_out_format=json",
            "--benchmark_repetitions=" + std::to_string(repetitions)};
  if (suite.min_time) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", *suite.min_time);
    p.argv.push_back(std::string("--benchmark_min_time=") + text);
  }
  std::string filter = suite.filter;
  if (!options.benchmarks.empty()) filter = ExactNameFilter(options.benchmarks);
  if (!filter.empty()) p.argv.push_back("--benchmark_filter=" + filter);
  p.argv.insert(p.argv.end(), suite.args.begin(), suite.args.end());
  p.timeout = std::chrono::seconds(suite.timeout_s);
  progress("suite " + suite.name + ": " + ShellQuote(p.argv));
  const std::filesystem::path log = options.work_dir / (suite.name + ".log");
  if (options.quiet) p.output_file = log;
  auto result = RunProcess(p);
  if (!result) {
    return MakeError(result.error().code, "suite " + suite.name + ": " + result.error().message);
  }
  if (result->timed_out) {
    return MakeError(ErrorCode::kUnavailable, "suite " + suite.name + ": killed after its " +
                                                  std::to_string(suite.timeout_s) + " s timeout");
  }
  if (result->exit_code != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "suite " + suite.name + ": " + suite.binary.string() + " exited with status " +
                         std::to_string(result->exit_code) +
                         (options.quiet ? "; its output ends:\n" + FileTail(log) : ""));
  }
  auto file = adapters::ReadGbenchFile(out);
  if (!file)
    return MakeError(file.error().code, "suite " + suite.name + ": " + file.error().ToString());
  progress("suite " + suite.name + ": done in " + Seconds(result->wall));

  SuiteOutcome outcome;
  outcome.library_build_type = file->context.library_build_type;
  outcome.compiler = BinaryCompiler(suite.binary);
  if (outcome.library_build_type == "debug") {
    outcome.warnings.push_back("suite " + suite.name +
                               ": the Google Benchmark library was built as debug; timings "
                               "carry its overhead");
  }
  std::set<std::string> metrics = {"real_time", "cpu_time"};
  size_t skipped = 0;
  for (const adapters::GbenchRun& run : file->runs) {
    if (!run.IsMeasurement()) continue;
    if (run.skipped) ++skipped;
    for (const auto& [name, value] : run.counters) metrics.insert(name);
  }
  if (skipped > 0) {
    outcome.warnings.push_back("suite " + suite.name + ": " + std::to_string(skipped) +
                               " repetition(s) reported an error or were skipped");
  }
  for (const std::string& metric : metrics) {
    auto collected = adapters::CollectMetric(*file, metric);
    if (!collected) {
      if (metric != "real_time" && metric != "cpu_time") {
        outcome.warnings.push_back("suite " + suite.name + ": counter " + metric +
                                   " left out: " + collected.error().message);
        continue;
      }
      if (file->runs.empty()) break;  // a filter that matched nothing
      return MakeError(collected.error().code,
                       "suite " + suite.name + ": " + collected.error().ToString());
    }
    for (adapters::MetricSeries& s : *collected) {
      if (s.values.empty()) continue;
      wire::ResultSeries series;
      series.key = {suite.name, std::move(s.key.benchmark), metric};
      series.unit = s.unit;
      series.direction = DirectionFor(config, series.key, s.direction);
      series.values = std::move(s.values);
      outcome.series.push_back(std::move(series));
    }
  }
  if (outcome.series.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "suite " + suite.name + ": no benchmark ran" +
                         (filter.empty() ? std::string() : " (filter " + filter + ")"));
  }
  return outcome;
}

Result<SuiteOutcome> RunCommand(const config::RunnerConfig& config, const config::Suite& suite,
                                const SuiteOptions& options, const ProgressLine& progress) {
  const int repetitions = options.repetitions > 0 ? options.repetitions : suite.repetitions;
  const std::filesystem::path log = options.work_dir / (suite.name + ".log");
  const ProcessOptions p = SuiteCommandProcess(config, suite, log);
  wire::ResultSeries series;
  series.key = {suite.name, suite.name, "wall_time"};
  series.unit = "s";
  series.direction = DirectionFor(config, series.key, Direction::kLowerIsBetter);
  const int total = suite.warmup + repetitions;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < total; ++i) {
    auto result = RunProcess(p);
    if (auto failed = SuiteRunError(suite, result, log, "repetition " + std::to_string(i + 1))) {
      return tl::unexpected(*failed);
    }
    if (i >= suite.warmup) {
      series.values.push_back(std::chrono::duration<double>(result->wall).count());
    }
    // A line every 10% (and the last), not one per repetition.
    if ((i + 1) * 10 / total != i * 10 / total || i + 1 == total) {
      progress("suite " + suite.name + ": " + std::to_string(i + 1) + "/" + std::to_string(total) +
               " runs (" + std::to_string(suite.warmup) + " warm-up), " +
               Seconds(std::chrono::steady_clock::now() - started));
    }
  }
  SuiteOutcome outcome;
  outcome.series.push_back(std::move(series));
  return outcome;
}

}  // namespace

ProcessOptions SuiteCommandProcess(const config::RunnerConfig& config, const config::Suite& suite,
                                   const std::filesystem::path& log) {
  ProcessOptions p = SuiteProcess(config, suite);
  p.argv = suite.command;
  p.timeout = std::chrono::seconds(suite.timeout_s);
  p.output_file = log;
  return p;
}

std::optional<Error> SuiteRunError(const config::Suite& suite, const Result<ProcessResult>& result,
                                   const std::filesystem::path& log, const std::string& which) {
  if (!result) {
    return Error{result.error().code, "suite " + suite.name + ": " + result.error().message, ""};
  }
  if (!result->timed_out && result->exit_code == 0) return std::nullopt;
  return Error{ErrorCode::kUnavailable,
               "suite " + suite.name + ": `" + ShellQuote(suite.command) + "` " +
                   (result->timed_out ? "timed out"
                                      : "exited with status " + std::to_string(result->exit_code)) +
                   " in " + which + "; its output ends:\n" + FileTail(log),
               ""};
}

std::string ExactNameFilter(const std::set<std::string>& names) {
  std::string out = "^(";
  bool first = true;
  for (const std::string& name : names) {
    if (!first) out += '|';
    first = false;
    for (char c : name) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out + ")$";
}

Result<SuiteOutcome> RunSuite(const config::RunnerConfig& config, const config::Suite& suite,
                              const SuiteOptions& options, const ProgressLine& progress) {
  if (!options.skip_build) {
    if (auto built = BuildSuite(config, suite, progress); !built) {
      return tl::unexpected(built.error());
    }
  }
  if (suite.type == config::SuiteType::kGbench) return RunGbench(config, suite, options, progress);
  if (!options.benchmarks.empty() && options.benchmarks.count(suite.name) == 0) {
    return SuiteOutcome{};
  }
  if (suite.type == config::SuiteType::kTrain) {
    return RunTrainSuite(config, suite, options, progress);
  }
  return RunCommand(config, suite, options, progress);
}

}  // namespace perfwarden::run
