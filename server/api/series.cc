// SPDX-License-Identifier: Apache-2.0
// Dashboards: GET /api/v1/projects/{project}/benchmarks, .../metrics, .../branches,
// .../testbeds and .../series. A series
// point pools every repetition at one commit; its summary (median, p95, mean with a t interval)
// is computed here from the raw values so that the numbers match docs/statistics.md.
#include <algorithm>
#include <cmath>
#include <string>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "stats/descriptive.h"

namespace perfwarden::server::api {
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

// The series body is written as JSON text directly: with 10,000 points of 10 repetitions a tree
// of nlohmann values (about 300,000 nodes, std::map keys) cost more than the query. The text is
// byte for byte what nlohmann's dump() of the same object gives: keys in std::map order, numbers
// by nlohmann's own shortest round-trip printer (non-finite as null), strings escaped by
// nlohmann unless they are printable ASCII without '"' and '\' (written as they are).
void AppendString(std::string& out, const std::string& text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += json(text).dump();
  }
}

void AppendNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  char* end = nlohmann::detail::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
}

// One point, keys in the order nlohmann's object (a std::map) keeps them.
void AppendSeriesPoint(std::string& out, const store::SeriesPoint& point, bool raw) {
  const auto& v = point.values;
  const double min = v.empty() ? NAN : *std::min_element(v.begin(), v.end());
  const double max = v.empty() ? NAN : *std::max_element(v.begin(), v.end());
  out += "{\"author\":";
  AppendString(out, point.author);
  out += ",\"author_time\":";
  if (point.author_time.empty()) {
    out += "null";
  } else {
    AppendString(out, point.author_time);
  }
  out += ",\"ci\":";
  if (v.size() >= 2) {
    stats::TInterval ci = stats::MeanConfidenceInterval(v, 0.95);
    out += '[';
    AppendNumber(out, ci.lower);
    out += ',';
    AppendNumber(out, ci.upper);
    out += ']';
  } else {
    out += "null";
  }
  out += ",\"commit\":";
  AppendString(out, point.commit_sha);
  out += ",\"max\":";
  AppendNumber(out, max);
  out += ",\"mean\":";
  AppendNumber(out, stats::Mean(v));
  out += ",\"median\":";
  AppendNumber(out, stats::Median(v));
  out += ",\"min\":";
  AppendNumber(out, min);
  out += ",\"n\":";
  out += std::to_string(v.size());
  out += ",\"p95\":";
  AppendNumber(out, stats::Quantile(v, 0.95, stats::QuantileMethod::kLinear));
  out += ",\"q1\":";
  AppendNumber(out, stats::Quantile(v, 0.25, stats::QuantileMethod::kLinear));
  out += ",\"q3\":";
  AppendNumber(out, stats::Quantile(v, 0.75, stats::QuantileMethod::kLinear));
  out += ",\"runs\":[";
  for (size_t i = 0; i < point.run_ids.size(); ++i) {
    if (i > 0) out += ',';
    AppendString(out, point.run_ids[i]);
  }
  out += "],\"subject\":";
  AppendString(out, point.subject);
  out += ",\"time\":";
  AppendString(out, point.first_run_at);
  if (raw) {
    out += ",\"values\":[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ',';
      AppendNumber(out, v[i]);
    }
    out += ']';
  }
  out += '}';
}

// The whole series object (docs/api.md), keys in std::map order as above.
std::string SeriesBody(const store::Series& series, bool raw) {
  std::string out;
  out.reserve(256 + series.points.size() * (raw ? 600 : 450));
  out += "{\"benchmark\":";
  AppendString(out, series.benchmark.name);
  out += ",\"branch\":";
  AppendString(out, series.branch);
  out += ",\"direction\":";
  AppendString(out, std::string(DirectionName(series.metric.direction)));
  out += ",\"metric\":";
  AppendString(out, series.metric.name);
  out += ",\"points\":[";
  for (size_t i = 0; i < series.points.size(); ++i) {
    if (i > 0) out += ',';
    AppendSeriesPoint(out, series.points[i], raw);
  }
  out += "],\"suite\":";
  AppendString(out, series.benchmark.suite);
  out += ",\"testbed\":";
  if (series.testbed.empty()) {
    out += "null";
  } else {
    AppendString(out, series.testbed);
  }
  out += ",\"unit\":";
  AppendString(out, series.metric.unit);
  out += '}';
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
  using ListNamed =
      Result<std::vector<store::NamedRuns>> (store::SeriesStore::*)(const store::Project&);
  for (auto [key, list_named] :
       {std::pair<std::string, ListNamed>{"branches", &store::SeriesStore::ListBranches},
        std::pair<std::string, ListNamed>{"testbeds", &store::SeriesStore::ListTestbeds}}) {
    router.Add("GET", "/api/v1/projects/{project}/" + key, key + ".list",
               HandleProject(deps, {}, auth::Scope::kRead,
                             [deps, key, list_named](
                                 const http::Request&, const http::PathParams&,
                                 const store::Project& project) -> Result<http::Response> {
                               auto list = (deps.series->*list_named)(project);
                               if (!list) return tl::unexpected(list.error());
                               return JsonResponse(200, {{key, NamedRunsJson(*list)}});
                             }));
  }

  router.Add("GET", "/api/v1/projects/{project}/series", "series.get",
             HandleProject(deps,
                           {"benchmark", "metric", "branch", "suite", "unit", "testbed", "since",
                            "until", "limit", "raw"},
                           auth::Scope::kRead,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             store::SeriesQuery query;
                             for (auto [name, out] : {std::pair{"benchmark", &query.benchmark},
                                                      std::pair{"metric", &query.metric},
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
                             return http::Response::Json(200, SeriesBody(*series, *raw == 1));
                           }),
             // Up to 10,000 points (raw=1: every sample): 100-156 ms and 5.6 MB for 10,000
             // commits x 10 repetitions, ~70 ms more to gzip it (docs/performance.md), as much
             // as the change points of the same series.
             http::Router::Cost::kHeavy);
}

}  // namespace perfwarden::server::api
