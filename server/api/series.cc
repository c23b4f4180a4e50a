// Dashboards: GET /api/v1/projects/{project}/benchmarks, .../metrics, .../branches,
// .../testbeds and .../series. A series
// point pools every repetition at one commit; its summary (median, p95, mean with a t interval)
// is computed here from the raw values so that the numbers match docs/statistics.md.
#include <algorithm>
#include <cmath>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "stats/descriptive.h"

namespace perfgate::server::api {
namespace {

using nlohmann::json;

json MetricJson(const store::MetricInfo& m) {
  return {
      {"name", m.name}, {"unit", m.unit}, {"direction", std::string(DirectionName(m.direction))}};
}

json NamedRunsJson(const std::vector<store::NamedRuns>& list) {
  json out = json::array();
  for (const auto& item : list) {
    out.push_back(
        {{"name", item.name},
         {"runs", item.runs},
         {"last_run_at", item.last_run_at.empty() ? json(nullptr) : json(item.last_run_at)}});
  }
  return out;
}

json SeriesPointJson(const store::SeriesPoint& point, bool raw) {
  const auto& v = point.values;
  json out = {{"commit", point.commit_sha},
              {"subject", point.subject},
              {"author", point.author},
              {"author_time", point.author_time.empty() ? json(nullptr) : json(point.author_time)},
              {"time", point.first_run_at},
              {"runs", point.run_ids},
              {"n", v.size()}};
  double min = v.empty() ? NAN : *std::min_element(v.begin(), v.end());
  double max = v.empty() ? NAN : *std::max_element(v.begin(), v.end());
  out["median"] = Number(stats::Median(v));
  out["min"] = Number(min);
  out["max"] = Number(max);
  out["q1"] = Number(stats::Quantile(v, 0.25, stats::QuantileMethod::kLinear));
  out["q3"] = Number(stats::Quantile(v, 0.75, stats::QuantileMethod::kLinear));
  out["p95"] = Number(stats::Quantile(v, 0.95, stats::QuantileMethod::kLinear));
  out["mean"] = Number(stats::Mean(v));
  if (v.size() >= 2) {
    stats::TInterval ci = stats::MeanConfidenceInterval(v, 0.95);
    out["ci"] = {Number(ci.lower), Number(ci.upper)};
  } else {
    out["ci"] = nullptr;
  }
  if (raw) out["values"] = v;
  return out;
}

}  // namespace

void RegisterSeriesRoutes(http::Router& router, const ApiDeps& deps) {
  router.Add("GET", "/api/v1/projects/{project}/benchmarks", "benchmarks.list",
             HandleProject(
                 deps, {}, auth::Scope::kRead,
                 [deps](const http::Request& /*request*/, const http::PathParams& /*params*/,
                        const store::Project& project) -> Result<http::Response> {
                   auto list = deps.series->ListBenchmarks(project);
                   if (!list) return tl::unexpected(list.error());
                   json out = json::array();
                   for (const auto& b : *list) {
                     json metrics = json::array();
                     for (const auto& m : b.metrics) metrics.push_back(MetricJson(m));
                     out.push_back(
                         {{"suite", b.suite}, {"name", b.name}, {"metrics", std::move(metrics)}});
                   }
                   return JsonResponse(200, {{"benchmarks", std::move(out)}});
                 }));

  router.Add(
      "GET", "/api/v1/projects/{project}/metrics", "metrics.list",
      HandleProject(deps, {}, auth::Scope::kRead,
                    [deps](const http::Request& /*request*/, const http::PathParams& /*params*/,
                           const store::Project& project) -> Result<http::Response> {
                      auto list = deps.series->ListMetrics(project);
                      if (!list) return tl::unexpected(list.error());
                      json out = json::array();
                      for (const auto& m : *list) out.push_back(MetricJson(m));
                      return JsonResponse(200, {{"metrics", std::move(out)}});
                    }));

  // The dashboard's filters: branch and testbed names with their runs, newest first.
  router.Add("GET", "/api/v1/projects/{project}/branches", "branches.list",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request&, const http::PathParams&,
                                  const store::Project& project) -> Result<http::Response> {
                             auto list = deps.series->ListBranches(project);
                             if (!list) return tl::unexpected(list.error());
                             return JsonResponse(200, {{"branches", NamedRunsJson(*list)}});
                           }));
  router.Add("GET", "/api/v1/projects/{project}/testbeds", "testbeds.list",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request&, const http::PathParams&,
                                  const store::Project& project) -> Result<http::Response> {
                             auto list = deps.series->ListTestbeds(project);
                             if (!list) return tl::unexpected(list.error());
                             return JsonResponse(200, {{"testbeds", NamedRunsJson(*list)}});
                           }));

  router.Add(
      "GET", "/api/v1/projects/{project}/series", "series.get",
      HandleProject(
          deps,
          {"benchmark", "metric", "branch", "suite", "unit", "testbed", "since", "until", "limit",
           "raw"},
          auth::Scope::kRead,
          [deps](const http::Request& request, const http::PathParams& /*params*/,
                 const store::Project& project) -> Result<http::Response> {
            store::SeriesQuery query;
            for (auto [name, out] :
                 {std::pair{"benchmark", &query.benchmark}, std::pair{"metric", &query.metric},
                  std::pair{"branch", &query.branch}}) {
              auto value = StringParam(request, name, /*required=*/true);
              if (!value) return tl::unexpected(value.error());
              *out = *value;
            }
            query.suite = request.Query("suite").value_or("");
            query.unit = request.Query("unit").value_or("");
            query.testbed = request.Query("testbed").value_or("");
            auto since = TimeParam(request, "since");
            if (!since) return tl::unexpected(since.error());
            auto until = TimeParam(request, "until");
            if (!until) return tl::unexpected(until.error());
            auto limit = IntParam(request, "limit", 1, 10000, 1000);
            if (!limit) return tl::unexpected(limit.error());
            auto raw = IntParam(request, "raw", 0, 1, 0);
            if (!raw) return tl::unexpected(raw.error());
            query.since = *since;
            query.until = *until;
            query.limit = *limit;
            auto series = deps.series->GetSeries(project, query);
            if (!series) return tl::unexpected(series.error());
            json points = json::array();
            for (const auto& point : series->points) {
              points.push_back(SeriesPointJson(point, *raw == 1));
            }
            return JsonResponse(
                200, {{"benchmark", series->benchmark.name},
                      {"suite", series->benchmark.suite},
                      {"metric", series->metric.name},
                      {"unit", series->metric.unit},
                      {"direction", std::string(DirectionName(series->metric.direction))},
                      {"branch", series->branch},
                      {"testbed", series->testbed.empty() ? json(nullptr) : json(series->testbed)},
                      {"points", std::move(points)}});
          }));
}

}  // namespace perfgate::server::api
