// SPDX-License-Identifier: Apache-2.0
// `perfwarden ab --a CMD --b CMD`: compares two configurations of a benchmark on this machine
// (bf16 against fp32 of a training benchmark, say). The runs are runner/run/ab_session.h's, the
// answer (B's speedup over A with a 95% CI and a U test, and the change of every other metric)
// runner/report/ab_format.h's; here only the flags.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "config/secret_env.h"
#include "runner/cli/commands.h"
#include "runner/report/ab_format.h"
#include "runner/run/ab_session.h"

namespace perfwarden::cli {
namespace {

struct AbArgs {
  std::string a, b;
  std::string name_a = "A", name_b = "B";
  int runs = 10;
  int warmup = 1;
  std::string metric;  // "": step_time for training benchmarks, else wall_time
  double alpha = 0.05;
  double threshold_percent = 1;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::int64_t timeout_s = 3600;
  std::string format = "text";
  std::vector<std::string> pass_env;
};

int Run(const AbArgs& args) {
  for (const std::string& name : args.pass_env) {
    if (config::ClassifyEnv(name) == config::SecretEnv::kCredential) {
      return ReportError(InvalidArgument("--pass-env " + name +
                                             ": perfwarden's and the CI job's credentials never "
                                             "reach the commands",
                                         "pass-env")
                             .value());
    }
  }
  run::AbOptions options;
  options.a = args.a;
  options.b = args.b;
  options.name_a = args.name_a;
  options.name_b = args.name_b;
  options.runs = args.runs;
  options.warmup = args.warmup;
  options.metric = args.metric;
  options.alpha = args.alpha;
  options.threshold = args.threshold_percent / 100;
  options.seed = args.seed_given ? args.seed : std::random_device{}();
  options.timeout_s = args.timeout_s;
  options.pass_env = args.pass_env;
  auto report = run::MeasureAb(options);
  if (!report) return ReportError(report.error());
  const std::string text =
      args.format == "json" ? report::FormatAbJson(*report, args.a, args.b, args.runs, options.seed)
      : args.format == "markdown" ? report::FormatAbMarkdown(*report)
                                  : report::FormatAbText(*report);
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
      "telemetry). A command that prints perfwarden's JSON lines (docs/gpu.md) is compared on "
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
  cmd->add_option("--threshold", args->threshold_percent,
                  "Percent: a change within +/- this is no difference; better or worse need a "
                  "significant change beyond it (0: any significant change)")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the run order (default: random, printed)")
      ->each([args](const std::string&) { args->seed_given = true; });
  cmd->add_option("--timeout", args->timeout_s, "Seconds per run")
      ->check(CLI::Range(1, 604800))
      ->capture_default_str();
  cmd->add_option("--pass-env", args->pass_env,
                  "A variable the commands inherit although its name looks secret (HF_TOKEN; "
                  "repeatable). They never get perfwarden's or the CI job's credentials");
  cmd->add_option("--format", args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = Run(*args); });
}

}  // namespace perfwarden::cli
