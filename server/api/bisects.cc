// Bisects: POST /api/v1/projects/{project}/bisects stores the answer of a local
// `perfgate bisect` (linked to its alert when it names one; ingest scope) or, with "remote":
// true, queues a remote bisect for a testbed's agents (bisect_steps.cc); GET .../bisects/{id}
// returns one (a running remote one with the replay's progress); POST .../bisects/{id}/cancel
// stops a remote one. An alert's GET lists its bisects.
#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/bisect/remote_bisect.h"
#include "wire/validate.h"

namespace perfgate::server::api {
namespace {

using nlohmann::json;

// The runner's report: good and bad shas, culprits (each with a sha), an optional alert_id.
Result<store::NewBisect> DecodeBisect(const json& body) {
  store::NewBisect bisect;
  for (const char* field : {"good", "bad"}) {
    auto it = body.find(field);
    if (it == body.end() || !it->is_string() || !wire::IsSha(it->get<std::string>())) {
      return InvalidArgument("must be a full commit sha (40 hex digits)", field);
    }
  }
  bisect.good_sha = body["good"].get<std::string>();
  bisect.bad_sha = body["bad"].get<std::string>();
  auto culprits = body.find("culprits");
  if (culprits == body.end() || !culprits->is_array()) {
    return InvalidArgument("must be an array (perfgate bisect --format json)", "culprits");
  }
  for (std::size_t i = 0; i < culprits->size(); ++i) {
    const json& c = (*culprits)[i];
    if (!c.is_object() || !c.contains("sha") || !c["sha"].is_string() ||
        !wire::IsSha(c["sha"].get<std::string>())) {
      return InvalidArgument("must be an object with a full commit sha",
                             "culprits[" + std::to_string(i) + "].sha");
    }
  }
  if (!culprits->empty()) bisect.culprit_sha = (*culprits)[0]["sha"].get<std::string>();
  bisect.state = culprits->empty() ? "failed" : "succeeded";
  if (auto alert = body.find("alert_id"); alert != body.end() && !alert->is_null()) {
    if (!alert->is_number_integer() || alert->get<int64_t>() <= 0) {
      return InvalidArgument("must be a positive integer", "alert_id");
    }
    bisect.alert_id = alert->get<int64_t>();
  }
  bisect.report_json = body.dump();
  return bisect;
}

json NullIfEmpty(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

json StepJson(const store::BisectStepRecord& step) {
  json request = json::parse(step.request_json, nullptr, false);
  json out = {{"id", step.id},
              {"ordinal", step.ordinal},
              {"state", step.state},
              {"agent", NullIfEmpty(step.agent)},
              {"attempts", step.attempts},
              {"targets", request.is_object() ? request.value("targets", json::array()) : json()},
              {"repetitions", request.is_object() ? request.value("repetitions", 0) : 0},
              {"lease_expires_at", NullIfEmpty(step.lease_expires_at)},
              {"last_error", NullIfEmpty(step.last_error)},
              {"finished_at", NullIfEmpty(step.finished_at)},
              {"reused_from", step.reused_from ? json(*step.reused_from) : json(nullptr)}};
  if (step.state == "done") {
    out["builds"] = step.builds;
    out["runs"] = step.runs;
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
                                   const json& body, const store::Project& project) {
  if (deps.bisects == nullptr) {
    return MakeError(ErrorCode::kUnavailable, "this server has no bisect queue");
  }
  auto remote = remote_bisect::Decode(body);
  if (!remote) return tl::unexpected(remote.error());
  auto caller = CallerName(deps, request);
  if (!caller) return tl::unexpected(caller.error());
  auto queued = remote_bisect::Prepare(*remote, *caller);
  if (!queued) return tl::unexpected(queued.error());
  auto saved = deps.bisects->QueueRemoteBisect(project, *queued, remote_bisect::Decide);
  if (!saved) return tl::unexpected(saved.error());
  auto progress = remote_bisect::Progress(*saved);
  return JsonResponse(
      201, {{"bisect", BisectJson(*saved, progress && *progress ? &**progress : nullptr)}});
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
                             if (auto remote = body->find("remote"); remote != body->end()) {
                               if (!remote->is_boolean()) {
                                 return InvalidArgument("must be true or false", "remote");
                               }
                               if (remote->get<bool>()) {
                                 return QueueRemote(deps, request, *body, project);
                               }
                             }
                             auto bisect = DecodeBisect(*body);
                             if (!bisect) return tl::unexpected(bisect.error());
                             auto caller = CallerName(deps, request);
                             if (!caller) return tl::unexpected(caller.error());
                             bisect->created_by = *caller;
                             auto saved = deps.history->SaveBisect(project, *bisect);
                             if (!saved) return tl::unexpected(saved.error());
                             saved->report_json.clear();
                             return JsonResponse(201, {{"bisect", BisectJson(*saved, nullptr)}});
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
                             return JsonResponse(200, {{"bisect", BisectJson(*bisect, shown)}});
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
                             return JsonResponse(200, {{"bisect", BisectJson(*bisect, nullptr)}});
                           }));
}

json BisectJson(const store::BisectRecord& b, const json* progress) {
  json out = {{"id", b.id},
              {"alert_id", b.alert_id ? json(*b.alert_id) : json(nullptr)},
              {"good", b.good_sha},
              {"bad", b.bad_sha},
              {"state", b.state},
              {"culprit", NullIfEmpty(b.culprit_sha)},
              {"created_by", b.created_by},
              {"created_at", b.created_at}};
  if (!b.report_json.empty()) out["report"] = json::parse(b.report_json, nullptr, false);
  if (b.testbed.empty()) return out;
  json remote = {{"testbed", b.testbed}};
  if (auto job = remote_bisect::FromRequestJson(b.request_json)) {
    remote["commits"] = job->commits.size() - 1;  // in (good, bad], as reports count them
    remote["benchmarks"] = job->benchmarks;
    remote["suite"] = job->suite;
    remote["metric"] = job->metric;
    remote["build"] = job->build;
    remote["options"] = bisect::SearchOptionsJson(job->options);
  }
  out["remote"] = std::move(remote);
  out["error"] = NullIfEmpty(b.error);
  out["finished_at"] = NullIfEmpty(b.finished_at);
  json steps = json::array();
  for (const store::BisectStepRecord& step : b.steps) steps.push_back(StepJson(step));
  out["steps"] = std::move(steps);
  if (progress != nullptr) out["progress"] = *progress;
  return out;
}

}  // namespace perfgate::server::api
