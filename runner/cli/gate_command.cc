// SPDX-License-Identifier: Apache-2.0
// `perfwarden gate`: the verdict of the last run (or --run), with the thresholds of
// perfwarden.yaml, in the mode gate.mode or --mode names: measured side by side on this host
// (paired_gate.h) or the server's unpaired verdict, which is re-measured side by side when the
// run's metrics moved together and, with --confirm, where it found regressions; optionally reruns
// the inconclusive benchmarks of an unpaired verdict with the repetitions power analysis asked for.
// Prints the table and writes the step summary, the PR/MR comment body, JUnit and GitLab's metrics
// report, all of the verdict the server stored.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "runner/cli/commands.h"
#include "runner/cli/confirm.h"
#include "runner/cli/fork_gate.h"
#include "runner/cli/paired_gate.h"
#include "runner/cli/verdict_output.h"
#include "runner/client/project_client.h"
#include "runner/report/verdict_render.h"
#include "runner/run/session.h"
#include "wire/verdict_request.h"

namespace perfwarden::cli {
namespace {

struct GateArgs {
  std::string config;
  std::string run_id;
  bool require_baseline = false;
  bool rerun_inconclusive = false;
  bool confirm = false;
  int max_repetitions = 60;
  bool paired = false;
  std::string mode;           // "" : perfwarden.yaml's gate.mode
  int block_repetitions = 0;  // 0: perfwarden.yaml's
  int min_blocks = 0;
  int max_blocks = 0;
  int64_t time_budget = -1;  // -1: perfwarden.yaml's
  bool no_shift_remeasure = false;
  std::string save_measurement;  // paired: write the measurement here too
  std::string baseline_cache;    // paired: "" : PERFWARDEN_BASELINE_CACHE, else gate.baseline_cache
  bool no_baseline_cache = false;
  bool no_post = false;  // paired: measure and save only
  std::string artifact;  // --no-post: the fork artifact's directory (fork_gate.h)
  VerdictOutputs outputs;
};

wire::VerdictRequest RequestBody(const config::RunnerConfig& config,
                                 const std::vector<std::string>& extra_runs) {
  wire::VerdictRequest body = GateParameters(config);
  body.contender_runs = extra_runs;
  return body;
}

// The measurement `perfwarden run --paired` kept for this run, posted for the server's verdict;
// nullopt when there is none to use (and why, when one was kept but does not fit).
Result<std::optional<wire::Verdict>> JudgeKept(const config::RunnerConfig& config,
                                               client::ProjectClient& server,
                                               const PairedGateRequest& request,
                                               const std::string& save) {
  std::string why;
  auto kept = KeptPairedRun(config, request.run_id, request.settings, request.parameters, &why);
  if (!kept) {
    if (!why.empty()) {
      std::cerr << "perfwarden: not judging the measurement `perfwarden run --paired` kept: " << why
                << "; measuring side by side again\n";
    }
    return std::optional<wire::Verdict>();
  }
  size_t blocks = 0;
  for (const wire::PairedSeries& s : kept->series) blocks = std::max(blocks, s.blocks.size());
  std::cerr << "perfwarden: judging the side-by-side measurement `perfwarden run --paired` made of "
            << "this run (" << kept->series.size() << " series, up to " << blocks
            << " blocks, against " << kept->baseline_commit.substr(0, 12)
            << "): nothing is measured again\n";
  if (!save.empty()) {
    if (auto saved = SaveMeasurement(*kept, save); !saved) return tl::unexpected(saved.error());
  }
  auto verdict = server.PostPairedVerdict(request.run_id, *kept);
  if (!verdict) return tl::unexpected(verdict.error());
  return std::optional<wire::Verdict>(std::move(*verdict));
}

// Inconclusive benchmarks per suite, and the repetitions that the largest ask needs.
std::map<std::string, std::set<std::string>> Inconclusive(const wire::Verdict& verdict,
                                                          int max_repetitions, int* repetitions) {
  // One rerun serves them all: the most any of them needs, each capped so that its total
  // stays within max_repetitions; those already at the cap are left out.
  std::map<std::string, std::set<std::string>> out;
  int64_t most = 0;
  for (const wire::MetricResult& r : verdict.results) {
    if (r.kind != wire::ResultKind::kInconclusive || r.repetitions_needed <= 0) continue;
    const int64_t have = r.current ? r.current->n : 0;
    const int64_t more =
        std::min(std::max<int64_t>(r.repetitions_needed - have, 2), max_repetitions - have);
    if (more < 2) continue;
    most = std::max(most, more);
    out[r.key.suite].insert(r.key.benchmark);
  }
  *repetitions = static_cast<int>(most);
  return out;
}

// The settings of `gate:` in perfwarden.yaml with the command line's overrides.
Result<config::GateSettings> Settings(const GateArgs& args, const config::RunnerConfig& config) {
  config::GateSettings s = config.gate;
  if (args.paired) s.mode = config::GateMode::kPaired;
  if (!args.mode.empty()) s.mode = *config::ParseGateMode(args.mode);  // CLI11 checked the word
  if (args.block_repetitions > 0) s.block_repetitions = args.block_repetitions;
  if (args.min_blocks > 0) s.min_blocks = args.min_blocks;
  if (args.max_blocks > 0) s.max_blocks = args.max_blocks;
  if (args.time_budget >= 0) s.time_budget_s = args.time_budget;
  if (!args.baseline_cache.empty()) {
    std::error_code ec;
    s.baseline_cache = std::filesystem::absolute(args.baseline_cache, ec).lexically_normal();
  }
  if (args.no_baseline_cache) s.baseline_cache_entries = 0;
  if (s.max_blocks < s.min_blocks) {
    return InvalidArgument("--max-blocks " + std::to_string(s.max_blocks) +
                               " is below --min-blocks " + std::to_string(s.min_blocks),
                           "max-blocks");
  }
  return s;
}

// Measures every gated metric side by side and returns the server's verdict of it; nullopt
// (after a warning) when the measuring failed and the server's unpaired verdict must decide.
Result<std::optional<wire::Verdict>> MeasureSideBySide(const config::RunnerConfig& config,
                                                       client::ProjectClient& server,
                                                       PairedGateRequest request,
                                                       const std::string& save) {
  auto verdict = GatePaired(config, server, request, save);
  if (verdict) return std::optional<wire::Verdict>(std::move(*verdict));
  if (!verdict.error().measuring) return tl::unexpected(verdict.error().error);
  std::cerr << "perfwarden: warning: could not measure side by side ("
            << verdict.error().error.ToString() << "); the server's unpaired verdict decides\n";
  return std::optional<wire::Verdict>();
}

int Gate(const GateArgs& args) {
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  auto settings = Settings(args, *config);
  if (!settings) return ReportError(settings.error());
  // --confirm builds the baseline from config->gate: the same cache.
  config->gate.baseline_cache = settings->baseline_cache;
  config->gate.baseline_cache_entries = settings->baseline_cache_entries;
  if (args.no_post && ((args.save_measurement.empty() && args.artifact.empty()) ||
                       settings->mode != config::GateMode::kPaired)) {
    return ReportError(InvalidArgument("--no-post needs --paired and --save-measurement FILE or "
                                       "--artifact DIR",
                                       "no-post")
                           .value());
  }
  if (!args.artifact.empty() && !args.no_post) {
    return ReportError(InvalidArgument("--artifact needs --no-post (the artifact is for a job "
                                       "without the server; `perfwarden publish` posts it)",
                                       "artifact")
                           .value());
  }
  if (!args.no_post) {
    if (auto ok = run::RequireServer(*config); !ok) return ReportError(ok.error());
  }
  run::LastRun last;
  if (auto recorded = run::ReadLastRun(*config);
      recorded && (args.run_id.empty() || recorded->run_id == args.run_id)) {
    last = std::move(*recorded);
  } else if (args.run_id.empty()) {
    return ReportError(recorded.error());
  } else {
    last.run_id = args.run_id;  // another run: git tells its merge-base, this host its testbed
  }
  const std::string& run_id = last.run_id;
  if (args.no_post) {
    PairedGateRequest request;
    request.run_id = run_id;
    request.last = last;
    request.settings = *settings;
    request.parameters = RequestBody(*config, {});
    return GateWithoutServer(*config, request, args.save_measurement, args.artifact, args.outputs);
  }
  // The run may still be in the spool (the server was down during `perfwarden run`).
  auto pushed = run::PushSpool(*config);
  if (!pushed) return ReportError(pushed.error());

  auto server =
      client::ProjectClient::Open(config->server.url, config->server.project, config->server.token);
  if (!server) return ReportError(server.error());
  std::vector<std::string> extra_runs;
  const std::string why_not_paired = WhyNotPaired(*config, {});
  PairedGateRequest paired;
  paired.run_id = run_id;
  paired.last = last;
  paired.settings = *settings;
  paired.parameters = RequestBody(*config, {});

  std::optional<wire::Verdict> verdict;
  bool paired_failed = false;  // measuring side by side failed once: not tried again
  if (settings->mode != config::GateMode::kUnpaired) {
    if (why_not_paired.empty()) {
      // What `perfwarden run --paired` measured, else measured now.
      auto kept = JudgeKept(*config, *server, paired, args.save_measurement);
      if (!kept) return ReportError(kept.error());
      verdict = std::move(*kept);
      if (!verdict) {
        auto measured = MeasureSideBySide(*config, *server, paired, args.save_measurement);
        if (!measured) return ReportError(measured.error());
        verdict = std::move(*measured);
        paired_failed = !verdict;
      }
    } else {
      std::cerr << "perfwarden: "
                << (settings->mode == config::GateMode::kPaired ? "warning: " : "")
                << "cannot measure side by side (" << why_not_paired
                << "); the server's unpaired verdict decides\n";
    }
  }
  bool shift_unresolved = false;
  if (!verdict) {
    auto asked = server->AskVerdict(run_id, RequestBody(*config, extra_runs));
    if (!asked) return ReportError(asked.error());
    verdict = std::move(*asked);
  }
  if (!verdict->paired && args.rerun_inconclusive &&
      verdict->outcome != wire::Outcome::kNoBaseline) {
    int repetitions = 0;
    auto only = Inconclusive(*verdict, args.max_repetitions, &repetitions);
    if (!only.empty()) {
      size_t count = 0;
      for (const auto& [suite, names] : only) count += names.size();
      std::cerr << "perfwarden: rerunning " << count << " inconclusive benchmark(s) with "
                << repetitions << " more repetitions (--max-repetitions " << args.max_repetitions
                << ")\n";
      run::MeasureRequest request;
      request.only = only;
      request.repetitions = repetitions;
      request.branch = verdict->branch;
      request.skip_build = true;
      request.record_last_run = false;
      auto measured = run::MeasureAndSpool(*config, request);
      if (!measured) return ReportError(measured.error());
      auto again = run::PushSpool(*config);
      if (!again) return ReportError(again.error());
      extra_runs.push_back(measured->upload.id);
      auto asked = server->AskVerdict(run_id, RequestBody(*config, extra_runs));
      if (!asked) return ReportError(asked.error());
      verdict = std::move(*asked);
    } else {
      std::cerr << "perfwarden: nothing to rerun (no inconclusive benchmark within "
                << "--max-repetitions " << args.max_repetitions << ")\n";
    }
  }

  if (!verdict->paired && verdict->environment_shift) {
    // The run's metrics moved together: a drift of the machine between the baseline's runs and
    // this one, or a change that touches everything. Only a side-by-side measurement tells.
    if (why_not_paired.empty() && !args.no_shift_remeasure && !paired_failed) {
      std::cerr << "perfwarden: the run's metrics moved together ("
                << verdict->environment_shift->reason
                << "): re-measuring every gated metric side by side\n";
      auto measured = MeasureSideBySide(*config, *server, paired, args.save_measurement);
      if (!measured) return ReportError(measured.error());
      if (*measured) {
        verdict = std::move(**measured);
      } else {
        shift_unresolved = true;
      }
    } else {
      shift_unresolved = true;
    }
  }
  if (!verdict->paired && !shift_unresolved && args.confirm && report::HasRegression(*verdict)) {
    auto confirmed = ConfirmRegressions(*config, *server, last, paired.parameters, &*verdict);
    if (!confirmed) {
      std::cerr << "perfwarden: warning: could not confirm the regressions ("
                << confirmed.error().ToString() << "); they stand as the server judged them\n";
    } else {
      for (const std::string& line : confirmed->lines) std::cerr << "perfwarden: " << line << "\n";
    }
  }

  WriteVerdictOutputs(*verdict, config->server.project, args.outputs);

  if (ReportNoisyEnvironment(*verdict)) return kExitInfrastructure;
  if (shift_unresolved) {
    // Drift can create a regression here or hide one: neither a pass nor a failure.
    std::cerr << "perfwarden: the run's metrics moved together ("
              << verdict->environment_shift->reason << "), and "
              << (why_not_paired.empty()
                      ? (args.no_shift_remeasure
                             ? std::string("--no-shift-remeasure was given")
                             : std::string("the side-by-side measurement failed"))
                      : why_not_paired)
              << ": the unpaired comparison cannot tell a drift of the machine from a change of "
                 "the code; repeat the job, or gate with --paired\n";
    return kExitInfrastructure;
  }
  if (report::HasRegression(*verdict)) return kExitRegression;
  if (verdict->outcome == wire::Outcome::kNoBaseline) {
    if (args.require_baseline) {
      std::cerr << "perfwarden: no baseline, and --require-baseline was given: failing\n";
      return kExitRegression;
    }
    std::cerr << "perfwarden: warning: no baseline to compare with; passing (use "
                 "--require-baseline to fail instead)\n";
  }
  return kExitPass;
}

}  // namespace

void AddGateCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* gate = app.add_subcommand(
      "gate",
      "Decide the last `perfwarden run` (or --run ID) and fail on a regression: the baseline "
      "and this build measured side by side on this host (--paired, --mode auto) or the "
      "server's verdict against stored runs (--mode unpaired), stored by the server either way. "
      "Exit codes: 0 pass, 1 regression, 2 usage/config error, 3 server "
      "unreachable, a noisy environment (throttled GPUs: repeat the run on a healthy host), or "
      "metrics that moved together and could not be re-measured side by side");
  gate->add_option("--config", args->config, "perfwarden.yaml to use");
  gate->add_option("--run", args->run_id, "Run id (default: the last one `perfwarden run` made)");
  gate->add_flag("--require-baseline", args->require_baseline,
                 "Fail when there is no baseline to compare with (default: pass with a warning)");
  gate->add_flag("--rerun-inconclusive", args->rerun_inconclusive,
                 "Rerun inconclusive benchmarks with the repetitions power analysis asks for, "
                 "then ask again");
  gate->add_option("--max-repetitions", args->max_repetitions,
                   "Upper bound of a benchmark's repetitions when rerunning")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  gate->add_flag("--paired", args->paired,
                 "Measure the baseline commit (the merge-base) and this build interleaved in "
                 "blocks on this host and judge the pairs (same as --mode paired)");
  gate->add_option("--mode", args->mode,
                   "unpaired: the server's verdict; paired: side by side on this host; auto: "
                   "paired when every suite can be built at the baseline (default: perfwarden.yaml "
                   "gate.mode, else unpaired)")
      ->check(CLI::IsMember({"unpaired", "paired", "auto"}));
  gate->add_option(
          "--block-repetitions", args->block_repetitions,
          "Paired: repetitions of each side per block (default: gate.block_repetitions, 1)")
      ->check(CLI::Range(1, 1000));
  gate->add_option("--min-blocks", args->min_blocks,
                   "Paired: blocks of the first look (default: gate.min_blocks, 10)")
      ->check(CLI::Range(3, 1000));
  gate->add_option("--max-blocks", args->max_blocks,
                   "Paired: blocks of the last look; a metric still undecided then is UNSTABLE "
                   "(not gating) (default: gate.max_blocks, 50)")
      ->check(CLI::Range(3, 10000));
  gate->add_option("--time-budget", args->time_budget,
                   "Paired: seconds of measuring after which the next look is the last; 0: none "
                   "(default: gate.time_budget, 0)")
      ->check(CLI::Range(int64_t{0}, int64_t{7} * 24 * 3600));
  gate->add_option("--save-measurement", args->save_measurement,
                   "Paired: also write the measurement (JSON, as posted) to this file");
  gate->add_flag("--no-post", args->no_post,
                 "Paired: measure (or take what `perfwarden run --paired` measured) and write "
                 "--save-measurement or --artifact only, without the server (a host that cannot "
                 "reach it; a fork's pull request)");
  gate->add_option("--artifact", args->artifact,
                   "With --no-post: write the fork artifact here (the spooled run, the paired "
                   "measurement, the verdict judged here and manifest.json with their SHA-256) "
                   "for `perfwarden publish`; exits 0 pass, 1 regression by that verdict");
  CLI::Option* cache =
      gate->add_option("--baseline-cache", args->baseline_cache,
                       "Paired: the directory of the baseline build cache (default: "
                       "$PERFWARDEN_BASELINE_CACHE, else gate.baseline_cache, else "
                       "<config dir>/.perfwarden/baseline-cache)");
  gate->add_flag("--no-baseline-cache", args->no_baseline_cache,
                 "Paired: build the baseline without the build cache, and store nothing there")
      ->excludes(cache);
  gate->add_flag("--no-shift-remeasure", args->no_shift_remeasure,
                 "When the run's metrics moved together (environment_shift), do not re-measure "
                 "them side by side; the gate then exits 3");
  gate->add_flag("--confirm", args->confirm,
                 "Re-measure the regressions side by side against the baseline commit (paired, "
                 "with the same blocks and looks) and store the amended verdict");
  AddVerdictOutputOptions(gate, &args->outputs);
  gate->callback([args, exit_code]() { *exit_code = Gate(*args); });
}

}  // namespace perfwarden::cli
