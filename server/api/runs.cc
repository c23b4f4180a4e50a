// SPDX-License-Identifier: Apache-2.0
// Runs: POST /api/v1/projects/{project}/runs (ingest, wire format v1),
// GET /api/v1/projects/{project}/runs (filtered, paged) and GET .../runs/{id}. Everything is
// validated before the store is called, so a rejected upload stores nothing.
#include <algorithm>
#include <cctype>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/gate/verdict.h"
#include "server/http/errors.h"
#include "wire/run_upload.h"
#include "wire/validate.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

// Decodes and checks an upload for `project`; kInvalidArgument naming the field otherwise.
Result<wire::RunUpload> DecodeUpload(const http::Request& request, const store::Project& project,
                                     int json_max_depth) {
  wire::DecodeLimits limits;
  // An upload is at most 32 deep (docs/wire-format.md), however deep other bodies may go.
  limits.max_depth = std::min(limits.max_depth, json_max_depth);
  auto run = wire::DecodeRunUpload(request.body, limits);
  if (!run) return run;
  if (run->project != project.name) {
    return InvalidArgument("the body's project \"" + run->project + "\" is not \"" + project.name +
                               "\" (the project in the path)",
                           "project");
  }
  if (run->branch.empty()) return InvalidArgument("missing required field", "branch");
  return run;
}

}  // namespace

void RegisterRunRoutes(http::Router& router, const ApiDeps& deps) {
  http::Counter* ingested_samples =
      deps.metrics == nullptr
          ? nullptr
          : deps.metrics->AddCounter("perfwarden_ingested_samples_total",
                                     "Samples stored by POST /api/v1/projects/{project}/runs.");
  http::Counter* ingested_runs =
      deps.metrics == nullptr
          ? nullptr
          : deps.metrics->AddCounter("perfwarden_ingested_runs_total",
                                     "Runs stored (not counting idempotent re-posts).");

  router.Add(
      "POST", "/api/v1/projects/{project}/runs", "runs.create",
      HandleBranchWrite(
          deps,
          [deps, ingested_samples, ingested_runs](
              const http::Request& request, const http::PathParams& /*params*/,
              const store::Project& project, const BranchGuard& guard) -> Result<http::Response> {
            if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
            auto run = DecodeUpload(request, project, deps.json_max_depth);
            if (!run) return tl::unexpected(run.error());
            if (auto allowed = guard.Check(run->branch); !allowed) {
              return tl::unexpected(allowed.error());
            }
            auto outcome = deps.runs->IngestRun(project, *run);
            if (!outcome) return tl::unexpected(outcome.error());
            if (outcome->created && ingested_samples != nullptr) {
              ingested_samples->Increment(run->SampleCount());
              ingested_runs->Increment();
            }
            if (outcome->created && deps.verdicts != nullptr) {
              deps.verdicts->WarmBaselineAfterIngest(project, run->id);
            }
            if (outcome->created && deps.history_service != nullptr) {
              deps.history_service->Notify();
            }
            return JsonResponse(outcome->created ? 201 : 200,
                                {{"created", outcome->created}, {"run", RunJson(outcome->run)}});
          }));

  router.Add("GET", "/api/v1/projects/{project}/runs", "runs.list",
             HandleProject(
                 deps, {"branch", "commit", "testbed", "since", "until", "limit", "cursor"},
                 auth::Scope::kRead,
                 [deps](const http::Request& request, const http::PathParams& /*params*/,
                        const store::Project& project) -> Result<http::Response> {
                   store::RunFilter filter;
                   filter.branch = request.Query("branch").value_or("");
                   filter.testbed = request.Query("testbed").value_or("");
                   filter.cursor = request.Query("cursor").value_or("");
                   filter.commit = request.Query("commit").value_or("");
                   if (!filter.commit.empty() && !wire::IsSha(filter.commit)) {
                     return InvalidArgument("not a full commit sha (40 hex digits)", "commit");
                   }
                   for (char& c : filter.commit) c = static_cast<char>(std::tolower(c));
                   auto since = TimeParam(request, "since");
                   if (!since) return tl::unexpected(since.error());
                   auto until = TimeParam(request, "until");
                   if (!until) return tl::unexpected(until.error());
                   auto limit = IntParam(request, "limit", 1, 1000, 50);
                   if (!limit) return tl::unexpected(limit.error());
                   filter.since = *since;
                   filter.until = *until;
                   filter.limit = *limit;
                   auto page = deps.runs->ListRuns(project, filter);
                   if (!page) return tl::unexpected(page.error());
                   json runs = json::array();
                   for (const auto& run : page->runs) runs.push_back(RunJson(run));
                   return JsonResponse(
                       200, {{"runs", std::move(runs)},
                             {"next_cursor", page->next_cursor.empty() ? json(nullptr)
                                                                       : json(page->next_cursor)}});
                 }));

  router.Add("GET", "/api/v1/projects/{project}/runs/{id}", "runs.get",
             HandleProject(deps, {}, auth::Scope::kRead,
                           [deps](const http::Request& /*request*/, const http::PathParams& params,
                                  const store::Project& project) -> Result<http::Response> {
                             auto run = deps.runs->GetRun(project, params.at("id"));
                             if (!run) return tl::unexpected(run.error());
                             json verdict = nullptr;
                             if (run->latest_verdict) {
                               verdict = {{"id", run->latest_verdict->id},
                                          {"outcome", run->latest_verdict->outcome},
                                          {"created_at", run->latest_verdict->created_at}};
                             }
                             return JsonResponse(
                                 200, {{"run", RunJson(run->summary)},
                                       {"upload", json::parse(wire::EncodeRunUpload(run->upload))},
                                       {"verdict", std::move(verdict)}});
                           }));
}

}  // namespace perfwarden::server::api
