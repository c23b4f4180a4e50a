// `perfgate gate`: asks the server for the verdict of the last run (or --run), with the
// thresholds of perfgate.yaml; optionally reruns the inconclusive benchmarks with the
// repetitions power analysis asked for and asks again; prints the table and writes the
// step summary, the PR/MR comment body, JUnit and GitLab's metrics report.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "runner/cli/commands.h"
#include "runner/cli/confirm.h"
#include "runner/client/project_client.h"
#include "runner/report/verdict_render.h"
#include "runner/run/session.h"
#include "wire/verdict_request.h"

namespace perfgate::cli {
namespace {

using nlohmann::json;

struct GateArgs {
  std::string config;
  std::string run_id;
  bool require_baseline = false;
  bool rerun_inconclusive = false;
  bool confirm = false;
  int confirm_rounds = 6;
  int max_repetitions = 60;
  std::string comment_file;
  std::string junit_file;
  std::string gitlab_metrics_file;
  std::string summary_file;  // default $GITHUB_STEP_SUMMARY
  std::string format = "text";
  std::string color = "auto";
};

wire::VerdictRequest RequestBody(const config::RunnerConfig& config,
                                 const std::vector<std::string>& extra_runs) {
  wire::VerdictRequest body;
  body.threshold = config::kDefaultThresholdPercent / 100;
  body.alpha = config::kDefaultAlpha;
  body.rules = config.thresholds;
  body.contender_runs = extra_runs;
  return body;
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

void WriteFile(const std::string& path, const std::string& text, bool append = false) {
  if (path.empty()) return;
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  out << text;
  if (!out) std::cerr << "perfgate: warning: cannot write " << path << "\n";
}

int Gate(const GateArgs& args) {
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  if (auto ok = run::RequireServer(*config); !ok) return ReportError(ok.error());
  std::string run_id = args.run_id;
  if (run_id.empty()) {
    auto last = run::ReadLastRun(*config);
    if (!last) return ReportError(last.error());
    run_id = last->run_id;
  }
  // The run may still be in the spool (the server was down during `perfgate run`).
  auto pushed = run::PushSpool(*config);
  if (!pushed) return ReportError(pushed.error());

  auto server =
      client::ProjectClient::Open(config->server.url, config->server.project, config->server.token);
  if (!server) return ReportError(server.error());
  std::vector<std::string> extra_runs;
  auto verdict = server->AskVerdict(run_id, RequestBody(*config, extra_runs));
  if (!verdict) return ReportError(verdict.error());

  if (args.rerun_inconclusive && verdict->outcome != wire::Outcome::kNoBaseline) {
    int repetitions = 0;
    auto only = Inconclusive(*verdict, args.max_repetitions, &repetitions);
    if (!only.empty()) {
      size_t count = 0;
      for (const auto& [suite, names] : only) count += names.size();
      std::cerr << "perfgate: rerunning " << count << " inconclusive benchmark(s) with "
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
      verdict = server->AskVerdict(run_id, RequestBody(*config, extra_runs));
      if (!verdict) return ReportError(verdict.error());
    } else {
      std::cerr << "perfgate: nothing to rerun (no inconclusive benchmark within "
                << "--max-repetitions " << args.max_repetitions << ")\n";
    }
  }

  if (args.confirm && report::HasRegression(*verdict)) {
    ConfirmOptions options;
    options.rounds = args.confirm_rounds;
    auto confirmed = ConfirmRegressions(*config, options, &*verdict);
    if (!confirmed) {
      std::cerr << "perfgate: warning: could not confirm the regressions ("
                << confirmed.error().ToString() << "); they stand as the server judged them\n";
    } else {
      for (const std::string& line : confirmed->lines) std::cerr << "perfgate: " << line << "\n";
    }
  }

  // The A/B rerun withdrew every regression of a throttled run: nothing is left to repeat.
  if (verdict->outcome == wire::Outcome::kNoisyEnvironment && !report::HasRegression(*verdict)) {
    verdict->outcome = wire::Outcome::kPass;
  }

  const bool color = args.color == "always" || (args.color == "auto" && isatty(STDOUT_FILENO) &&
                                                std::getenv("NO_COLOR") == nullptr);
  if (args.format == "json") {
    json out = {{"outcome", std::string(wire::OutcomeName(verdict->outcome))},
                {"run_id", verdict->run_id},
                {"verdict_id", verdict->id},
                {"regressions", verdict->counts.regression}};
    std::cout << out.dump(2) << "\n";
  } else if (args.format == "markdown") {
    std::cout << report::RenderMarkdown(*verdict);
  } else {
    report::TextOptions options;
    options.color = color;
    std::cout << report::RenderText(*verdict, options);
  }
  std::string summary = args.summary_file;
  if (summary.empty()) {
    const char* env = std::getenv("GITHUB_STEP_SUMMARY");
    if (env != nullptr) summary = env;
  }
  report::MarkdownOptions markdown;
  markdown.project = config->server.project;
  WriteFile(summary, report::RenderMarkdown(*verdict, markdown), /*append=*/true);
  markdown.comment = true;
  WriteFile(args.comment_file, report::RenderMarkdown(*verdict, markdown));
  WriteFile(args.junit_file, report::RenderJUnit(*verdict));
  WriteFile(args.gitlab_metrics_file, report::RenderGitLabMetrics(*verdict));

  if (report::IsNoisyEnvironment(*verdict)) {
    // Neither a pass nor the code's fault: exit 3 like an unreachable server, so that CI
    // retries the job (on another host) instead of blaming the pull request.
    std::cerr << "perfgate: every regression was measured on throttled GPUs (power or thermal "
                 "caps): repeat the run on a healthy host\n";
    return kExitInfrastructure;
  }
  if (report::HasRegression(*verdict)) return kExitRegression;
  if (verdict->outcome == wire::Outcome::kNoBaseline) {
    if (args.require_baseline) {
      std::cerr << "perfgate: no baseline, and --require-baseline was given: failing\n";
      return kExitRegression;
    }
    std::cerr << "perfgate: warning: no baseline to compare with; passing (use "
                 "--require-baseline to fail instead)\n";
  }
  return kExitPass;
}

}  // namespace

void AddGateCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GateArgs>();
  CLI::App* gate = app.add_subcommand(
      "gate",
      "Ask the server for the verdict of the last `perfgate run` (or --run ID) and fail on a "
      "regression. Exit codes: 0 pass, 1 regression, 2 usage/config error, 3 server "
      "unreachable or a noisy environment (throttled GPUs: repeat the run on a healthy host)");
  gate->add_option("--config", args->config, "perfgate.yaml to use");
  gate->add_option("--run", args->run_id, "Run id (default: the last one `perfgate run` made)");
  gate->add_flag("--require-baseline", args->require_baseline,
                 "Fail when there is no baseline to compare with (default: pass with a warning)");
  gate->add_flag("--rerun-inconclusive", args->rerun_inconclusive,
                 "Rerun inconclusive benchmarks with the repetitions power analysis asks for, "
                 "then ask again");
  gate->add_option("--max-repetitions", args->max_repetitions,
                   "Upper bound of a benchmark's repetitions when rerunning")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  gate->add_flag("--confirm", args->confirm,
                 "Re-measure every regression against the baseline commit, alternating baseline "
                 "and this build on this machine (A/B), and withdraw those it rules out");
  gate->add_option("--confirm-rounds", args->confirm_rounds,
                   "A/B alternations of --confirm (4 repetitions of each side per round)")
      ->check(CLI::Range(2, 100))
      ->capture_default_str();
  gate->add_option("--comment-file", args->comment_file,
                   "Write a PR/MR comment body (Markdown) here");
  gate->add_option("--junit", args->junit_file, "Write JUnit XML here");
  gate->add_option("--gitlab-metrics", args->gitlab_metrics_file,
                   "Write GitLab's metrics report here");
  gate->add_option("--summary-file", args->summary_file,
                   "Append the Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)");
  gate->add_option("--format", args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  gate->add_option("--color", args->color, "Colour the text table")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  gate->callback([args, exit_code]() { *exit_code = Gate(*args); });
}

}  // namespace perfgate::cli
