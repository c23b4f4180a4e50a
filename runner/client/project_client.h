// SPDX-License-Identifier: Apache-2.0
// A project's REST resources on perfwarden-server as the runner reaches them (perfwarden.yaml's
// server.url and server.project, PERFWARDEN_TOKEN): requests with retries, the server's error body
// as an Error (4xx: exit 2, 5xx and transport: exit 3). Used by `perfwarden alerts`,
// `perfwarden bisect` (--alert, --remote, status), `perfwarden agent` and `perfwarden gate` (a
// run's verdict).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/result.h"
#include "net/http_client.h"
#include "wire/alert.h"
#include "wire/bisect.h"
#include "wire/paired.h"
#include "wire/verdict.h"
#include "wire/verdict_request.h"

namespace perfwarden::client {

// Alert ids are positive integers; kInvalidArgument (field "ID") otherwise.
Result<void> CheckId(const std::string& id);

// The server's error body {"error": {"code", "message", "field"}} as an Error.
Error HttpError(const net::HttpResponse& response, const std::string& hint_403);

// Which alerts GET .../alerts lists (its query parameters): "" leaves a filter out, and the
// server's default applies (state: open; limit: 50).
struct AlertQuery {
  std::string state = "";  // open, acknowledged, false_positive, resolved or all
  std::string kind = "";   // regression or improvement
  std::string branch = "";
  std::string testbed = "";
  std::string suite = "";
  std::string benchmark = "";
  std::string metric = "";
  int limit = 0;            // alerts per page; 0: the server's default
  std::string cursor = "";  // the page to start at (an earlier page's next_cursor)
};

class ProjectClient {
 public:
  // The client of `project` on the server at `url`, authenticated by `token` (the caller has
  // checked that none is empty: run::OpenProjectClient).
  static Result<ProjectClient> Open(const std::string& url, const std::string& project,
                                    const std::string& token);

  // A request to `path_and_query` under /api/v1/projects/<project>, with retries (setting a
  // state twice is harmless, so PATCH may be retried); the answer's JSON when the status is 2xx.
  Result<nlohmann::json> Call(const std::string& method, const std::string& path_and_query,
                              const std::string& body, const std::string& hint_403 = "");

  // POST .../runs/<run_id>/verdict with retries: the run's verdict for this request, computed
  // or reused by the server (200 or 201). Its report_url, when the server named none, is the
  // dashboard's page of the verdict (the PR comment's "Full report" link).
  Result<wire::Verdict> AskVerdict(const std::string& run_id, const wire::VerdictRequest& request);
  // POST .../runs/<run_id>/verdict/paired with retries: the paired measurement judged and stored
  // by the server as the run's verdict (201; 200 when the same measurement was stored before),
  // report_url as AskVerdict's.
  Result<wire::Verdict> PostPairedVerdict(const std::string& run_id,
                                          const wire::PairedMeasurement& measurement);

  // --- Bisects (wire/bisect.h): `perfwarden bisect` and `perfwarden agent`
  // ------------------------ Each a Call with its retries and errors; an answer that is not the
  // documented message is kUnavailable naming the field at fault.

  // POST .../bisects: a local bisect's answer stored (with its alert, when it names one), or a
  // remote bisect queued for a testbed's agents; the bisect as the server stored it.
  Result<wire::Bisect> StoreBisect(const wire::BisectReportUpload& upload);
  Result<wire::Bisect> QueueBisect(const wire::RemoteBisectRequest& request);
  // GET .../bisects/<id>: a stored bisect; a running remote one with its progress.
  Result<wire::Bisect> GetBisect(int64_t id);
  // POST .../bisect-steps/claim: the testbed's next step; nullopt when none is queued (204).
  Result<std::optional<wire::ClaimedStep>> ClaimBisectStep(const wire::StepClaimRequest& claim);
  // POST .../bisect-steps/<id>/heartbeat: the renewed lease (kConflict once the claim is lost).
  Result<wire::StepLease> RenewBisectStep(int64_t step_id, const wire::StepHeartbeat& heartbeat);
  // POST .../bisect-steps/<id>/result: the bisect as the replay left it (kConflict once the
  // claim is lost; kInvalidArgument when the server refuses the measurement).
  Result<wire::Bisect> ReportBisectStep(int64_t step_id, const wire::StepReport& report);

  // --- alerts: GET/PATCH .../alerts, GET .../alert-summary (wire/alert.h). An answer that does
  // not decode is kUnavailable naming the key at fault. `id` is an alert id CheckId accepted.

  // The page of alerts at query.cursor; with `all_pages`, the alerts of that page and of every
  // page after it, following next_cursor (at most kMaxAlertPages pages, and never a cursor
  // twice). next_cursor is the page after the last one read, absent when there is none.
  static constexpr int kMaxAlertPages = 1000;
  Result<wire::AlertPage> ListAlerts(const AlertQuery& query, bool all_pages);
  // The counts of the alerts that query's kind and series filters select (its state, limit and
  // cursor do not apply).
  Result<wire::AlertSummary> SummarizeAlerts(const AlertQuery& query);
  // One alert with its series excerpt, triage history and bisects.
  Result<wire::AlertDetail> GetAlert(const std::string& id);
  // Sets an alert's state and/or note (the triage scope; a 403 says so); the alert after it.
  Result<wire::Alert> UpdateAlert(const std::string& id, const wire::AlertUpdate& update);

  // --- alert groups: GET .../alert-groups (query's state: open, closed or all; branch, limit
  // and cursor), GET|PATCH .../alert-groups/{id}. `id` is a group id CheckId accepted.
  Result<wire::AlertGroupPage> ListAlertGroups(const AlertQuery& query);
  Result<wire::AlertGroupDetail> GetAlertGroup(const std::string& id);
  // Every member's state and/or note (the triage scope); the group after it.
  Result<wire::AlertGroupDetail> UpdateAlertGroup(const std::string& id,
                                                  const wire::AlertUpdate& update);

 private:
  ProjectClient(net::HttpClient http, std::string root, std::string project)
      : http_(std::move(http)),
        root_(std::move(root)),
        project_(std::move(project)),
        base_(root_ + "/api/v1/projects/" + project_) {}
  // The request with retries, each announced on stderr as "perfwarden: <what> failed (why);
  // retrying".
  Result<net::HttpResponse> Send(const net::HttpRequest& request, const std::string& what);
  // POST base_/runs/<run_id><route> with a JSON body, answered by a verdict (200 or 201).
  Result<wire::Verdict> PostForVerdict(const std::string& run_id, const std::string& route,
                                       std::string body, const std::string& what);
  // A 2xx answer to a JSON request under base_ (with retries), the server's error otherwise;
  // Call and the alert methods read its body.
  Result<net::HttpResponse> Exchange(const std::string& method, const std::string& path_and_query,
                                     const std::string& body, const std::string& hint_403);

  net::HttpClient http_;
  std::string root_;     // the server's URL without a trailing '/'
  std::string project_;  // the project's name as a path segment
  std::string base_;     // ".../api/v1/projects/<p>"
};

}  // namespace perfwarden::client
