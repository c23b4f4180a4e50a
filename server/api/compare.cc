// GET /api/v1/projects/{project}/compare: `perfgate compare` over two stored runs. The series of
// one metric are paired by benchmark name, judged by the gate's verdict policy, and rendered
// with compare::FormatJson, so scripts read the same object as from the CLI (docs/cli.md).
#include "runner/compare/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "runner/compare/report_format.h"
#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"

namespace perfgate::server::api {
namespace {

struct Side {
  std::vector<const wire::ResultSeries*> series;  // of the compared metric, in upload order
  std::map<std::string, const wire::ResultSeries*> by_name;
};

compare::SideInfo Describe(const store::StoredRun& run, const Side& side) {
  compare::SideInfo info;
  info.source = "run " + run.summary.id;
  info.context.host_name = run.upload.testbed.name;
  info.benchmarks = side.series.size();
  info.min_repetitions = side.series.empty() ? 0 : SIZE_MAX;
  for (const auto* s : side.series) {
    info.min_repetitions = std::min(info.min_repetitions, s->values.size());
    info.max_repetitions = std::max(info.max_repetitions, s->values.size());
  }
  return info;
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

// Pairs the series of `metric` in two runs and judges them. Names are "benchmark", or
// "suite/benchmark" when the runs' series of this metric come from more than one suite.
Result<compare::CompareReport> CompareRuns(const store::StoredRun& base,
                                           const store::StoredRun& contender,
                                           const std::string& metric,
                                           const stats::VerdictPolicy& policy) {
  std::set<std::string> suites;
  for (const auto* run : {&base, &contender}) {
    for (const auto& s : run->upload.results) {
      if (s.metric == metric) suites.insert(s.suite);
    }
  }
  const bool qualify = suites.size() > 1;
  auto name_of = [&](const wire::ResultSeries& s) {
    return qualify ? s.suite + "/" + s.benchmark : s.benchmark;
  };
  auto collect = [&](const store::StoredRun& run, Side& side) {
    for (const auto& s : run.upload.results) {
      if (s.metric != metric) continue;
      // Units must agree to compare; a second unit of one name is a different series.
      if (!side.by_name.emplace(name_of(s), &s).second) continue;
      side.series.push_back(&s);
    }
  };
  Side base_side;
  Side contender_side;
  collect(base, base_side);
  collect(contender, contender_side);
  if (base_side.series.empty() || contender_side.series.empty()) {
    return InvalidArgument("metric '" + metric + "' is not in " +
                               (base_side.series.empty() ? "the base" : "the contender") + " run",
                           "metric");
  }

  compare::CompareReport report;
  report.metric = metric;
  report.policy = policy;
  report.direction = base_side.series.front()->direction;
  report.base = Describe(base, base_side);
  report.contender = Describe(contender, contender_side);

  std::vector<stats::MetricInput> inputs;
  for (const auto* s : base_side.series) {
    auto it = contender_side.by_name.find(name_of(*s));
    if (it == contender_side.by_name.end()) {
      report.only_in_base.push_back(name_of(*s));
      continue;
    }
    if (report.unit.empty()) report.unit = s->unit;
    inputs.push_back({name_of(*s), s->direction, s->values, it->second->values, 0});
  }
  for (const auto* s : contender_side.series) {
    if (!base_side.by_name.count(name_of(*s))) report.only_in_contender.push_back(name_of(*s));
  }
  if (inputs.empty()) {
    return InvalidArgument("no benchmark with metric '" + metric + "' is in both runs", "metric");
  }
  auto verdicts = stats::JudgeMetrics(inputs, policy);
  if (!verdicts) return tl::unexpected(verdicts.error());
  report.verdicts = std::move(*verdicts);

  if (base.upload.testbed.name != contender.upload.testbed.name) {
    report.warnings.push_back("the two runs come from different testbeds (" +
                              base.upload.testbed.name + " and " + contender.upload.testbed.name +
                              "): differences may be the machine, not the code");
  }
  if (!report.only_in_base.empty() || !report.only_in_contender.empty()) {
    report.warnings.push_back(std::to_string(report.only_in_base.size()) +
                              " benchmark(s) only in the base and " +
                              std::to_string(report.only_in_contender.size()) +
                              " only in the contender are not compared");
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
                        auto threshold = compare::ParseThreshold(*text);
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
                      return http::Response::Json(200, compare::FormatJson(*report));
                    }),
      http::Router::Cost::kHeavy);  // the stats engine over two runs: CPU, not I/O
}

}  // namespace perfgate::server::api
