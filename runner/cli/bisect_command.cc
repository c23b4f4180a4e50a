// `perfgate bisect --good REV --bad REV --benchmark NAME ...` (or `--alert ID`, which takes them
// from a server's alert): the commit of a range that made a benchmark slower, measured on this
// machine (runner/cli/bisect_run.h), printed as text, Markdown or JSON. Exit 0 with an answer, 1
// when the regression does not reproduce between the ends, 2 on bad usage, 3 when a build or run
// fails for reasons other than the code.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/cli/alerts_client.h"
#include "runner/cli/bisect_run.h"
#include "runner/cli/commands.h"
#include "runner/cli/session.h"
#include "runner/compare/compare.h"

namespace perfgate::cli {
namespace {

using nlohmann::ordered_json;

struct BisectArgs {
  BisectOptions options;
  std::string alert;
  std::string threshold = "5%";
  bool all_parents = false;
  std::string config;
  std::string format = "text";
};

std::string Percent(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.1f%%", 100 * x);
  return text;
}

std::string Number(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", x);
  return text;
}

std::string CulpritLine(const Culprit& c) {
  std::string line =
      c.exact ? "culprit: " + c.sha.substr(0, 12) + " " + c.subject + " (" + c.author + ")"
              : "culprit: one of " + std::to_string(c.candidates.size()) + " commits ending at " +
                    c.sha.substr(0, 12) + " (the others could not be measured)";
  return line + "\n  step " + Percent(c.magnitude) + " [" + Percent(c.ci_low) + ", " +
         Percent(c.ci_high) + "] (95% CI), " + Percent(c.share).substr(1) +
         " of the change between the ends\n";
}

std::string FormatText(const BisectReport& r) {
  std::string out = "bisect " + r.good_sha.substr(0, 12) + ".." + r.bad_sha.substr(0, 12) + ": " +
                    std::to_string(r.commits) + " commits, " + r.suite + " " +
                    r.benchmarks.front() + " " + r.metric + "\n";
  out += "ends: " + r.endpoints.reason + "\n";
  for (const Culprit& c : r.culprits) out += CulpritLine(c);
  if (r.culprits.empty()) out += "no culprit: the regression does not reproduce\n";
  out += std::to_string(r.probes.size()) + " probes (about " + std::to_string(r.expected_probes) +
         " expected), " + std::to_string(r.builds) + " builds, " + std::to_string(r.runs) +
         " suite runs" + (r.resumed ? " (resumed)" : "") + "\n";
  if (!r.probes.empty()) {
    out += "\n  #  commit        n     median  verdict  subject / why\n";
    int k = 0;
    for (const ProbeRecord& p : r.probes) {
      char line[128];
      std::snprintf(line, sizeof line, "%3d  %-12s %3d %10s  %-7s  ", ++k,
                    p.sha.substr(0, 12).c_str(), p.n, Number(p.median).c_str(), p.verdict.c_str());
      out += line + p.subject + "\n       " + p.reason + "\n";
    }
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string FormatMarkdown(const BisectReport& r) {
  std::string out = "### perfgate bisect: `" + r.benchmarks.front() + "` " + r.metric + "\n\n";
  out += "Range `" + r.good_sha.substr(0, 12) + "..` `" + r.bad_sha.substr(0, 12) + "` (" +
         std::to_string(r.commits) + " commits). Ends: " + r.endpoints.reason + ".\n\n";
  for (const Culprit& c : r.culprits) {
    out += "- **" + std::string(c.exact ? "Culprit" : "Culprit range") + "**: `" +
           c.sha.substr(0, 12) + "` " + c.subject + " (" + c.author + "), step " +
           Percent(c.magnitude) + " [" + Percent(c.ci_low) + ", " + Percent(c.ci_high) + "]\n";
  }
  out += "\n| # | commit | n | median | verdict | why |\n|---:|---|---:|---:|---|---|\n";
  int k = 0;
  for (const ProbeRecord& p : r.probes) {
    out += "| " + std::to_string(++k) + " | `" + p.sha.substr(0, 12) + "` | " +
           std::to_string(p.n) + " | " + Number(p.median) + " | " + p.verdict + " | " + p.reason +
           " |\n";
  }
  out += "\n" + std::to_string(r.probes.size()) + " probes, " + std::to_string(r.builds) +
         " builds, " + std::to_string(r.runs) + " suite runs.\n";
  for (const std::string& w : r.warnings) out += "\n> " + w + "\n";
  return out;
}

std::string FormatJson(const BisectReport& r) {
  ordered_json culprits = ordered_json::array();
  for (const Culprit& c : r.culprits) {
    culprits.push_back({{"sha", c.sha},
                        {"author", c.author},
                        {"subject", c.subject},
                        {"exact", c.exact},
                        {"candidates", c.candidates},
                        {"magnitude", c.magnitude},
                        {"ci", {c.ci_low, c.ci_high}},
                        {"share", c.share}});
  }
  ordered_json probes = ordered_json::array();
  for (const ProbeRecord& p : r.probes) {
    probes.push_back({{"position", p.position},
                      {"sha", p.sha},
                      {"subject", p.subject},
                      {"n", p.n},
                      {"median", p.median},
                      {"verdict", p.verdict},
                      {"reason", p.reason}});
  }
  ordered_json out = {{"good", r.good_sha},
                      {"bad", r.bad_sha},
                      {"suite", r.suite},
                      {"benchmarks", r.benchmarks},
                      {"metric", r.metric},
                      {"commits", r.commits},
                      {"endpoints",
                       {{"reproduced", r.endpoints.reproduced},
                        {"change", r.endpoints.change},
                        {"p_value", r.endpoints.p_value}}},
                      {"culprits", culprits},
                      {"probes", probes},
                      {"expected_probes", r.expected_probes},
                      {"builds", r.builds},
                      {"runs", r.runs},
                      {"resumed", r.resumed},
                      {"posted", r.posted},
                      {"warnings", r.warnings}};
  return out.dump(2) + "\n";
}

// --alert ID: the range, suite, benchmark and metric of a server's alert.
Result<void> FromAlert(BisectArgs& args) {
  if (auto ok = CheckId(args.alert); !ok) return ok;
  auto client = AlertsClient::Open(args.config);
  if (!client) return tl::unexpected(client.error());
  auto alert = client->Call("GET", "/alerts/" + args.alert, "");
  if (!alert) return tl::unexpected(alert.error());
  try {
    const auto& range = alert->at("range");
    const auto& series = alert->at("series");
    if (args.options.good.empty()) args.options.good = range.at("last_good").at("sha");
    if (args.options.bad.empty()) args.options.bad = range.at("first_bad").at("sha");
    if (args.options.benchmarks.empty()) {
      args.options.benchmarks = {series.at("benchmark").get<std::string>()};
    }
    if (args.options.suite.empty()) args.options.suite = series.at("suite");
    if (args.options.metric.empty()) args.options.metric = series.at("metric");
  } catch (const nlohmann::json::exception& e) {
    return MakeError(ErrorCode::kUnavailable, "alert " + args.alert +
                                                  ": the server's answer lacks a field (" +
                                                  std::string(e.what()) + ")");
  }
  std::fprintf(stderr, "perfgate: alert %s: %s..%s, %s %s\n", args.alert.c_str(),
               args.options.good.substr(0, 12).c_str(), args.options.bad.substr(0, 12).c_str(),
               args.options.benchmarks.front().c_str(), args.options.metric.c_str());
  return {};
}

int Run(BisectArgs& args) {
  if (!args.alert.empty()) {
    if (auto from = FromAlert(args); !from) return ReportError(from.error());
  }
  if (args.options.good.empty() || args.options.bad.empty() || args.options.benchmarks.empty()) {
    return ReportError(Error{ErrorCode::kInvalidArgument,
                             "give --alert ID, or --good REV --bad REV --benchmark NAME", "good"});
  }
  auto threshold = compare::ParseThreshold(args.threshold);
  if (!threshold) return ReportError(threshold.error());
  args.options.threshold = *threshold;
  args.options.first_parent = !args.all_parents;
  auto config = LoadConfig(args.config);
  if (!config) return ReportError(config.error());
  auto report = RunBisect(*config, args.options);
  if (!report) return ReportError(report.error());
  if (!args.alert.empty()) {
    // The answer goes to the server with its alert, so that the alert shows its culprit.
    nlohmann::json body = nlohmann::json::parse(FormatJson(*report));
    body["alert_id"] = std::stoll(args.alert);
    auto client = AlertsClient::Open(args.config);
    auto stored = client ? client->Call("POST", "/bisects", body.dump())
                         : Result<nlohmann::json>(tl::unexpected(client.error()));
    if (stored) {
      std::fprintf(stderr, "perfgate: stored on the server as bisect %s of alert %s\n",
                   stored->value("bisect", nlohmann::json::object())
                       .value("id", nlohmann::json())
                       .dump()
                       .c_str(),
                   args.alert.c_str());
    } else {
      std::fprintf(stderr, "perfgate: warning: the bisect could not be stored on the server: %s\n",
                   stored.error().message.c_str());
    }
  }
  const std::string text = args.format == "json"       ? FormatJson(*report)
                           : args.format == "markdown" ? FormatMarkdown(*report)
                                                       : FormatText(*report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return report->culprits.empty() ? kExitRegression : kExitPass;
}

}  // namespace

void AddBisectCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BisectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bisect",
      "Find the commit that made a benchmark slower: measures commits of --good..--bad (each "
      "exported into a temporary tree and built with --build; your working tree is not "
      "touched), judges each against the two ends with U tests, adds repetitions when a commit "
      "is undecided, skips commits that do not build, and keeps its state so that an "
      "interrupted bisect resumes. Exit 0 with an answer, 1 when the regression does not "
      "reproduce between the ends, 2 usage, 3 a failing run");
  cmd->add_option("--alert", args->alert,
                  "A server alert's id: its range, suite, benchmark and metric (perfgate.yaml's "
                  "server, PERFGATE_TOKEN with the read scope); the options below override them");
  cmd->add_option("--good", args->options.good, "A revision without the regression");
  cmd->add_option("--bad", args->options.bad, "A revision with it");
  cmd->add_option("--benchmark", args->options.benchmarks,
                  "Benchmark (a Google Benchmark name, or a command suite's name); the first "
                  "decides");
  cmd->add_option("--suite", args->options.suite, "Suite of perfgate.yaml (default: found)");
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
                "Post every commit measured to perfgate.yaml's server (branch perfgate-bisect; "
                "default when a server and PERFGATE_TOKEN are set)");
  cmd->add_flag("--all-parents", args->all_parents,
                "Search every commit of the range, not only the first-parent line");
  cmd->add_option("--state", args->options.state_file,
                  "State file (default .perfgate/bisect-<good>-<bad>.json beside the spool)");
  cmd->add_option("--config", args->config, "perfgate.yaml to use");
  cmd->add_option("--format", args->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = Run(*args); });
}

}  // namespace perfgate::cli
