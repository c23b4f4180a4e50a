// SPDX-License-Identifier: Apache-2.0
// `perfwarden run`: measure the suites of perfwarden.yaml, spool the run, post it (with everything
// an earlier run left in the spool). `perfwarden push`: post what is spooled.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "runner/cli/commands.h"
#include "runner/cli/paired_gate.h"
#include "runner/run/session.h"
#include "runner/telemetry/ci_env.h"

namespace perfwarden::cli {
namespace {

struct RunArgs {
  std::string config;
  std::vector<std::string> suites;
  int repetitions = 0;
  std::string branch;
  std::string target_branch;
  bool no_push = false;
  bool skip_build = false;
  bool paired = false;
  std::string baseline_cache;  // --paired: "" : PERFWARDEN_BASELINE_CACHE, else gate.baseline_cache
  bool no_baseline_cache = false;
  std::string format = "text";
};

// `--paired`: this build (built here unless --skip-build) measured side by side with its
// merge-base (the paired gate's measurement, with perfwarden.yaml's gate settings). nullopt, after
// a warning, when it cannot be: the run then measures this build alone, and `perfwarden gate`
// decides as it would have. Errors: this build's build failed.
Result<std::optional<wire::PairedMeasurement>> MeasurePairedRun(const config::RunnerConfig& config,
                                                                const RunArgs& args) {
  run::BenchmarkSelection gated;
  for (const std::string& suite : args.suites) gated[suite];
  if (const std::string why = WhyNotPaired(config, gated); !why.empty()) {
    std::cerr << "perfwarden: warning: cannot measure side by side (" << why
              << "); measuring this build alone\n";
    return std::optional<wire::PairedMeasurement>();
  }
  // This build first: the paired measurement runs both sides' binaries as they are. A failed
  // build fails the run, as it would measuring alone.
  if (!args.skip_build) {
    for (const config::Suite& suite : config.suites) {
      if (!gated.empty() && gated.count(suite.name) == 0) continue;
      if (auto built = run::BuildSuite(
              config, suite,
              [](const std::string& line) { std::cerr << "perfwarden: " << line << "\n"; });
          !built) {
        return tl::unexpected(built.error());
      }
    }
  }
  PairedGateRequest request;
  request.gated = gated;
  request.last.target_branch = !args.target_branch.empty() ? args.target_branch
                               : !telemetry::DetectCi().target_branch.empty()
                                   ? telemetry::DetectCi().target_branch
                                   : config.target_branch;
  request.settings = config.gate;
  request.parameters = GateParameters(config);
  auto measured = MeasureForGate(config, request);
  if (!measured) {
    std::cerr << "perfwarden: warning: could not measure side by side ("
              << measured.error().ToString() << "); measuring this build alone\n";
    return std::optional<wire::PairedMeasurement>();
  }
  return std::optional<wire::PairedMeasurement>(std::move(*measured));
}

int PushOutcome(const Result<client::PushReport>& pushed, nlohmann::json* out) {
  if (!pushed) {
    (*out)["push_error"] = pushed.error().ToString();
    std::cerr << "perfwarden: error: " << pushed.error().ToString() << "\n";
    if (pushed.error().code == ErrorCode::kUnavailable) {
      std::cerr << "perfwarden: the results stay in the spool; `perfwarden push` (or the next "
                   "`perfwarden run`) sends them\n";
      return kExitInfrastructure;
    }
    return kExitUsage;
  }
  (*out)["sent"] = pushed->sent;
  (*out)["already_present"] = pushed->already_present;
  (*out)["rejected"] = pushed->rejected;
  for (const std::string& m : pushed->messages) std::cerr << "perfwarden: " << m << "\n";
  return pushed->rejected > 0 ? kExitUsage : kExitPass;
}

int Run(const RunArgs& args) {
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  if (!args.no_push) {
    if (auto ok = run::RequireServer(*config); !ok) return ReportError(ok.error());
  }
  run::MeasureRequest request;
  request.suites = args.suites;
  request.repetitions = args.repetitions;
  request.branch = args.branch;
  request.target_branch = args.target_branch;
  request.skip_build = args.skip_build;
  std::optional<wire::PairedMeasurement> paired;
  std::vector<wire::ResultSeries> head;
  if (args.paired) {
    if (args.repetitions > 0) {
      return ReportError(InvalidArgument("--repetitions does not apply to --paired (the paired "
                                         "gate's looks decide how many)",
                                         "repetitions")
                             .value());
    }
    if (!args.baseline_cache.empty()) {
      std::error_code ec;
      config->gate.baseline_cache =
          std::filesystem::absolute(args.baseline_cache, ec).lexically_normal();
    }
    if (args.no_baseline_cache) config->gate.baseline_cache_entries = 0;
    auto side_by_side = MeasurePairedRun(*config, args);
    if (!side_by_side) return ReportError(side_by_side.error());
    paired = std::move(*side_by_side);
    if (paired) {
      request.skip_build = true;  // built above
      head = HeadSeries(*paired);
      request.measured = &head;
    }
  }
  auto measured = run::MeasureAndSpool(*config, request);
  if (!measured) return ReportError(measured.error());
  if (paired) {
    if (auto kept = KeepPairedRun(*config, measured->upload.id, *paired); !kept) {
      std::cerr << "perfwarden: warning: " << kept.error().ToString()
                << ": `perfwarden gate` will measure side by side again\n";
    }
  }
  for (const std::string& w : measured->warnings) std::cerr << "perfwarden: warning: " << w << "\n";

  nlohmann::json out = {{"run_id", measured->upload.id},
                        {"project", measured->upload.project},
                        {"branch", measured->upload.branch},
                        {"commit", measured->upload.commit.sha},
                        {"series", measured->upload.results.size()},
                        {"samples", measured->upload.SampleCount()},
                        {"spool", config->spool_dir.string()}};
  int code = kExitPass;
  if (!args.no_push) code = PushOutcome(run::PushSpool(*config), &out);
  if (args.format == "json") {
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "run " << measured->upload.id << ": " << measured->upload.SampleCount()
              << " samples of " << measured->upload.results.size() << " series"
              << (args.no_push        ? ", spooled (not posted: --no-push)"
                  : code == kExitPass ? ", posted to " + config->server.url
                                      : ", spooled")
              << "\n";
  }
  return code;
}

}  // namespace

void AddRunCommands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Run the suites of perfwarden.yaml, write the results to the spool, then post them (and "
      "anything an earlier run left in the spool)");
  run->add_option("--config", args->config,
                  "perfwarden.yaml to use (default: $PERFWARDEN_CONFIG, else ./perfwarden.yaml)");
  run->add_option("--suite", args->suites, "Only this suite (repeatable)");
  run->add_option("--repetitions", args->repetitions, "Override every suite's repetitions")
      ->check(CLI::Range(2, 10000));
  run->add_option("--branch", args->branch,
                  "Branch of the run (default: from CI variables, else git's current branch)");
  run->add_option("--target-branch", args->target_branch,
                  "Branch a pull request merges into (default: from CI, else perfwarden.yaml)");
  run->add_flag("--no-push", args->no_push, "Only spool the results");
  run->add_flag("--skip-build", args->skip_build, "Do not run the suites' build commands");
  run->add_flag("--paired", args->paired,
                "Measure this build side by side with its merge-base (the paired gate's "
                "measurement, gate: settings) and post this build's side as the run; `perfwarden "
                "gate` then judges that measurement instead of measuring again (docs/ci.md)");
  run->add_option(
      "--baseline-cache", args->baseline_cache,
      "--paired: the directory of built baselines (default: $PERFWARDEN_BASELINE_CACHE, "
      "else gate.baseline_cache)");
  run->add_flag("--no-baseline-cache", args->no_baseline_cache,
                "--paired: build the baseline without the cache");
  run->add_option("--format", args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  run->callback([args, exit_code]() { *exit_code = Run(*args); });

  auto push_config = std::make_shared<std::string>();
  auto push_format = std::make_shared<std::string>("text");
  CLI::App* push = app.add_subcommand(
      "push",
      "Post the results waiting in the spool (left by runs that could not reach the server)");
  push->add_option("--config", *push_config, "perfwarden.yaml to use");
  push->add_option("--format", *push_format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  push->callback([push_config, push_format, exit_code]() {
    auto config = run::LoadConfig(*push_config);
    if (!config) {
      *exit_code = ReportError(config.error());
      return;
    }
    nlohmann::json out = nlohmann::json::object();
    *exit_code = PushOutcome(run::PushSpool(*config), &out);
    if (*push_format == "json") {
      std::cout << out.dump(2) << "\n";
    } else if (out.contains("sent")) {
      std::cout << "sent " << out["sent"] << ", already stored " << out["already_present"]
                << ", rejected " << out["rejected"] << "\n";
    }
  });
}

int ReportError(const Error& error) {
  std::cerr << "perfwarden: error: " << error.ToString() << "\n";
  return error.code == ErrorCode::kUnavailable ? kExitInfrastructure : kExitUsage;
}

}  // namespace perfwarden::cli
