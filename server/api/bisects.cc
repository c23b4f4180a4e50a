// Bisects the runner posts (`perfgate bisect --format json`, issue 6): POST
// /api/v1/projects/{project}/bisects stores one (linked to its alert when it names one; ingest
// scope), GET .../bisects/{id} returns it. An alert's GET lists its bisects.
#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"

namespace perfgate::server::api {
namespace {

using nlohmann::json;

// The runner's report: good and bad shas, culprits (each with a sha), an optional alert_id.
Result<store::NewBisect> DecodeBisect(const http::Request& request, int max_depth) {
  auto body = ParseJsonObject(request.body, max_depth);
  if (!body) return tl::unexpected(body.error());
  store::NewBisect bisect;
  for (const char* field : {"good", "bad"}) {
    auto it = body->find(field);
    if (it == body->end() || !it->is_string() || !IsSha(it->get<std::string>())) {
      return InvalidArgument("must be a full commit sha (40 hex digits)", field);
    }
  }
  bisect.good_sha = (*body)["good"].get<std::string>();
  bisect.bad_sha = (*body)["bad"].get<std::string>();
  auto culprits = body->find("culprits");
  if (culprits == body->end() || !culprits->is_array()) {
    return InvalidArgument("must be an array (perfgate bisect --format json)", "culprits");
  }
  for (std::size_t i = 0; i < culprits->size(); ++i) {
    const json& c = (*culprits)[i];
    if (!c.is_object() || !c.contains("sha") || !c["sha"].is_string() ||
        !IsSha(c["sha"].get<std::string>())) {
      return InvalidArgument("must be an object with a full commit sha",
                             "culprits[" + std::to_string(i) + "].sha");
    }
  }
  if (!culprits->empty()) bisect.culprit_sha = (*culprits)[0]["sha"].get<std::string>();
  bisect.state = culprits->empty() ? "failed" : "succeeded";
  if (auto alert = body->find("alert_id"); alert != body->end() && !alert->is_null()) {
    if (!alert->is_number_integer() || alert->get<int64_t>() <= 0) {
      return InvalidArgument("must be a positive integer", "alert_id");
    }
    bisect.alert_id = alert->get<int64_t>();
  }
  bisect.report_json = body->dump();
  return bisect;
}

json BisectJson(const store::BisectRecord& b) {
  json out = {{"id", b.id},
              {"alert_id", b.alert_id ? json(*b.alert_id) : json(nullptr)},
              {"good", b.good_sha},
              {"bad", b.bad_sha},
              {"state", b.state},
              {"culprit", b.culprit_sha.empty() ? json(nullptr) : json(b.culprit_sha)},
              {"created_by", b.created_by},
              {"created_at", b.created_at}};
  if (!b.report_json.empty()) out["report"] = json::parse(b.report_json, nullptr, false);
  return out;
}

}  // namespace

void RegisterBisectRoutes(http::Router& router, const ApiDeps& deps) {
  if (deps.history == nullptr) return;
  router.Add("POST", "/api/v1/projects/{project}/bisects", "bisects.create",
             HandleProject(deps, {}, auth::Scope::kIngest,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                             auto bisect = DecodeBisect(request, deps.json_max_depth);
                             if (!bisect) return tl::unexpected(bisect.error());
                             auto caller = Authenticate(*deps.tokens, request);
                             if (!caller) return tl::unexpected(caller.error());
                             bisect->created_by = *caller ? (*caller)->token.name : "";
                             auto saved = deps.history->SaveBisect(project, *bisect);
                             if (!saved) return tl::unexpected(saved.error());
                             saved->report_json.clear();
                             return JsonResponse(201, {{"bisect", BisectJson(*saved)}});
                           }));
  router.Add("GET", "/api/v1/projects/{project}/bisects/{id}", "bisects.get",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto id = PositiveIdParam(params, "a bisect id");
                             if (!id) return tl::unexpected(id.error());
                             auto bisect = deps.history->GetBisect(project, *id);
                             if (!bisect) return tl::unexpected(bisect.error());
                             return JsonResponse(200, {{"bisect", BisectJson(*bisect)}});
                           }));
}

}  // namespace perfgate::server::api
