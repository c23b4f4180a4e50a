// A project's REST resources on perfgate-server as the runner reaches them (perfgate.yaml's
// server.url and server.project, PERFGATE_TOKEN): requests with retries, the server's error body
// as an Error (4xx: exit 2, 5xx and transport: exit 3). Used by `perfgate alerts`,
// `perfgate bisect` (--alert, --remote, status), `perfgate agent` and `perfgate gate` (a run's
// verdict).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/result.h"
#include "net/http_client.h"
#include "wire/bisect.h"
#include "wire/verdict.h"
#include "wire/verdict_request.h"

namespace perfgate::client {

// Alert ids are positive integers; kInvalidArgument (field "ID") otherwise.
Result<void> CheckId(const std::string& id);

// The server's error body {"error": {"code", "message", "field"}} as an Error.
Error HttpError(const net::HttpResponse& response, const std::string& hint_403);

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

  // --- Bisects (wire/bisect.h): `perfgate bisect` and `perfgate agent` ------------------------
  // Each a Call with its retries and errors; an answer that is not the documented message is
  // kUnavailable naming the field at fault.

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

 private:
  ProjectClient(net::HttpClient http, std::string root, std::string project)
      : http_(std::move(http)),
        root_(std::move(root)),
        project_(std::move(project)),
        base_(root_ + "/api/v1/projects/" + project_) {}
  // The request with retries, each announced on stderr as "perfgate: <what> failed (why);
  // retrying".
  Result<net::HttpResponse> Send(const net::HttpRequest& request, const std::string& what);

  net::HttpClient http_;
  std::string root_;     // the server's URL without a trailing '/'
  std::string project_;  // the project's name as a path segment
  std::string base_;     // ".../api/v1/projects/<p>"
};

}  // namespace perfgate::client
