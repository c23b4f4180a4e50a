// `perfgate ab --a CMD --b CMD`: compares two configurations of a benchmark on this machine
// (bf16 against fp32 of a training benchmark, say). Both commands run interleaved in randomised
// blocks (runner/compare/ab.h); a command that prints perfgate's JSON lines gives, per run, its
// steady-state median step time and its summary metrics (memory, loss, throughput), any other
// command its wall time; with NVML, GPU telemetry of every run too. The answer: B's speedup over
// A with a 95% CI and a U test, and the change of every other metric.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>

#include "runner/adapters/train_lines.h"
#include "runner/cli/commands.h"
#include "runner/cli/temp_dir.h"
#include "runner/compare/ab.h"
#include "runner/run/process.h"
#include "runner/telemetry/gpu_sampler.h"
#include "runner/telemetry/nvml.h"
#include "stats/descriptive.h"

namespace perfgate::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct AbArgs {
  std::string a, b;
  std::string name_a = "A", name_b = "B";
  int runs = 10;
  int warmup = 1;
  std::string metric;  // "": step_time for training benchmarks, else wall_time
  double alpha = 0.05;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::int64_t timeout_s = 3600;
  std::string format = "text";
};

void Say(const std::string& line) { std::fprintf(stderr, "perfgate ab: %s\n", line.c_str()); }

struct RunValues {
  bool train = false;                                              // printed perfgate's JSON lines
  std::map<std::string, std::pair<std::string, Direction>> kinds;  // unit and direction
  std::map<std::string, double> values;
};

// Runs `command` once; its metrics.
Result<RunValues> RunOnce(const std::string& command, const fs::path& log, std::int64_t timeout,
                          const telemetry::Nvml* nvml) {
  run::ProcessOptions p;
  p.argv = {"/bin/sh", "-c", command};
  p.cwd = fs::current_path();
  p.timeout = std::chrono::seconds(timeout);
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
      set(s.metric, s.unit, s.direction, s.values.front());
    }
  }
  return out;
}

std::string Percent(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * x);
  return text;
}

std::string Number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

std::string FormatText(const compare::AbReport& r) {
  std::string out;
  if (!r.rows.empty() && r.rows.front().name == r.primary) {
    char line[256];
    std::snprintf(line, sizeof line, "%s is %.3gx as fast as %s on %s [%.3g, %.3g] (95%% CI), %s\n",
                  r.name_b.c_str(), r.speedup, r.name_a.c_str(), r.primary.c_str(), r.speedup_low,
                  r.speedup_high, r.rows.front().verdict.c_str());
    out += line;
  }
  char header[256];
  std::snprintf(header, sizeof header, "\n  %-26s %10s %10s %9s   %-18s  %7s  %s\n", "metric",
                r.name_a.c_str(), r.name_b.c_str(), "change", "95% CI", "p", "verdict");
  out += header;
  for (const compare::AbRow& row : r.rows) {
    char line[320];
    std::snprintf(line, sizeof line, "  %-26s %10s %10s %9s   [%7s, %7s]  %7.2g  %s\n",
                  (row.name + (row.unit.empty() ? "" : " (" + row.unit + ")")).c_str(),
                  Number(row.median_a).c_str(), Number(row.median_b).c_str(),
                  Percent(row.change).c_str(), Percent(row.ci_low).c_str(),
                  Percent(row.ci_high).c_str(), row.p_value, row.verdict.c_str());
    out += line;
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string FormatMarkdown(const compare::AbReport& r) {
  std::string out = "### perfgate ab: " + r.name_b + " against " + r.name_a + "\n\n";
  if (!r.rows.empty() && r.rows.front().name == r.primary) {
    out += "**" + r.name_b + " is " + Number(r.speedup) + "x as fast** on " + r.primary + " [" +
           Number(r.speedup_low) + ", " + Number(r.speedup_high) + "] (95% CI), " +
           r.rows.front().verdict + ".\n\n";
  }
  out += "| metric | " + r.name_a + " | " + r.name_b +
         " | change | 95% CI | p | verdict |\n|---|---:|---:|---:|---|---:|---|\n";
  for (const compare::AbRow& row : r.rows) {
    out += "| " + row.name + (row.unit.empty() ? "" : " (" + row.unit + ")") + " | " +
           Number(row.median_a) + " | " + Number(row.median_b) + " | " + Percent(row.change) +
           " | [" + Percent(row.ci_low) + ", " + Percent(row.ci_high) + "] | " +
           Number(row.p_value) + " | " + row.verdict + " |\n";
  }
  for (const std::string& w : r.warnings) out += "\n> " + w + "\n";
  return out;
}

std::string FormatJson(const compare::AbReport& r, const AbArgs& args, std::uint64_t seed) {
  ordered_json rows = ordered_json::array();
  for (const compare::AbRow& row : r.rows) {
    rows.push_back({{"metric", row.name},
                    {"unit", row.unit},
                    {"direction", std::string(DirectionName(row.direction))},
                    {"n_a", row.n_a},
                    {"n_b", row.n_b},
                    {"median_a", row.median_a},
                    {"median_b", row.median_b},
                    {"change", row.change},
                    {"change_ci", {row.ci_low, row.ci_high}},
                    {"p_value", row.p_value},
                    {"verdict", row.verdict}});
  }
  const ordered_json out = {{"a", {{"name", r.name_a}, {"command", args.a}}},
                            {"b", {{"name", r.name_b}, {"command", args.b}}},
                            {"runs", args.runs},
                            {"seed", seed},
                            {"primary", r.primary},
                            {"speedup", r.speedup},
                            {"speedup_ci", {r.speedup_low, r.speedup_high}},
                            {"metrics", rows},
                            {"warnings", r.warnings}};
  return out.dump(2) + "\n";
}

int Run(const AbArgs& args) {
  const std::uint64_t seed = args.seed_given ? args.seed : std::random_device{}();
  auto temp = TempDir::Make(fs::temp_directory_path(), "perfgate-ab-");
  if (!temp) return ReportError(temp.error());
  std::unique_ptr<telemetry::Nvml> nvml;
  if (auto loaded = telemetry::Nvml::Load(); loaded) nvml = std::move(*loaded);
  const std::string* commands[2] = {&args.a, &args.b};
  const std::string names[2] = {args.name_a, args.name_b};
  int counter = 0;
  auto once = [&](int arm) {
    return RunOnce(*commands[arm],
                   temp->path() / (std::string(arm == 0 ? "a" : "b") + "-" +
                                   std::to_string(++counter) + ".log"),
                   args.timeout_s, nvml.get());
  };
  // Warm-up runs (caches, JIT, GPU clocks), one arm after the other; they also tell whether the
  // commands print perfgate's JSON lines.
  bool train[2] = {false, false};
  for (int w = 0; w < std::max(args.warmup, 1); ++w) {
    for (int arm = 0; arm < 2; ++arm) {
      auto warm = once(arm);
      if (!warm)
        return ReportError(Error{warm.error().code, names[arm] + ": " + warm.error().message, ""});
      train[arm] = warm->train;
    }
  }
  if (train[0] != train[1]) {
    return ReportError(Error{ErrorCode::kInvalidArgument,
                             std::string("only ") + (train[0] ? "--a" : "--b") +
                                 " prints perfgate's JSON lines; compare like with like",
                             train[0] ? "b" : "a"});
  }
  const std::string primary = !args.metric.empty() ? args.metric
                              : train[0]           ? "step_time"
                                                   : "wall_time";
  std::map<std::string, compare::AbMetric> metrics;
  const std::vector<compare::Arm> schedule = compare::AbSchedule(args.runs, seed);
  Say(std::to_string(schedule.size()) + " runs in randomised blocks (seed " + std::to_string(seed) +
      ")" + (nvml ? ", with GPU telemetry" : ""));
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    const int arm = schedule[i] == compare::Arm::kA ? 0 : 1;
    auto values = once(arm);
    if (!values) {
      return ReportError(
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
  compare::AbReport report = compare::AnalyzeAb(list, primary, args.alpha);
  report.name_a = args.name_a;
  report.name_b = args.name_b;
  const std::string text = args.format == "json"       ? FormatJson(report, args, seed)
                           : args.format == "markdown" ? FormatMarkdown(report)
                                                       : FormatText(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitPass;
}

}  // namespace

void AddAbCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AbArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ab",
      "Compare two configurations on this machine: runs --a and --b interleaved in randomised "
      "blocks (drift falls on both), and reports how many times as fast B is as A with a 95% "
      "CI and a U test, and the change of every other metric (memory, loss, throughput, GPU "
      "telemetry). A command that prints perfgate's JSON lines (docs/gpu.md) is compared on "
      "its steady-state step time, any other on its wall time");
  cmd->add_option("--a", args->a, "The first command (sh -c), the reference")->required();
  cmd->add_option("--b", args->b, "The second command (sh -c)")->required();
  cmd->add_option("--name-a", args->name_a, "A's name in the report")->capture_default_str();
  cmd->add_option("--name-b", args->name_b, "B's name in the report")->capture_default_str();
  cmd->add_option("--runs", args->runs, "Runs of each command")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "Warm-up runs of each, discarded (at least 1)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--metric", args->metric,
                  "The metric of the speedup (default step_time for JSON-lines commands, else "
                  "wall_time)");
  cmd->add_option("--alpha", args->alpha, "Significance level of each metric's U test")
      ->check(CLI::Range(1e-6, 0.5))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the run order (default: random, printed)")
      ->each([args](const std::string&) { args->seed_given = true; });
  cmd->add_option("--timeout", args->timeout_s, "Seconds per run")
      ->check(CLI::Range(1, 604800))
      ->capture_default_str();
  cmd->add_option("--format", args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = Run(*args); });
}

}  // namespace perfgate::cli
