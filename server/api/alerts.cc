// SPDX-License-Identifier: Apache-2.0
// Alerts and change points of tracked branches: GET .../alerts (filtered, paged),
// GET .../alerts/{id} (with the series excerpt and triage history), PATCH .../alerts/{id}
// (state and note; the triage scope), the alert groups (GET .../alert-groups, GET|PATCH
// .../alert-groups/{id}: every member at once), and GET .../change-points, which runs the history
// worker's analysis (server/history AnalyseSeries) on a whole stored series on demand.
#include <algorithm>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/history/alert_json.h"
#include "server/history/analysis.h"
#include "server/history/service.h"
#include "wire/alert.h"

namespace perfwarden::server::api {
namespace {

constexpr int kExcerptPoints = 10;  // each side of the step

bool OneOf(const std::string& value, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return value == a; });
}

// The kind and series fields of an alert filter, from the query.
Result<store::AlertFilter> SeriesFilter(const http::Request& request) {
  store::AlertFilter filter;
  filter.kind = request.Query("kind").value_or("");
  if (!filter.kind.empty() && !OneOf(filter.kind, {"regression", "improvement", "creep"})) {
    return InvalidArgument("must be regression, improvement or creep", "kind");
  }
  filter.branch = request.Query("branch").value_or("");
  filter.testbed = request.Query("testbed").value_or("");
  filter.suite = request.Query("suite").value_or("");
  filter.benchmark = request.Query("benchmark").value_or("");
  filter.metric = request.Query("metric").value_or("");
  return filter;
}

// The PATCH body (wire::AlertUpdate) as the store's update, with the caller as its actor.
Result<store::AlertUpdate> DecodeUpdate(const ApiDeps& deps, const http::Request& request) {
  auto body = ParseJsonObject(request.body, deps.json_max_depth);
  if (!body) return tl::unexpected(body.error());
  auto decoded = wire::DecodeAlertUpdate(*body);
  if (!decoded) return tl::unexpected(decoded.error());
  store::AlertUpdate update;
  update.state = std::move(decoded->state);
  update.note = std::move(decoded->note);
  auto caller = Authenticate(*deps.tokens, request);
  if (!caller) return tl::unexpected(caller.error());
  update.actor = *caller ? (*caller)->token.name : "anonymous";
  if (update.actor.empty()) update.actor = "token " + (*caller)->token.prefix;
  return update;
}

// GET .../alert-groups, GET|PATCH .../alert-groups/{id}.
void RegisterGroupRoutes(http::Router& router, const ApiDeps& deps) {
  router.Add("GET", "/api/v1/projects/{project}/alert-groups", "alert_groups.list",
             HandleProject(deps, {"state", "branch", "limit", "cursor"}, auth::Scope::kRead,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             store::AlertGroupFilter filter;
                             filter.state = request.Query("state").value_or("open");
                             if (!OneOf(filter.state, {"open", "closed", "all"})) {
                               return InvalidArgument("must be open, closed or all", "state");
                             }
                             filter.branch = request.Query("branch").value_or("");
                             filter.cursor = request.Query("cursor").value_or("");
                             auto limit = IntParam(request, "limit", 1, 500, 50);
                             if (!limit) return tl::unexpected(limit.error());
                             filter.limit = *limit;
                             auto page = deps.history->ListAlertGroups(project, filter);
                             if (!page) return tl::unexpected(page.error());
                             wire::AlertGroupPage out;
                             for (const store::AlertGroupRecord& g : page->groups) {
                               out.groups.push_back(history::ToWire(g));
                             }
                             if (!page->next_cursor.empty()) out.next_cursor = page->next_cursor;
                             return http::Response::Json(200,
                                                         wire::EncodeAlertGroupPage(out).dump());
                           }));
  router.Add("GET", "/api/v1/projects/{project}/alert-groups/{id}", "alert_groups.get",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto id = PositiveIdParam(params, "an alert group id");
                             if (!id) return tl::unexpected(id.error());
                             auto group = deps.history->GetAlertGroup(project, *id);
                             if (!group) return tl::unexpected(group.error());
                             return http::Response::Json(
                                 200, wire::EncodeAlertGroupDetail(history::ToWire(*group)).dump());
                           }));
  router.Add("PATCH", "/api/v1/projects/{project}/alert-groups/{id}", "alert_groups.update",
             HandleProject(deps, {}, auth::Scope::kTriage,
                           [deps](const http::Request& request, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                             auto id = PositiveIdParam(params, "an alert group id");
                             if (!id) return tl::unexpected(id.error());
                             auto update = DecodeUpdate(deps, request);
                             if (!update) return tl::unexpected(update.error());
                             auto group = deps.history->UpdateAlertGroup(project, *id, *update);
                             if (!group) return tl::unexpected(group.error());
                             return http::Response::Json(
                                 200, wire::EncodeAlertGroupDetail(history::ToWire(*group)).dump());
                           }));
}

Result<http::Response> ChangePoints(const ApiDeps& deps, const http::Request& request,
                                    const store::Project& project) {
  store::HistorySeriesQuery query;
  auto benchmark = StringParam(request, "benchmark", true);
  if (!benchmark) return tl::unexpected(benchmark.error());
  auto metric = StringParam(request, "metric", true);
  if (!metric) return tl::unexpected(metric.error());
  query.benchmark = *benchmark;
  query.metric = *metric;
  query.branch = request.Query("branch").value_or("");
  if (query.branch.empty()) {
    query.branch = deps.history_params.tracked_branches.empty()
                       ? "main"
                       : deps.history_params.tracked_branches.front();
  }
  query.testbed = request.Query("testbed").value_or("");
  query.suite = request.Query("suite").value_or("");
  query.unit = request.Query("unit").value_or("");
  auto series = deps.history->GetHistorySeries(project, query);
  if (!series) return tl::unexpected(series.error());
  // The worker's analysis from scratch over every point, so that the route and the alerts give
  // a series one answer.
  store::HistorySeriesData data;
  data.key = series->key;
  data.length = static_cast<int64_t>(series->points.size());
  data.levels.reserve(series->points.size());
  data.testbed_ids.reserve(series->points.size());
  for (const store::ExcerptPoint& p : series->points) {
    data.levels.push_back(p.level);
    data.testbed_ids.push_back(p.testbed_id);
  }
  const history::HistoryParams& params = deps.history_params.params;
  auto analysis = history::AnalyseSeries(data, params);
  if (!analysis) return tl::unexpected(analysis.error());
  wire::ChangePoints out;
  out.series = history::ToWire(series->key);
  out.points = static_cast<int64_t>(series->points.size());
  out.baseline_from = series->baseline_from;
  out.parameters = nlohmann::ordered_json::parse(history::ParametersJson(params));
  for (const history::StepFound& found : analysis->steps) {
    const stats::Step& s = found.step;
    const store::ExcerptPoint& good = series->points[s.index - 1];
    const store::ExcerptPoint& bad = series->points[s.index];
    out.change_points.push_back(
        {static_cast<int64_t>(s.index), s.magnitude, s.p_value, s.level_before, s.level_after,
         s.detectors, IsWorse(s.magnitude, series->key.direction) ? "regression" : "improvement",
         good.testbed_id != bad.testbed_id, history::ToWire(good.commit),
         history::ToWire(bad.commit)});
  }
  return JsonResponse(200, wire::EncodeChangePoints(out));
}

}  // namespace

void RegisterAlertRoutes(http::Router& router, const ApiDeps& deps) {
  if (deps.history == nullptr) return;
  router.Add(
      "GET", "/api/v1/projects/{project}/alerts", "alerts.list",
      HandleProject(
          deps,
          {"state", "kind", "branch", "testbed", "suite", "benchmark", "metric", "limit", "cursor"},
          auth::Scope::kRead,
          [deps](const http::Request& request, const http::PathParams& /*params*/,
                 const store::Project& project) -> Result<http::Response> {
            auto series = SeriesFilter(request);
            if (!series) return tl::unexpected(series.error());
            store::AlertFilter filter = *series;
            filter.state = request.Query("state").value_or("open");
            if (!wire::IsAlertState(filter.state) && filter.state != "all") {
              return InvalidArgument(
                  "must be open, acknowledged, false_positive, resolved, went_away or all",
                  "state");
            }
            filter.cursor = request.Query("cursor").value_or("");
            auto limit = IntParam(request, "limit", 1, 500, 50);
            if (!limit) return tl::unexpected(limit.error());
            filter.limit = *limit;
            auto page = deps.history->ListAlerts(project, filter);
            if (!page) return tl::unexpected(page.error());
            wire::AlertPage out;
            for (const store::AlertRecord& a : page->alerts) {
              out.alerts.push_back(history::ToWire(a));
            }
            if (!page->next_cursor.empty()) out.next_cursor = page->next_cursor;
            return http::Response::Json(200, wire::EncodeAlertPage(out).dump());
          }));

  router.Add("GET", "/api/v1/projects/{project}/alert-summary", "alerts.summary",
             HandleProject(deps, {"kind", "branch", "testbed", "suite", "benchmark", "metric"},
                           auth::Scope::kRead,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             auto filter = SeriesFilter(request);
                             if (!filter) return tl::unexpected(filter.error());
                             auto counts = deps.history->CountAlerts(project, *filter);
                             if (!counts) return tl::unexpected(counts.error());
                             return http::Response::Json(
                                 200, wire::EncodeAlertSummary(history::SummaryOf(*counts)).dump());
                           }));

  router.Add("GET", "/api/v1/projects/{project}/alerts/{id}", "alerts.get",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto id = PositiveIdParam(params, "an alert id");
                             if (!id) return tl::unexpected(id.error());
                             auto detail = deps.history->GetAlert(project, *id, kExcerptPoints);
                             if (!detail) return tl::unexpected(detail.error());
                             return http::Response::Json(
                                 200, wire::EncodeAlertDetail(history::ToWire(*detail)).dump());
                           }));

  router.Add("PATCH", "/api/v1/projects/{project}/alerts/{id}", "alerts.update",
             HandleProject(deps, {}, auth::Scope::kTriage,
                           [deps](const http::Request& request, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                             auto id = PositiveIdParam(params, "an alert id");
                             if (!id) return tl::unexpected(id.error());
                             auto update = DecodeUpdate(deps, request);
                             if (!update) return tl::unexpected(update.error());
                             auto updated = deps.history->UpdateAlert(project, *id, *update);
                             if (!updated) return tl::unexpected(updated.error());
                             return http::Response::Json(
                                 200, wire::EncodeAlert(history::ToWire(*updated)).dump());
                           }));

  router.Add("GET", "/api/v1/projects/{project}/change-points", "change_points.get",
             HandleProject(deps, {"benchmark", "metric", "branch", "testbed", "suite", "unit"},
                           auth::Scope::kRead,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             return ChangePoints(deps, request, project);
                           }),
             http::Router::Cost::kHeavy);  // e-divisive over the whole series
  RegisterGroupRoutes(router, deps);
}

}  // namespace perfwarden::server::api
