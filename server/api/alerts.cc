// Alerts and change points of tracked branches: GET .../alerts (filtered, paged),
// GET .../alerts/{id} (with the series excerpt and triage history), PATCH .../alerts/{id}
// (state and note; the triage scope), and GET .../change-points, which runs the history
// worker's analysis (server/history AnalyseSeries) on a whole stored series on demand.
#include <algorithm>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/history/alert_json.h"
#include "server/history/analysis.h"
#include "server/history/service.h"

namespace perfgate::server::api {
namespace {

using nlohmann::json;

constexpr int kExcerptPoints = 10;  // each side of the step

bool OneOf(const std::string& value, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return value == a; });
}

// The kind and series fields of an alert filter, from the query.
Result<store::AlertFilter> SeriesFilter(const http::Request& request) {
  store::AlertFilter filter;
  filter.kind = request.Query("kind").value_or("");
  if (!filter.kind.empty() && !OneOf(filter.kind, {"regression", "improvement"})) {
    return InvalidArgument("must be regression or improvement", "kind");
  }
  filter.branch = request.Query("branch").value_or("");
  filter.testbed = request.Query("testbed").value_or("");
  filter.suite = request.Query("suite").value_or("");
  filter.benchmark = request.Query("benchmark").value_or("");
  filter.metric = request.Query("metric").value_or("");
  return filter;
}

// {"state": "...", "note": "..."}: at least one, nothing else.
Result<store::AlertUpdate> DecodeUpdate(const http::Request& request, int max_depth) {
  auto body = ParseJsonObject(request.body, max_depth);
  if (!body) return tl::unexpected(body.error());
  store::AlertUpdate update;
  for (auto it = body->begin(); it != body->end(); ++it) {
    if (it.key() == "state") {
      if (!it->is_string()) return InvalidArgument("must be a string", "state");
      const std::string state = it->get<std::string>();
      if (!OneOf(state, {"open", "acknowledged", "false_positive", "resolved"})) {
        return InvalidArgument(
            "must be open, acknowledged, false_positive or resolved, got \"" + state + "\"",
            "state");
      }
      update.state = state;
    } else if (it.key() == "note") {
      if (!it->is_string()) return InvalidArgument("must be a string", "note");
      std::string note = it->get<std::string>();
      if (note.size() > 4096) return InvalidArgument("longer than 4096 bytes", "note");
      update.note = std::move(note);
    } else {
      return InvalidArgument("unknown field (expected state, note)", it.key());
    }
  }
  if (!update.state && !update.note) {
    return InvalidArgument("give a state, a note or both", "state");
  }
  return update;
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
  json out_steps = json::array();
  for (const history::StepFound& found : analysis->steps) {
    const stats::Step& s = found.step;
    const store::ExcerptPoint& good = series->points[s.index - 1];
    const store::ExcerptPoint& bad = series->points[s.index];
    out_steps.push_back(
        {{"index", s.index},
         {"magnitude", s.magnitude},
         {"p_value", s.p_value},
         {"level_before", s.level_before},
         {"level_after", s.level_after},
         {"detectors", s.detectors},
         {"kind", IsWorse(s.magnitude, series->key.direction) ? "regression" : "improvement"},
         {"environment_change", good.testbed_id != bad.testbed_id},
         {"last_good", history::CommitJson(good.commit)},
         {"first_bad", history::CommitJson(bad.commit)}});
  }
  return JsonResponse(200, {{"series",
                             {{"branch", series->key.branch},
                              {"testbed", series->key.testbed},
                              {"suite", series->key.key.suite},
                              {"benchmark", series->key.key.benchmark},
                              {"metric", series->key.key.metric},
                              {"unit", series->key.unit},
                              {"direction", std::string(DirectionName(series->key.direction))}}},
                            {"points", series->points.size()},
                            {"baseline_from", series->baseline_from},
                            {"parameters", json::parse(history::ParametersJson(params))},
                            {"change_points", std::move(out_steps)}});
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
            if (!OneOf(filter.state,
                       {"open", "acknowledged", "false_positive", "resolved", "all"})) {
              return InvalidArgument("must be open, acknowledged, false_positive, resolved or all",
                                     "state");
            }
            filter.cursor = request.Query("cursor").value_or("");
            auto limit = IntParam(request, "limit", 1, 500, 50);
            if (!limit) return tl::unexpected(limit.error());
            filter.limit = *limit;
            auto page = deps.history->ListAlerts(project, filter);
            if (!page) return tl::unexpected(page.error());
            nlohmann::ordered_json alerts = nlohmann::ordered_json::array();
            for (const store::AlertRecord& a : page->alerts) {
              alerts.push_back(history::AlertJson(a));
            }
            nlohmann::ordered_json out = {{"alerts", std::move(alerts)}, {"next_cursor", nullptr}};
            if (!page->next_cursor.empty()) out["next_cursor"] = page->next_cursor;
            return http::Response::Json(200, out.dump());
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
                             return http::Response::Json(200,
                                                         history::AlertSummaryJson(*counts).dump());
                           }));

  router.Add("GET", "/api/v1/projects/{project}/alerts/{id}", "alerts.get",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto id = PositiveIdParam(params, "an alert id");
                             if (!id) return tl::unexpected(id.error());
                             auto detail = deps.history->GetAlert(project, *id, kExcerptPoints);
                             if (!detail) return tl::unexpected(detail.error());
                             return http::Response::Json(200,
                                                         history::AlertDetailJson(*detail).dump());
                           }));

  router.Add("PATCH", "/api/v1/projects/{project}/alerts/{id}", "alerts.update",
             HandleProject(deps, {}, auth::Scope::kTriage,
                           [deps](const http::Request& request, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                             auto id = PositiveIdParam(params, "an alert id");
                             if (!id) return tl::unexpected(id.error());
                             auto update = DecodeUpdate(request, deps.json_max_depth);
                             if (!update) return tl::unexpected(update.error());
                             auto caller = Authenticate(*deps.tokens, request);
                             if (!caller) return tl::unexpected(caller.error());
                             update->actor = *caller ? (*caller)->token.name : "anonymous";
                             if (update->actor.empty())
                               update->actor = "token " + (*caller)->token.prefix;
                             auto updated = deps.history->UpdateAlert(project, *id, *update);
                             if (!updated) return tl::unexpected(updated.error());
                             return http::Response::Json(200, history::AlertJson(*updated).dump());
                           }));

  router.Add("GET", "/api/v1/projects/{project}/change-points", "change_points.get",
             HandleProject(deps, {"benchmark", "metric", "branch", "testbed", "suite", "unit"},
                           auth::Scope::kRead,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             return ChangePoints(deps, request, project);
                           }),
             http::Router::Cost::kHeavy);  // e-divisive over the whole series
}

}  // namespace perfgate::server::api
