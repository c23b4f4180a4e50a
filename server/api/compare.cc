// SPDX-License-Identifier: Apache-2.0
// GET /api/v1/projects/{project}/compare: `perfwarden compare` over two stored runs. The series of
// one metric are paired by suite and benchmark, judged by the gate's verdict policy
// (judge::Compare), and written by judge::CompareReportJson, so scripts read the same object as
// from the CLI (docs/cli.md).
#include <algorithm>
#include <charconv>
#include <set>

#include "core/threshold_rule.h"
#include "judge/compare_json.h"
#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"

namespace perfwarden::server::api {
namespace {

// One run's series of the compared metric, in upload order, the first of each name only (a
// second unit of one name is a different series; units must agree to compare).
std::vector<judge::Series> Collect(const store::StoredRun& run, const std::string& metric,
                                   judge::StatsName name) {
  std::vector<judge::Series> out;
  std::set<std::string> names;
  for (const wire::ResultSeries& s : run.upload.results) {
    if (s.key.metric != metric) continue;
    judge::Series series{
        .key = s.key, .unit = s.unit, .direction = s.direction, .values = s.values};
    if (!names.insert(judge::NameOf(series.key, name)).second) continue;
    out.push_back(std::move(series));
  }
  return out;
}

Result<double> ParseAlpha(const http::Request& request) {
  auto text = request.Query("alpha");
  if (!text) return 0.05;
  double value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || end != text->data() + text->size() ||
      !(value > 0 && value < 1)) {
    return InvalidArgument("must be a number between 0 and 1 (exclusive)", "alpha");
  }
  return value;
}

}  // namespace

Result<judge::CompareReport> CompareRuns(const store::StoredRun& base,
                                         const store::StoredRun& contender,
                                         const std::string& metric,
                                         const stats::VerdictPolicy& policy) {
  std::set<std::string> suites;
  for (const auto* run : {&base, &contender}) {
    for (const auto& s : run->upload.results) {
      if (s.key.metric == metric) suites.insert(s.key.suite);
    }
  }
  judge::CompareOptions options;
  options.metric = metric;
  options.policy = policy;
  options.name =
      suites.size() > 1 ? judge::StatsName::kSuiteBenchmark : judge::StatsName::kBenchmark;
  const std::vector<judge::Series> base_side = Collect(base, metric, options.name);
  const std::vector<judge::Series> contender_side = Collect(contender, metric, options.name);
  if (base_side.empty() || contender_side.empty()) {
    return InvalidArgument("metric '" + metric + "' is not in " +
                               (base_side.empty() ? "the base" : "the contender") + " run",
                           "metric");
  }
  options.direction = base_side.front().direction;
  auto report = judge::Compare("run " + base.summary.id, base_side, "run " + contender.summary.id,
                               contender_side, options);
  if (!report) return tl::unexpected(report.error());
  if (report->verdicts.metrics.empty()) {
    return InvalidArgument("no benchmark with metric '" + metric + "' is in both runs", "metric");
  }
  if (base.upload.testbed.name != contender.upload.testbed.name) {
    report->warnings.insert(report->warnings.begin(),
                            "the two runs come from different testbeds (" +
                                base.upload.testbed.name + " and " + contender.upload.testbed.name +
                                "): differences may be the machine, not the code");
  }
  return report;
}

void RegisterCompareRoutes(http::Router& router, const ApiDeps& deps) {
  router.Add(
      "GET", "/api/v1/projects/{project}/compare", "compare",
      HandleProject(deps, {"base", "contender", "metric", "threshold", "alpha"}, auth::Scope::kRead,
                    [deps](const http::Request& request, const http::PathParams& /*params*/,
                           const store::Project& project) -> Result<http::Response> {
                      auto base_id = StringParam(request, "base", true);
                      if (!base_id) return tl::unexpected(base_id.error());
                      auto contender_id = StringParam(request, "contender", true);
                      if (!contender_id) return tl::unexpected(contender_id.error());
                      std::string metric = request.Query("metric").value_or("real_time");
                      if (metric.empty()) return InvalidArgument("must not be empty", "metric");
                      stats::VerdictPolicy policy;
                      if (auto text = request.Query("threshold")) {
                        auto threshold = ParseThreshold(*text);
                        if (!threshold) return tl::unexpected(threshold.error());
                        policy.threshold = *threshold;
                      }
                      auto alpha = ParseAlpha(request);
                      if (!alpha) return tl::unexpected(alpha.error());
                      policy.alpha = *alpha;

                      auto base = deps.runs->GetRun(project, *base_id);
                      if (!base) {
                        Error error = base.error();
                        if (error.code == ErrorCode::kNotFound) error.field = "base";
                        return tl::unexpected(error);
                      }
                      auto contender = deps.runs->GetRun(project, *contender_id);
                      if (!contender) {
                        Error error = contender.error();
                        if (error.code == ErrorCode::kNotFound) error.field = "contender";
                        return tl::unexpected(error);
                      }
                      auto report = CompareRuns(*base, *contender, metric, policy);
                      if (!report) return tl::unexpected(report.error());
                      return http::Response::Json(200, judge::CompareReportJson(*report));
                    }),
      http::Router::Cost::kHeavy);  // the stats engine over two runs: CPU, not I/O
}

}  // namespace perfwarden::server::api
