// SPDX-License-Identifier: Apache-2.0
#include "runner/run/ab_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/adapters/train_lines.h"
#include "runner/run/process.h"
#include "runner/run/temp_dir.h"
#include "runner/telemetry/gpu_sampler.h"
#include "runner/telemetry/nvml.h"
#include "stats/descriptive.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;

void Say(const std::string& line) { std::fprintf(stderr, "perfwarden ab: %s\n", line.c_str()); }

std::string Number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

struct RunValues {
  bool train = false;  // printed perfwarden's JSON lines
  std::map<std::string, std::pair<std::string, Direction>> kinds;  // unit and direction
  std::map<std::string, double> values;
};

// Runs `command` once; its metrics.
Result<RunValues> RunOnce(const std::string& command, const fs::path& log, const AbOptions& options,
                          const telemetry::Nvml* nvml) {
  run::ProcessOptions p;
  p.argv = {"/bin/sh", "-c", command};
  p.cwd = fs::current_path();
  p.timeout = std::chrono::seconds(options.timeout_s);
  p.pass_env = options.pass_env;
  p.output_file = log;
  std::optional<telemetry::GpuSampler> sampler;
  if (nvml != nullptr) sampler.emplace(*nvml).Start();
  auto result = run::RunProcess(p);
  std::optional<telemetry::GpuSummary> gpu;
  if (sampler) gpu = sampler->Stop();
  if (!result) return tl::unexpected(result.error());
  if (result->timed_out || result->exit_code != 0) {
    return MakeError(
        ErrorCode::kUnavailable,
        "`" + command + "` " +
            (result->timed_out ? std::string("timed out")
                               : "exited with status " + std::to_string(result->exit_code)) +
            "; its output ends:\n" + run::FileTail(log));
  }
  RunValues out;
  auto set = [&](const std::string& name, const std::string& unit, Direction d, double v) {
    out.kinds[name] = {unit, d};
    out.values[name] = v;
  };
  set("wall_time", "s", Direction::kLowerIsBetter,
      std::chrono::duration<double>(result->wall).count());
  const std::string text = run::FileText(log);
  if (text.find("{\"event\"") != std::string::npos) {
    auto train = adapters::ReadTrainLines(text, log.filename().string());
    if (!train) return tl::unexpected(train.error());
    out.train = true;
    std::vector<double> steps;
    for (const adapters::TrainStep& s : train->steps) {
      if (!s.warmup) steps.push_back(s.time_s);
    }
    if (!steps.empty()) set("step_time", "s", Direction::kLowerIsBetter, stats::Median(steps));
    for (const adapters::TrainMetric& m : train->metrics) {
      set(m.name, m.unit, m.direction.value_or(adapters::DefaultTrainDirection(m.name)), m.value);
    }
  }
  if (gpu) {
    double samples_per_s = out.values.count("samples_per_s") ? out.values["samples_per_s"] : 0;
    for (const wire::ResultSeries& s : telemetry::GpuSeries(*gpu, "ab", "ab", samples_per_s)) {
      set(s.key.metric, s.unit, s.direction, s.values.front());
    }
  }
  return out;
}

}  // namespace

Result<compare::AbReport> MeasureAb(const AbOptions& options) {
  auto temp = TempDir::Make(fs::temp_directory_path(), "perfwarden-ab-");
  if (!temp) return tl::unexpected(temp.error());
  std::unique_ptr<telemetry::Nvml> nvml;
  if (auto loaded = telemetry::Nvml::Load(); loaded) nvml = std::move(*loaded);
  const std::string* commands[2] = {&options.a, &options.b};
  const std::string names[2] = {options.name_a, options.name_b};
  int counter = 0;
  auto once = [&](int arm) {
    return RunOnce(*commands[arm],
                   temp->path() / (std::string(arm == 0 ? "a" : "b") + "-" +
                                   std::to_string(++counter) + ".log"),
                   options, nvml.get());
  };
  // Warm-up runs (caches, JIT, GPU clocks), one arm after the other; they also tell whether the
  // commands print perfwarden's JSON lines.
  bool train[2] = {false, false};
  for (int w = 0; w < std::max(options.warmup, 1); ++w) {
    for (int arm = 0; arm < 2; ++arm) {
      auto warm = once(arm);
      if (!warm) {
        return tl::unexpected(
            Error{warm.error().code, names[arm] + ": " + warm.error().message, ""});
      }
      train[arm] = warm->train;
    }
  }
  if (train[0] != train[1]) {
    return tl::unexpected(Error{ErrorCode::kInvalidArgument,
                                std::string("only ") + (train[0] ? "--a" : "--b") +
                                    " prints perfwarden's JSON lines; compare like with like",
                                train[0] ? "b" : "a"});
  }
  const std::string primary = !options.metric.empty() ? options.metric
                              : train[0]              ? "step_time"
                                                      : "wall_time";
  std::map<std::string, compare::AbMetric> metrics;
  const std::vector<compare::Arm> schedule = compare::AbSchedule(options.runs, options.seed);
  Say(std::to_string(schedule.size()) + " runs in randomised blocks (seed " +
      std::to_string(options.seed) + ")" + (nvml ? ", with GPU telemetry" : ""));
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    const int arm = schedule[i] == compare::Arm::kA ? 0 : 1;
    auto values = once(arm);
    if (!values) {
      return tl::unexpected(
          Error{values.error().code, names[arm] + ": " + values.error().message, ""});
    }
    for (const auto& [name, value] : values->values) {
      compare::AbMetric& m = metrics[name];
      m.name = name;
      m.unit = values->kinds[name].first;
      m.direction = values->kinds[name].second;
      (arm == 0 ? m.a : m.b).push_back(value);
    }
    const auto it = values->values.find(primary);
    Say("run " + std::to_string(i + 1) + "/" + std::to_string(schedule.size()) + ": " + names[arm] +
        " " + primary + " " + (it != values->values.end() ? Number(it->second) : std::string("?")));
  }
  std::vector<compare::AbMetric> list;
  for (auto& [name, m] : metrics) list.push_back(std::move(m));
  compare::AbReport report = compare::AnalyzeAb(list, primary, options.alpha, options.threshold);
  report.name_a = options.name_a;
  report.name_b = options.name_b;
  return report;
}

}  // namespace perfwarden::run
