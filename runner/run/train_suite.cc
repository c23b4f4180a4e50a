// SPDX-License-Identifier: Apache-2.0
#include "runner/run/train_suite.h"

#include <chrono>
#include <cstdio>
#include <map>

#include "runner/adapters/train_lines.h"
#include "runner/run/process.h"

namespace perfwarden::run {
namespace {

std::string Seconds(std::chrono::steady_clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

}  // namespace

Result<SuiteOutcome> RunTrainSuite(const config::RunnerConfig& config, const config::Suite& suite,
                                   const SuiteOptions& options, const ProgressLine& progress) {
  const int runs = options.repetitions > 0 ? options.repetitions : suite.repetitions;
  // Series in the order they first appear, so the upload reads like the command's output.
  std::vector<wire::ResultSeries> series;
  std::map<std::string, std::size_t> index;
  auto add = [&](const std::string& metric, const std::string& unit,
                 Direction reported) -> wire::ResultSeries& {
    auto [it, fresh] = index.try_emplace(metric, series.size());
    if (fresh) {
      wire::ResultSeries s;
      s.key = {suite.name, suite.name, metric};
      s.unit = unit;
      const config::ResolvedThreshold t = config.Resolve(s.key);
      s.direction = t.direction.value_or(reported);
      series.push_back(std::move(s));
    }
    return series[it->second];
  };
  SuiteOutcome outcome;
  for (int run = 0; run < runs; ++run) {
    const std::filesystem::path log =
        options.work_dir / (suite.name + "-" + std::to_string(run + 1) + ".log");
    const ProcessOptions p = SuiteCommandProcess(config, suite, log);
    const auto started = std::chrono::steady_clock::now();
    auto result = RunProcess(p);
    if (auto failed = SuiteRunError(suite, result, log, "run " + std::to_string(run + 1))) {
      return tl::unexpected(*failed);
    }
    auto output = adapters::ReadTrainLines(FileText(log), log.filename().string());
    if (!output) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "suite " + suite.name + ": " + output.error().message, output.error().field);
    }
    for (std::string& w : output->warnings) outcome.warnings.push_back(std::move(w));
    // Units of per-step values: the summary metric of the same name says, when there is one.
    std::map<std::string, std::string> units;
    for (const adapters::TrainMetric& m : output->metrics) units[m.name] = m.unit;
    std::size_t kept = 0;
    for (const adapters::TrainStep& step : output->steps) {
      if (step.warmup) continue;
      ++kept;
      add("step_time", "s", Direction::kLowerIsBetter).values.push_back(step.time_s);
      for (const auto& [name, value] : step.values) {
        add("step_" + name, units[name], adapters::DefaultTrainDirection(name))
            .values.push_back(value);
      }
    }
    for (const adapters::TrainMetric& m : output->metrics) {
      add(m.name, m.unit, m.direction.value_or(adapters::DefaultTrainDirection(m.name)))
          .values.push_back(m.value);
    }
    progress("suite " + suite.name + ": run " + std::to_string(run + 1) + "/" +
             std::to_string(runs) + ": " + std::to_string(kept) + " steps kept (" +
             std::to_string(output->WarmupSteps()) + " warm-up), " +
             std::to_string(output->metrics.size()) + " metrics, " +
             Seconds(std::chrono::steady_clock::now() - started));
  }
  outcome.series = std::move(series);
  return outcome;
}

}  // namespace perfwarden::run
