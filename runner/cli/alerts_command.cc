// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts list|show|summary|groups|group|ack|resolve|false-positive|went-away|reopen`:
// the change points the server found in a project's history (GET/PATCH
// /api/v1/projects/{p}/alerts), listed by commit range, shown one at a time with the points
// around the step and the bisect command, and triaged, one alert or a whole alert group
// (--group; GET|PATCH .../alert-groups). Connection settings as the other server verbs:
// perfwarden.yaml's server.url and server.project, PERFWARDEN_TOKEN. Not a gate: 0 on success
// whatever the alerts say, 2 for usage errors and 4xx answers (the server's message printed), 3
// when the server is unreachable or failing.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "runner/cli/commands.h"
#include "runner/client/project_client.h"
#include "runner/report/alerts_render.h"
#include "runner/run/session.h"
#include "wire/alert.h"

namespace perfwarden::cli {
namespace {

struct Connection {
  std::string config;
  std::string format = "text";
};

struct ListArgs {
  Connection connection;
  client::AlertQuery query{.state = "open", .limit = 50};
  bool all = false;
};

struct AlertArgs {
  Connection connection;
  std::string id;
  std::string group;  // the triage verbs' --group
  std::string note;
  bool note_given = false;
};

struct GroupListArgs {
  Connection connection;
  client::AlertQuery query{.state = "open", .limit = 50};
};

int List(ListArgs args) {
  if (args.query.state == "false-positive") args.query.state = "false_positive";
  if (args.query.state == "went-away") args.query.state = "went_away";
  auto alerts = run::OpenProjectClient(args.connection.config);
  if (!alerts) return ReportError(alerts.error());
  auto page = alerts->ListAlerts(args.query, args.all);
  if (!page) return ReportError(page.error());
  if (args.connection.format == "json") {
    std::cout << report::RenderJson(wire::EncodeAlertPage(*page));
  } else if (args.connection.format == "markdown") {
    std::cout << report::RenderAlertListMarkdown(*page);
  } else {
    std::cout << report::RenderAlertListText(*page);
  }
  return kExitPass;
}

// GET .../alert-summary with the list's series filters (state, limit and cursor do not apply).
int Summary(const ListArgs& args) {
  auto alerts = run::OpenProjectClient(args.connection.config);
  if (!alerts) return ReportError(alerts.error());
  auto summary = alerts->SummarizeAlerts(args.query);
  if (!summary) return ReportError(summary.error());
  if (args.connection.format == "json") {
    std::cout << report::RenderJson(wire::EncodeAlertSummary(*summary));
  } else {
    std::cout << report::RenderAlertSummaryText(*summary);
  }
  return kExitPass;
}

int Show(const AlertArgs& args) {
  if (auto ok = client::CheckId(args.id); !ok) return ReportError(ok.error());
  auto alerts = run::OpenProjectClient(args.connection.config);
  if (!alerts) return ReportError(alerts.error());
  auto alert = alerts->GetAlert(args.id);
  if (!alert) return ReportError(alert.error());
  if (args.connection.format == "json") {
    std::cout << report::RenderJson(wire::EncodeAlertDetail(*alert));
  } else if (args.connection.format == "markdown") {
    std::cout << report::RenderAlertMarkdown(*alert);
  } else {
    std::cout << report::RenderAlertText(*alert);
  }
  return kExitPass;
}

int Triage(const AlertArgs& args, const std::string& state) {
  if (args.id.empty() == args.group.empty()) {
    return ReportError(InvalidArgument("give an alert ID or --group G (one of them)",
                                       args.id.empty() ? "ID" : "group")
                           .value());
  }
  const std::string& id = args.id.empty() ? args.group : args.id;
  if (auto ok = client::CheckId(id); !ok) return ReportError(ok.error());
  auto alerts = run::OpenProjectClient(args.connection.config);
  if (!alerts) return ReportError(alerts.error());
  wire::AlertUpdate update;
  update.state = state;
  if (args.note_given) update.note = args.note;
  if (!args.group.empty()) {
    auto group = alerts->UpdateAlertGroup(id, update);
    if (!group) return ReportError(group.error());
    if (args.connection.format == "json") {
      std::cout << report::RenderJson(wire::EncodeAlertGroupDetail(*group));
    } else {
      std::cout << report::RenderGroupTriageText(*group);
    }
    return kExitPass;
  }
  auto alert = alerts->UpdateAlert(id, update);
  if (!alert) return ReportError(alert.error());
  if (args.connection.format == "json") {
    std::cout << report::RenderJson(wire::EncodeAlert(*alert));
  } else {
    std::cout << report::RenderTriageText(*alert);
  }
  return kExitPass;
}

int Groups(const GroupListArgs& args) {
  auto alerts = run::OpenProjectClient(args.connection.config);
  if (!alerts) return ReportError(alerts.error());
  auto page = alerts->ListAlertGroups(args.query);
  if (!page) return ReportError(page.error());
  if (args.connection.format == "json") {
    std::cout << report::RenderJson(wire::EncodeAlertGroupPage(*page));
  } else {
    std::cout << report::RenderAlertGroupListText(*page);
  }
  return kExitPass;
}

int ShowGroup(const AlertArgs& args) {
  if (auto ok = client::CheckId(args.id); !ok) return ReportError(ok.error());
  auto alerts = run::OpenProjectClient(args.connection.config);
  if (!alerts) return ReportError(alerts.error());
  auto group = alerts->GetAlertGroup(args.id);
  if (!group) return ReportError(group.error());
  if (args.connection.format == "json") {
    std::cout << report::RenderJson(wire::EncodeAlertGroupDetail(*group));
  } else {
    std::cout << report::RenderAlertGroupText(*group);
  }
  return kExitPass;
}

void AddConnection(CLI::App* verb, Connection* connection) {
  verb->add_option("--config", connection->config,
                   "perfwarden.yaml to use (server.url, server.project; the token comes from "
                   "PERFWARDEN_TOKEN)");
  verb->add_option("--format", connection->format, "Output format on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
}

void AddTriageVerb(CLI::App* alerts, int* exit_code, const std::string& name,
                   const std::string& state, const std::string& description) {
  auto args = std::make_shared<AlertArgs>();
  CLI::App* verb = alerts->add_subcommand(name, description);
  verb->add_option("ID", args->id, "Alert id (the ID column of `perfwarden alerts list`)");
  verb->add_option("--group", args->group,
                   "Every alert of this alert group instead (`perfwarden alerts groups`)");
  CLI::Option* note =
      verb->add_option("--note", args->note, "Why: kept in the alert's triage history");
  AddConnection(verb, &args->connection);
  verb->callback([args, exit_code, state, note]() {
    args->note_given = note->count() > 0;
    *exit_code = Triage(*args, state);
  });
}

}  // namespace

void AddAlertsCommand(CLI::App& app, int* exit_code) {
  CLI::App* alerts = app.add_subcommand(
      "alerts",
      "List, show and triage the server's alerts: steps in a series' history (regressions, "
      "improvements, environment changes), grouped by commit range. Exit codes: 0 ok, 2 usage "
      "error or the server refused (its message is printed), 3 server unreachable");
  // A catch-all positional instead of require_subcommand: an unknown or missing verb gets a
  // message that lists the verbs, as `perfwarden frobnicate` does.
  auto unknown = std::make_shared<std::vector<std::string>>();
  alerts->add_option("VERB", *unknown, "")->group("");
  alerts->callback([alerts, unknown, exit_code]() {
    if (!alerts->get_subcommands().empty()) return;
    const std::string verbs =
        "list, show, summary, groups, group, ack, resolve, false-positive, went-away, reopen";
    *exit_code = ReportError(Error{ErrorCode::kInvalidArgument,
                                   unknown->empty() ? "perfwarden alerts needs a verb: " + verbs
                                                    : "unknown alerts verb '" + unknown->front() +
                                                          "' (available: " + verbs +
                                                          "; run perfwarden alerts --help)",
                                   ""});
  });

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = alerts->add_subcommand(
      "list", "List alerts, newest first, grouped by commit range (last good..first bad)");
  list->add_option("--state", list_args->query.state, "Which alerts")
      ->check(CLI::IsMember({"open", "acknowledged", "false_positive", "false-positive", "resolved",
                             "went_away", "went-away", "all"}))
      ->capture_default_str();
  list->add_option("--kind", list_args->query.kind,
                   "Only regressions, improvements or creeps (drifts)")
      ->check(CLI::IsMember({"regression", "improvement", "creep"}));
  list->add_option("--branch", list_args->query.branch, "Only this branch");
  list->add_option("--testbed", list_args->query.testbed, "Only this testbed");
  list->add_option("--suite", list_args->query.suite, "Only this suite");
  list->add_option("--benchmark", list_args->query.benchmark, "Only this benchmark");
  list->add_option("--metric", list_args->query.metric, "Only this metric");
  list->add_option("--limit", list_args->query.limit, "Alerts per page")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  list->add_option("--cursor", list_args->query.cursor,
                   "Start at this page (the next_cursor of an earlier answer)");
  list->add_flag("--all", list_args->all, "Follow next_cursor and list every page");
  AddConnection(list, &list_args->connection);
  list->callback([list_args, exit_code]() { *exit_code = List(*list_args); });

  auto summary_args = std::make_shared<ListArgs>();
  CLI::App* summary = alerts->add_subcommand(
      "summary",
      "Count alerts by state, kind and cause, and the share of triaged regressions that were "
      "false positives (how often the alerts cried wolf)");
  summary
      ->add_option("--kind", summary_args->query.kind,
                   "Only regressions, improvements or creeps (drifts)")
      ->check(CLI::IsMember({"regression", "improvement", "creep"}));
  summary->add_option("--branch", summary_args->query.branch, "Only this branch");
  summary->add_option("--testbed", summary_args->query.testbed, "Only this testbed");
  summary->add_option("--suite", summary_args->query.suite, "Only this suite");
  summary->add_option("--benchmark", summary_args->query.benchmark, "Only this benchmark");
  summary->add_option("--metric", summary_args->query.metric, "Only this metric");
  AddConnection(summary, &summary_args->connection);
  summary->callback([summary_args, exit_code]() { *exit_code = Summary(*summary_args); });

  auto show_args = std::make_shared<AlertArgs>();
  CLI::App* show = alerts->add_subcommand(
      "show",
      "Show one alert: its series, change and CI, commit range, environment change, the points "
      "around the step, triage history and the `perfwarden bisect` command that finds the commit");
  show->add_option("ID", show_args->id, "Alert id (the ID column of `perfwarden alerts list`)")
      ->required();
  AddConnection(show, &show_args->connection);
  show->callback([show_args, exit_code]() { *exit_code = Show(*show_args); });

  auto groups_args = std::make_shared<GroupListArgs>();
  CLI::App* groups = alerts->add_subcommand(
      "groups",
      "List alert groups, newest first: alerts of a branch whose commit ranges overlap (one "
      "culprit seen by several benchmarks and testbeds), with their narrowest common range");
  groups->add_option("--state", groups_args->query.state, "Which groups (open: a member is open)")
      ->check(CLI::IsMember({"open", "closed", "all"}))
      ->capture_default_str();
  groups->add_option("--branch", groups_args->query.branch, "Only this branch");
  groups->add_option("--limit", groups_args->query.limit, "Groups per page")
      ->check(CLI::Range(1, 500))
      ->capture_default_str();
  groups->add_option("--cursor", groups_args->query.cursor,
                     "Start at this page (the next_cursor of an earlier answer)");
  AddConnection(groups, &groups_args->connection);
  groups->callback([groups_args, exit_code]() { *exit_code = Groups(*groups_args); });

  auto group_args = std::make_shared<AlertArgs>();
  CLI::App* group = alerts->add_subcommand(
      "group",
      "Show one alert group: its range, members, the most significant member and its bisect");
  group->add_option("G", group_args->id, "Alert group id (`perfwarden alerts groups`)")->required();
  AddConnection(group, &group_args->connection);
  group->callback([group_args, exit_code]() { *exit_code = ShowGroup(*group_args); });

  AddTriageVerb(alerts, exit_code, "ack", "acknowledged",
                "Acknowledge an alert: someone is looking at it (needs the triage scope)");
  AddTriageVerb(alerts, exit_code, "resolve", "resolved",
                "Mark an alert resolved: the step was fixed or accepted (needs the triage scope)");
  AddTriageVerb(alerts, exit_code, "false-positive", "false_positive",
                "Mark an alert a false positive: noise, not a change (needs the triage scope)");
  AddTriageVerb(alerts, exit_code, "went-away", "went_away",
                "Mark an alert went away: its series came back to the level before the step "
                "(needs the triage scope; the server does it on its own when it sees that)");
  AddTriageVerb(alerts, exit_code, "reopen", "open",
                "Open an alert again (needs the triage scope)");
}

}  // namespace perfwarden::cli
