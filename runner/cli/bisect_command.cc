// SPDX-License-Identifier: Apache-2.0
// `perfwarden bisect --good REV --bad REV --benchmark NAME ...` (or `--alert ID`, which takes them
// from a server's alert): the commit of a range that made a benchmark slower, measured on this
// machine (runner/local_bisect/bisect_run.h) or, with --remote --testbed NAME, queued on the server
// for the agents of that testbed (`perfwarden agent`); `perfwarden bisect status ID` follows a
// queued one. Printed as text, Markdown or JSON. Exit 0 with an answer (or a queued bisect), 1 when
// the regression does not reproduce between the ends, 2 on bad usage, 3 when a build or run fails
// for reasons other than the code (or a remote bisect failed), or when the ends stayed undecided
// at the repetition cap.
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "core/threshold_rule.h"
#include "runner/cli/commands.h"
#include "runner/client/project_client.h"
#include "runner/local_bisect/bisect_run.h"
#include "runner/report/bisect_format.h"
#include "runner/run/session.h"
#include "wire/bisect.h"

namespace perfwarden::cli {
namespace {

struct BisectArgs {
  local_bisect::BisectOptions options;
  std::string alert;
  std::string group;                    // --group G: the group's most significant member
  std::optional<int64_t> group_bisect;  // the bisect the alert's group already has
  std::string threshold = "5%";
  bool all_parents = false;
  std::string config;
  std::string format = "text";
  bool remote = false;
  std::string testbed;
  bool wait = false;
  double poll_seconds = 5;
};

struct StatusArgs {
  std::string id;
  std::string config;
  std::string format = "text";
  bool wait = false;
  double poll_seconds = 5;
};

std::string Format(const bisect::Report& report, const std::string& format) {
  return format == "json"       ? bisect::ReportJson(report).dump(2) + "\n"
         : format == "markdown" ? report::FormatBisectMarkdown(report)
                                : report::FormatBisectText(report);
}

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// An answer's exit code: 0 with a culprit; 3 when the ends stayed undecided at the repetition cap
// (the machine too noisy for the cap, as the gate's noisy_environment); else 1 (the regression
// does not reproduce).
int AnswerExit(const bisect::Report& report) {
  if (!report.culprits.empty()) return kExitPass;
  return report.endpoints.outcome == bisect::Reproduction::kUndecided ? kExitInfrastructure
                                                                      : kExitRegression;
}

// --alert ID (or --group G): the range, suite, benchmark and metric of a server's alert. An
// alert of a group stands for its group, whose one bisect measures its most significant member:
// that member is the one taken, and a bisect the group already has is noted in
// args.group_bisect.
Result<void> FromAlert(BisectArgs& args) {
  if (!args.group.empty() && !args.alert.empty()) {
    return InvalidArgument("give --alert ID or --group G, not both", "group");
  }
  const std::string& asked = args.group.empty() ? args.alert : args.group;
  if (auto ok = client::CheckId(asked); !ok) return ok;
  auto client = run::OpenProjectClient(args.config);
  if (!client) return tl::unexpected(client.error());
  std::string group_id = args.group;
  if (group_id.empty()) {
    auto asked_alert = client->GetAlert(args.alert);
    if (!asked_alert) return tl::unexpected(asked_alert.error());
    if (asked_alert->alert.group_id > 0) group_id = std::to_string(asked_alert->alert.group_id);
  }
  if (!group_id.empty()) {
    auto group = client->GetAlertGroup(group_id);
    if (!group) return tl::unexpected(group.error());
    const std::string member = std::to_string(group->group.most_significant);
    if (member != args.alert) {
      std::fprintf(stderr, "perfwarden: alert group %s: bisecting its most significant alert, %s\n",
                   group_id.c_str(), member.c_str());
    }
    args.alert = member;
    args.group_bisect = group->group.bisect_id;
  }
  auto detail = client->GetAlert(args.alert);
  if (!detail) return tl::unexpected(detail.error());
  const wire::Alert& alert = detail->alert;
  if (args.options.good.empty()) args.options.good = alert.range.last_good.sha;
  if (args.options.bad.empty()) args.options.bad = alert.range.first_bad.sha;
  if (args.options.good.empty() || args.options.bad.empty()) {
    return MakeError(
        ErrorCode::kUnavailable,
        "alert " + args.alert + ": the server's answer has no " +
            (args.options.good.empty() ? "range.last_good.sha" : "range.first_bad.sha"));
  }
  if (args.options.benchmarks.empty()) args.options.benchmarks = {alert.series.key.benchmark};
  if (args.options.suite.empty()) args.options.suite = alert.series.key.suite;
  if (args.options.metric.empty()) args.options.metric = alert.series.key.metric;
  std::fprintf(stderr, "perfwarden: alert %s: %s..%s, %s %s\n", args.alert.c_str(),
               args.options.good.substr(0, 12).c_str(), args.options.bad.substr(0, 12).c_str(),
               args.options.benchmarks.front().c_str(), args.options.metric.c_str());
  return {};
}

bool Finished(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

// Prints a stored bisect (its answer when finished, else its progress), following it with
// --wait; the exit code says how it ended. `id` has passed client::CheckId.
int ShowBisect(client::ProjectClient& client, const std::string& id, const std::string& format,
               bool wait, double poll_seconds) {
  std::string last;
  while (true) {
    auto b = client.GetBisect(std::stoll(id));
    if (!b) return ReportError(b.error());
    if (Finished(b->state)) {
      if (b->report) {
        auto report = bisect::ReportFromJson(*b->report);
        if (!report) return ReportError(report.error());
        Print(Format(*report, format));
        if (const int exit = AnswerExit(*report); exit != kExitRegression) return exit;
      }
      if (b->state == "failed" && b->error) {
        return ReportError(
            Error{ErrorCode::kUnavailable, "bisect " + id + " failed: " + *b->error, ""});
      }
      if (b->state == "cancelled")
        std::fprintf(stderr, "perfwarden: bisect %s was cancelled\n", id.c_str());
      return kExitRegression;
    }
    const std::string now =
        format == "json" ? wire::EncodeBisect(*b).dump(2) + "\n" : report::FormatBisectProgress(*b);
    if (now != last) {
      if (wait) {
        std::fwrite(now.data(), 1, now.size(), stderr);
      } else {
        Print(now);
      }
      last = now;
    }
    if (!wait) return kExitPass;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
  }
}

// --remote: the range is listed here (the server has no repository) and queued on the server
// for the agents of --testbed.
int QueueRemote(BisectArgs& args) {
  if (args.testbed.empty()) {
    return ReportError(Error{ErrorCode::kInvalidArgument,
                             "--remote needs --testbed NAME (the agents that measure)", "testbed"});
  }
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  auto repo = git::Repository::Open(config->base_dir.string());
  if (!repo) return ReportError(repo.error());
  auto range = local_bisect::ListBisectRange(*repo, args.options);
  if (!range) return ReportError(range.error());
  wire::RemoteBisectRequest request;
  request.testbed = args.testbed;
  request.good = range->commits.front().sha;
  request.bad = range->commits.back().sha;
  for (const git::CommitInfo& c : range->commits) {
    request.commits.push_back({c.sha, c.subject, c.author});
  }
  request.benchmarks = args.options.benchmarks;
  request.suite = args.options.suite;
  request.metric = args.options.metric;
  request.build = args.options.build;
  request.options = bisect::SearchOptionsJson(local_bisect::SearchOptionsOf(args.options));
  if (!args.alert.empty()) request.alert_id = std::stoll(args.alert);
  auto client = run::OpenProjectClient(args.config);
  if (!client) return ReportError(client.error());
  auto queued = client->QueueBisect(request);
  if (!queued) return ReportError(queued.error());
  const std::string id = std::to_string(queued->id);
  std::fprintf(stderr,
               "perfwarden: queued as bisect %s: %zu commits for the agents of testbed %s "
               "(`perfwarden agent --testbed %s`); follow it with `perfwarden bisect status %s`\n",
               id.c_str(), range->commits.size() - 1, args.testbed.c_str(), args.testbed.c_str(),
               id.c_str());
  if (!args.wait) {
    Print(id + "\n");
    return kExitPass;
  }
  return ShowBisect(*client, id, args.format, true, args.poll_seconds);
}

int Run(BisectArgs& args) {
  if (!args.alert.empty() || !args.group.empty()) {
    if (auto from = FromAlert(args); !from) return ReportError(from.error());
    if (args.group_bisect) {
      // One bisect per group: the server would answer this one (or refuse a second answer).
      const std::string id = std::to_string(*args.group_bisect);
      std::fprintf(stderr,
                   "perfwarden: the alert's group already has bisect %s; follow it with "
                   "`perfwarden bisect status %s`\n",
                   id.c_str(), id.c_str());
      Print(id + "\n");
      return kExitPass;
    }
  }
  if (args.options.good.empty() || args.options.bad.empty() || args.options.benchmarks.empty()) {
    return ReportError(Error{ErrorCode::kInvalidArgument,
                             "give --alert ID, --group G, or --good REV --bad REV --benchmark NAME",
                             "good"});
  }
  auto threshold = ParseThreshold(args.threshold);
  if (!threshold) return ReportError(threshold.error());
  args.options.threshold = *threshold;
  args.options.first_parent = !args.all_parents;
  if (args.remote) return QueueRemote(args);
  auto config = run::LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  auto report = local_bisect::RunBisect(*config, args.options);
  if (!report) return ReportError(report.error());
  if (!args.alert.empty()) {
    // The answer goes to the server with its alert, so that the alert shows its culprit.
    const wire::BisectReportUpload upload{.report = bisect::ReportJson(*report),
                                          .alert_id = std::stoll(args.alert)};
    auto client = run::OpenProjectClient(args.config);
    auto stored =
        client ? client->StoreBisect(upload) : Result<wire::Bisect>(tl::unexpected(client.error()));
    if (stored) {
      std::fprintf(stderr, "perfwarden: stored on the server as bisect %s of alert %s\n",
                   std::to_string(stored->id).c_str(), args.alert.c_str());
    } else {
      std::fprintf(stderr,
                   "perfwarden: warning: the bisect could not be stored on the server: %s\n",
                   stored.error().message.c_str());
    }
  }
  Print(Format(*report, args.format));
  return AnswerExit(*report);
}

int Status(const StatusArgs& args) {
  if (auto ok = client::CheckId(args.id); !ok) return ReportError(ok.error());
  auto client = run::OpenProjectClient(args.config);
  if (!client) return ReportError(client.error());
  return ShowBisect(*client, args.id, args.format, args.wait, args.poll_seconds);
}

}  // namespace

void AddBisectCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bisect",
      "Find the commit that made a benchmark slower: measures commits of --good..--bad (each "
      "exported into a temporary tree and built with --build; your working tree is not "
      "touched), judges each by the interval of its position between the two ends, adds "
      "repetitions when a commit is undecided, skips commits that do not build, and keeps its "
      "state so that an interrupted bisect resumes; with --remote --testbed NAME it is queued on "
      "the server for that testbed's agents (`perfwarden agent`). Exit 0 with an answer (or a "
      "queued bisect), 1 when the regression does not reproduce between the ends, 2 usage, 3 a "
      "failing run or ends still undecided at --max-repetitions");
  cmd->add_option("--alert", args->alert,
                  "A server alert's id: its range, suite, benchmark and metric (perfwarden.yaml's "
                  "server, PERFWARDEN_TOKEN with the read scope); the options below override them");
  cmd->add_option("--group", args->group,
                  "A server alert group's id: bisects its most significant alert (--alert of any "
                  "member does the same); when the group has a bisect already, prints its id");
  cmd->add_option("--good", args->options.good, "A revision without the regression");
  cmd->add_option("--bad", args->options.bad, "A revision with it");
  cmd->add_option("--benchmark", args->options.benchmarks,
                  "Benchmark (a Google Benchmark name, or a command suite's name); the first "
                  "decides");
  cmd->add_option("--suite", args->options.suite, "Suite of perfwarden.yaml (default: found)");
  cmd->add_option("--metric", args->options.metric,
                  "Metric (default real_time, wall_time for a command suite)");
  cmd->add_option("--build", args->options.build,
                  "Shell command run in each checked-out commit before measuring; a non-zero "
                  "exit skips the commit");
  cmd->add_option("--threshold", args->threshold,
                  "Smallest regression between the ends that is worth bisecting")
      ->capture_default_str();
  cmd->add_option("--repetitions", args->options.repetitions, "Repetitions per measurement")
      ->check(CLI::Range(2, 10000))
      ->capture_default_str();
  cmd->add_option("--max-repetitions", args->options.max_repetitions,
                  "Cap when an undecided commit's repetitions double")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_flag("--post,!--no-post", args->options.post,
                "Post every commit measured to perfwarden.yaml's server (branch perfwarden-bisect; "
                "default when a server and PERFWARDEN_TOKEN are set)");
  cmd->add_flag("--all-parents", args->all_parents,
                "Search every commit of the range, not only the first-parent line");
  cmd->add_option("--state", args->options.state_file,
                  "State file (default .perfwarden/bisect-<good>-<bad>.json beside the spool)");
  cmd->add_option("--config", args->config, "perfwarden.yaml to use");
  cmd->add_option("--format", args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  cmd->add_flag(
      "--remote", args->remote,
      "Queue the bisect on perfwarden.yaml's server for the agents of --testbed instead of "
      "measuring here (PERFWARDEN_TOKEN with the ingest scope); prints its id");
  cmd->add_option("--testbed", args->testbed, "With --remote: the testbed whose agents measure");
  cmd->add_flag("--wait", args->wait,
                "With --remote: follow the bisect (progress on stderr) and print its answer");
  cmd->add_option("--poll", args->poll_seconds, "With --wait: seconds between looks")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();

  auto status_args = std::make_shared<StatusArgs>();
  CLI::App* status = cmd->add_subcommand(
      "status",
      "Show a bisect stored on the server (queued with --remote, or posted by --alert): its "
      "answer when finished, else the step being measured and the probes decided so far. Exit "
      "0 (an answer, or still running), 1 when it found no culprit, 3 when it failed or its ends "
      "stayed undecided");
  status->add_option("ID", status_args->id, "The bisect's id")->required();
  status->add_option("--config", status_args->config, "perfwarden.yaml to use");
  status->add_option("--format", status_args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  status->add_flag("--wait", status_args->wait,
                   "Follow the bisect until it finishes (progress on stderr)");
  status->add_option("--poll", status_args->poll_seconds, "With --wait: seconds between looks")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  status->callback([status_args, exit_code]() { *exit_code = Status(*status_args); });
  cmd->callback([args, status, exit_code]() {
    if (status->parsed()) return;  // `perfwarden bisect status ID`
    *exit_code = Run(*args);
  });
}

}  // namespace perfwarden::cli
