// SPDX-License-Identifier: Apache-2.0
#include "runner/cli/confirm.h"

#include <map>

#include "core/series_key.h"
#include "core/text.h"
#include "runner/cli/paired_gate.h"

namespace perfwarden::cli {

ConfirmReport DescribeConfirmation(const wire::Verdict& before, const wire::Verdict& after) {
  ConfirmReport report;
  std::map<SeriesKey, const wire::MetricResult*> now;
  for (const wire::MetricResult& r : after.results) now[r.key] = &r;
  for (const wire::MetricResult& r : before.results) {
    if (r.kind != wire::ResultKind::kRegression) continue;
    const std::string name = r.key.benchmark + " " + r.key.metric;
    auto it = now.find(r.key);
    if (it == now.end() || !it->second->paired) {
      report.lines.push_back(name + ": not measured again; kept");
      if (it != now.end() && it->second->kind == wire::ResultKind::kRegression) ++report.confirmed;
      continue;
    }
    const wire::MetricResult& a = *it->second;
    ++report.checked;
    std::string measured = a.change ? SignedPercent(*a.change) : std::string("?");
    if (a.change_ci) {
      measured +=
          " [" + SignedPercent(a.change_ci->lower) + ", " + SignedPercent(a.change_ci->upper) + "]";
    }
    measured += " side by side in " + std::to_string(a.paired->blocks) + " blocks";
    if (a.kind == wire::ResultKind::kRegression) {
      ++report.confirmed;
      report.lines.push_back(name + ": confirmed, " + measured);
    } else {
      ++report.withdrawn;
      report.lines.push_back(name + ": not confirmed, " + measured + " (" +
                             std::string(wire::ResultKindName(a.kind)) + ")");
    }
  }
  return report;
}

Result<ConfirmReport> ConfirmRegressions(const config::RunnerConfig& config,
                                         client::ProjectClient& server, const run::LastRun& last,
                                         const wire::VerdictRequest& parameters,
                                         wire::Verdict* verdict) {
  PairedGateRequest request;
  for (const wire::MetricResult& r : verdict->results) {
    if (r.kind == wire::ResultKind::kRegression) request.gated[r.key.suite].insert(r.key.benchmark);
  }
  if (request.gated.empty()) return ConfirmReport{};
  if (!verdict->baseline || verdict->baseline->commit.empty()) {
    return InvalidArgument("the verdict names no baseline commit to confirm against");
  }
  if (const std::string why = WhyNotPaired(config, request.gated); !why.empty()) {
    return InvalidArgument("the regressions cannot be measured side by side: " + why);
  }
  request.run_id = verdict->run_id;
  request.last = last;
  request.amends = verdict->id;
  request.baseline_commit = verdict->baseline->commit;
  request.settings = config.gate;
  request.parameters = parameters;
  auto amended = GatePaired(config, server, request);
  if (!amended) return tl::unexpected(amended.error().error);
  ConfirmReport report = DescribeConfirmation(*verdict, *amended);
  *verdict = std::move(*amended);
  return report;
}

}  // namespace perfwarden::cli
