// SPDX-License-Identifier: Apache-2.0
// Bisects: POST /api/v1/projects/{project}/bisects stores the answer of a local
// `perfwarden bisect` (linked to its alert when it names one; ingest scope) or, with "remote":
// true, queues a remote bisect for a testbed's agents (bisect_steps.cc); GET .../bisects/{id}
// returns one (a running remote one with the replay's progress); POST .../bisects/{id}/cancel
// stops a remote one. An alert's GET lists its bisects.
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/bisect/remote_bisect.h"
#include "wire/bisect.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

std::optional<std::string> UnlessEmpty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

wire::BisectStep StepOf(const store::BisectStepRecord& step) {
  wire::BisectStep out;
  out.id = step.id;
  out.ordinal = step.ordinal;
  out.state = step.state;
  out.agent = UnlessEmpty(step.agent);
  out.attempts = step.attempts;
  if (auto request = bisect::RequestFromJson(json::parse(step.request_json, nullptr, false))) {
    out.targets.assign(request->targets.begin(), request->targets.end());
    out.repetitions = request->repetitions;
  }
  out.lease_expires_at = UnlessEmpty(step.lease_expires_at);
  out.last_error = UnlessEmpty(step.last_error);
  out.finished_at = UnlessEmpty(step.finished_at);
  out.reused_from = step.reused_from;
  if (step.state == "done") {
    out.builds = step.builds;
    out.runs = step.runs;
  }
  return out;
}

// Who is asking, for created_by ("" without a token: public_read projects never get here for a
// POST).
Result<std::string> CallerName(const ApiDeps& deps, const http::Request& request) {
  auto caller = Authenticate(*deps.tokens, request);
  if (!caller) return tl::unexpected(caller.error());
  return *caller ? (*caller)->token.name : std::string();
}

Result<http::Response> QueueRemote(const ApiDeps& deps, const http::Request& request,
                                   const wire::RemoteBisectRequest& body,
                                   const store::Project& project) {
  if (deps.bisects == nullptr) {
    return MakeError(ErrorCode::kUnavailable, "this server has no bisect queue");
  }
  auto remote = remote_bisect::FromWire(body);
  if (!remote) return tl::unexpected(remote.error());
  auto caller = CallerName(deps, request);
  if (!caller) return tl::unexpected(caller.error());
  auto queued = remote_bisect::Prepare(*remote, *caller);
  if (!queued) return tl::unexpected(queued.error());
  queued->max_open_on_testbed = deps.open_bisects_per_testbed;
  auto saved = deps.bisects->QueueRemoteBisect(project, *queued, remote_bisect::Decide);
  if (!saved) return tl::unexpected(saved.error());
  auto progress = remote_bisect::Progress(*saved);
  // 200: the alert's group already had this bisect (one per group), nothing was queued.
  return BisectResponse(saved->existing ? 200 : 201, *saved,
                        progress && *progress ? &**progress : nullptr);
}

// A local bisect's answer, stored as it was posted.
Result<http::Response> StoreAnswer(const ApiDeps& deps, const http::Request& request,
                                   const json& body, const wire::BisectReportUpload& upload,
                                   const store::Project& project) {
  store::NewBisect bisect;
  bisect.alert_id = upload.alert_id;
  bisect.good_sha = upload.good();
  bisect.bad_sha = upload.bad();
  bisect.culprit_sha = upload.culprit();
  bisect.state = bisect.culprit_sha.empty() ? "failed" : "succeeded";
  bisect.report_json = body.dump();
  auto caller = CallerName(deps, request);
  if (!caller) return tl::unexpected(caller.error());
  bisect.created_by = *caller;
  auto saved = deps.history->SaveBisect(project, bisect);
  if (!saved) return tl::unexpected(saved.error());
  saved->report_json.clear();
  return BisectResponse(201, *saved);
}

}  // namespace

void RegisterBisectRoutes(http::Router& router, const ApiDeps& deps) {
  if (deps.history == nullptr) return;
  router.Add("POST", "/api/v1/projects/{project}/bisects", "bisects.create",
             HandleProject(deps, {}, auth::Scope::kIngest,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                             auto body = ParseJsonObject(request.body, deps.json_max_depth);
                             if (!body) return tl::unexpected(body.error());
                             auto decoded = wire::DecodeNewBisect(*body);
                             if (!decoded) return tl::unexpected(decoded.error());
                             if (auto* remote = std::get_if<wire::RemoteBisectRequest>(&*decoded)) {
                               return QueueRemote(deps, request, *remote, project);
                             }
                             return StoreAnswer(deps, request, *body,
                                                std::get<wire::BisectReportUpload>(*decoded),
                                                project);
                           }));
  router.Add("GET", "/api/v1/projects/{project}/bisects/{id}", "bisects.get",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto id = PositiveIdParam(params, "a bisect id");
                             if (!id) return tl::unexpected(id.error());
                             auto bisect = deps.history->GetBisect(project, *id);
                             if (!bisect) return tl::unexpected(bisect.error());
                             // A running remote bisect's answer so far: a replay of its log.
                             // (A log the replay refuses shows no progress, not a 500: the
                             // stored state is still worth showing.)
                             auto progress = remote_bisect::Progress(*bisect);
                             const json* shown = progress && *progress ? &**progress : nullptr;
                             return BisectResponse(200, *bisect, shown);
                           }),
             http::Router::Cost::kHeavy);  // the replay runs U tests and bootstrap CIs
  router.Add("POST", "/api/v1/projects/{project}/bisects/{id}/cancel", "bisects.cancel",
             HandleProject(deps, {}, auth::Scope::kIngest,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto id = PositiveIdParam(params, "a bisect id");
                             if (!id) return tl::unexpected(id.error());
                             if (deps.bisects == nullptr) {
                               return MakeError(ErrorCode::kUnavailable,
                                                "this server has no bisect queue");
                             }
                             auto bisect = deps.bisects->CancelBisect(project, *id);
                             if (!bisect) return tl::unexpected(bisect.error());
                             return BisectResponse(200, *bisect);
                           }));
}

wire::Bisect BisectOf(const store::BisectRecord& b, const json* progress) {
  wire::Bisect out;
  out.id = b.id;
  out.alert_id = b.alert_id;
  out.good = b.good_sha;
  out.bad = b.bad_sha;
  out.state = b.state;
  out.culprit = UnlessEmpty(b.culprit_sha);
  out.created_by = b.created_by;
  out.created_at = b.created_at;
  if (!b.report_json.empty()) {
    // Stored by this server (a posted answer, or the replay's); one that does not parse is left
    // out rather than shown broken.
    json report = json::parse(b.report_json, nullptr, false);
    if (!report.is_discarded()) out.report = std::move(report);
  }
  if (b.testbed.empty()) return out;
  wire::BisectRemote remote{.testbed = b.testbed, .job = std::nullopt};
  if (auto job = remote_bisect::FromRequestJson(b.request_json)) {
    remote.job = wire::BisectJob{
        .commits = static_cast<int64_t>(job->commits.size()) - 1,  // in (good, bad], as reports
        .benchmarks = job->benchmarks,
        .suite = job->suite,
        .metric = job->metric,
        .build = job->build,
        .options = bisect::SearchOptionsJson(job->options)};
  }
  out.remote = std::move(remote);
  out.error = UnlessEmpty(b.error);
  out.finished_at = UnlessEmpty(b.finished_at);
  for (const store::BisectStepRecord& step : b.steps) out.steps.push_back(StepOf(step));
  if (progress != nullptr) out.progress = *progress;
  return out;
}

http::Response BisectResponse(int status, const store::BisectRecord& bisect, const json* progress) {
  return JsonResponse(status,
                      {{wire::kBisectEnvelope, wire::EncodeBisect(BisectOf(bisect, progress))}});
}

}  // namespace perfwarden::server::api
