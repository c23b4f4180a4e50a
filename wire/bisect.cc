// SPDX-License-Identifier: Apache-2.0
// The encoders of the bisect messages (the decoders: bisect_request.cc for the bodies the server
// reads, bisect_decode.cc for its answers). Keys are nlohmann's sorted order, as the server has
// always written them.
#include "wire/bisect.h"

#include <utility>

namespace perfwarden::wire {
namespace {

using nlohmann::json;

template <class T>
json Nullable(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// A member of the posted report as text, "" when it is not one.
std::string ReportString(const json& report, std::string_view key) {
  if (!report.is_object()) return "";
  const auto it = report.find(key);
  return it != report.end() && it->is_string() ? it->get<std::string>() : "";
}

json EncodeStep(const BisectStep& step) {
  json out = {{"id", step.id},
              {"ordinal", step.ordinal},
              {"state", step.state},
              {"agent", Nullable(step.agent)},
              {"attempts", step.attempts},
              {"targets", step.targets},
              {"repetitions", step.repetitions},
              {"lease_expires_at", Nullable(step.lease_expires_at)},
              {"last_error", Nullable(step.last_error)},
              {"finished_at", Nullable(step.finished_at)},
              {"reused_from", Nullable(step.reused_from)}};
  if (step.builds) out["builds"] = *step.builds;
  if (step.runs) out["runs"] = *step.runs;
  return out;
}

json EncodeRemote(const BisectRemote& remote) {
  json out = {{"testbed", remote.testbed}};
  if (remote.job) {
    out["commits"] = remote.job->commits;
    out["benchmarks"] = remote.job->benchmarks;
    out["suite"] = remote.job->suite;
    out["metric"] = remote.job->metric;
    out["build"] = remote.job->build;
    out["options"] = remote.job->options;
  }
  return out;
}

}  // namespace

std::string BisectReportUpload::good() const { return ReportString(report, "good"); }
std::string BisectReportUpload::bad() const { return ReportString(report, "bad"); }
std::string BisectReportUpload::culprit() const {
  const auto culprits = report.is_object() ? report.find("culprits") : report.end();
  if (!report.is_object() || culprits == report.end() || !culprits->is_array() ||
      culprits->empty()) {
    return "";
  }
  return ReportString(culprits->front(), "sha");
}

json EncodeRemoteBisectRequest(const RemoteBisectRequest& request) {
  json commits = json::array();
  for (const BisectCommit& c : request.commits) {
    commits.push_back({{"sha", c.sha}, {"subject", c.subject}, {"author", c.author}});
  }
  json out = {
      {"remote", true},         {"testbed", request.testbed},    {"good", request.good},
      {"bad", request.bad},     {"commits", std::move(commits)}, {"benchmarks", request.benchmarks},
      {"suite", request.suite}, {"metric", request.metric},      {"build", request.build}};
  if (request.options) out["options"] = *request.options;
  if (request.alert_id) out["alert_id"] = *request.alert_id;
  return out;
}

json EncodeBisectReportUpload(const BisectReportUpload& upload) {
  json out = upload.report;
  if (upload.alert_id) out["alert_id"] = *upload.alert_id;
  return out;
}

json EncodeBisect(const Bisect& bisect) {
  json out = {{"id", bisect.id},
              {"alert_id", Nullable(bisect.alert_id)},
              {"good", bisect.good},
              {"bad", bisect.bad},
              {"state", bisect.state},
              {"culprit", Nullable(bisect.culprit)},
              {"created_by", bisect.created_by},
              {"created_at", bisect.created_at}};
  if (bisect.report) out["report"] = *bisect.report;
  if (!bisect.remote) return out;
  out["remote"] = EncodeRemote(*bisect.remote);
  out["error"] = Nullable(bisect.error);
  out["finished_at"] = Nullable(bisect.finished_at);
  json steps = json::array();
  for (const BisectStep& step : bisect.steps) steps.push_back(EncodeStep(step));
  out["steps"] = std::move(steps);
  if (bisect.progress) out["progress"] = *bisect.progress;
  return out;
}

bool IsStepToken(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

json EncodeStepClaimRequest(const StepClaimRequest& request) {
  json out = {{"testbed", request.testbed}, {"agent", request.agent}};
  if (request.lease_seconds) out["lease_seconds"] = *request.lease_seconds;
  return out;
}

json EncodeClaimedStep(const ClaimedStep& step) {
  json commits = json::array();
  for (const StepCommit& c : step.commits) {
    commits.push_back({{"position", c.position}, {"sha", c.sha}, {"subject", c.subject}});
  }
  return {{"id", step.id},
          {"bisect_id", step.bisect_id},
          {"ordinal", step.ordinal},
          {"token", step.token},
          {"lease_seconds", step.lease_seconds},
          {"lease_expires_at", step.lease_expires_at},
          {"attempt", step.attempt},
          {"request", step.request},
          {"commits", std::move(commits)},
          {"good", step.good},
          {"bad", step.bad},
          {"benchmarks", step.benchmarks},
          {"suite", step.suite},
          {"metric", step.metric},
          {"build", step.build}};
}

json EncodeStepHeartbeat(const StepHeartbeat& heartbeat) {
  json out = {{"token", heartbeat.token}};
  if (heartbeat.lease_seconds) out["lease_seconds"] = *heartbeat.lease_seconds;
  return out;
}

json EncodeStepLease(const StepLease& lease) {
  return {{"id", lease.id},
          {"lease_seconds", lease.lease_seconds},
          {"lease_expires_at", lease.lease_expires_at}};
}

json EncodeStepReport(const StepReport& report) {
  json out = {{"token", report.token}};
  if (report.measurement) out["measurement"] = *report.measurement;
  if (report.builds) out["builds"] = *report.builds;
  if (report.runs) out["runs"] = *report.runs;
  if (report.error) out["error"] = *report.error;
  return out;
}

}  // namespace perfwarden::wire
