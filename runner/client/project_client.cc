// SPDX-License-Identifier: Apache-2.0
#include "runner/client/project_client.h"

#include <iostream>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "net/retry.h"
#include "runner/client/uploader.h"
#include "wire/error.h"

namespace perfwarden::client {

using nlohmann::json;

// Alert ids are positive integers; checked before anything is loaded or sent.
Result<void> CheckId(const std::string& id) {
  const bool digits = !id.empty() && id.size() <= 18 &&
                      id.find_first_not_of("0123456789") == std::string::npos &&
                      id.find_first_not_of('0') != std::string::npos;
  if (!digits) {
    return InvalidArgument("'" + id +
                               "' is not an alert id (alert ids are positive integers: the ID "
                               "column of `perfwarden alerts list`)",
                           "ID");
  }
  return {};
}

// The server's error body (wire/error.h) as an Error: 5xx and an answer that is not JSON are
// kUnavailable (exit 3), 4xx map to their code (exit 2).
Error HttpError(const net::HttpResponse& response, const std::string& hint_403) {
  std::string message = "the server answered HTTP " + std::to_string(response.status);
  if (Result<wire::ErrorBody> body = wire::DecodeErrorBody(response.body)) {
    if (!body->message.empty()) message += ": " + body->message;
    if (!body->field.empty()) message += " (" + body->field + ")";
  }
  // Whatever code a 5xx names, the server failed: the request may succeed later.
  const ErrorCode code =
      response.status >= 500 ? ErrorCode::kUnavailable : wire::CodeOfStatus(response.status);
  if (code == ErrorCode::kPermissionDenied && !hint_403.empty()) message += " (" + hint_403 + ")";
  return Error{code, message, ""};
}

Result<ProjectClient> ProjectClient::Open(const std::string& url, const std::string& project,
                                          const std::string& token) {
  net::HttpClientOptions options;
  options.bearer_token = token;
  auto http = net::HttpClient::Create(options);
  if (!http) return tl::unexpected(http.error());
  std::string root = url;
  while (!root.empty() && root.back() == '/') root.pop_back();
  return ProjectClient(std::move(*http), std::move(root), EscapePathSegment(project));
}

Result<net::HttpResponse> ProjectClient::Send(const net::HttpRequest& request,
                                              const std::string& what) {
  net::RetryContext context;
  context.seed = std::random_device{}();
  context.on_retry = [&what](const net::RetryNotice& notice) {
    std::cerr << "perfwarden: " << what << " failed (" << notice.reason << "); retrying\n";
  };
  return net::CallWithRetry(
      net::RetryPolicy{}, [&] { return http_.Send(request); }, context);
}

Result<net::HttpResponse> ProjectClient::Exchange(const std::string& method,
                                                  const std::string& path_and_query,
                                                  const std::string& body,
                                                  const std::string& hint_403) {
  net::HttpRequest request;
  request.method = method;
  request.url = base_ + path_and_query;
  request.headers["Accept"] = "application/json";
  if (!body.empty()) {
    request.body = body;
    request.content_type = "application/json";
  }
  auto response = Send(request, "request to the server");
  if (!response) return tl::unexpected(response.error());
  if (response->status < 200 || response->status >= 300) {
    return tl::unexpected(HttpError(*response, hint_403));
  }
  return response;
}

Result<json> ProjectClient::Call(const std::string& method, const std::string& path_and_query,
                                 const std::string& body, const std::string& hint_403) {
  auto response = Exchange(method, path_and_query, body, hint_403);
  if (!response) return tl::unexpected(response.error());
  if (response->status == 204) return json::object();
  json answer = json::parse(response->body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) {
    return MakeError(ErrorCode::kUnavailable, "the server's answer to " + method + " " +
                                                  net::RedactUrl(base_ + path_and_query) +
                                                  " is not a JSON object");
  }
  return answer;
}

Result<wire::Verdict> ProjectClient::AskVerdict(const std::string& run_id,
                                                const wire::VerdictRequest& body) {
  return PostForVerdict(run_id, "/verdict", wire::EncodeVerdictRequest(body).dump(),
                        "verdict request");
}

Result<wire::Verdict> ProjectClient::PostPairedVerdict(const std::string& run_id,
                                                       const wire::PairedMeasurement& measurement) {
  return PostForVerdict(run_id, "/verdict/paired", wire::EncodePairedMeasurement(measurement),
                        "paired measurement");
}

Result<wire::Verdict> ProjectClient::PostForVerdict(const std::string& run_id,
                                                    const std::string& route, std::string body,
                                                    const std::string& what) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = base_ + "/runs/" + run_id + route;
  request.body = std::move(body);
  request.content_type = "application/json";
  auto response = Send(request, what);
  if (!response) return tl::unexpected(response.error());
  if (response->status != 201 && response->status != 200) {
    return tl::unexpected(HttpError(*response, ""));
  }
  auto verdict = wire::DecodeVerdict(response->body);
  if (verdict && (!verdict->report_url || verdict->report_url->empty())) {
    verdict->report_url = root_ + "/#/p/" + project_ + "/runs/" + run_id + "/verdict";
  }
  return verdict;
}

namespace {

// A decoded answer, or kUnavailable (the server misbehaved: exit 3) naming what was unreadable.
template <class T>
Result<T> ServerAnswer(Result<T> decoded, const std::string& what) {
  if (decoded) return decoded;
  return MakeError(ErrorCode::kUnavailable,
                   "the server's " + what + " is unreadable (" + decoded.error().ToString() + ")");
}

// The answer `decode` makes of a call's JSON, or the call's error.
template <class T>
Result<T> Answer(Result<json> answer, Result<T> (*decode)(const json&), const std::string& what) {
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(decode(*answer), "answer to " + what);
}

// "?state=open&kind=regression&...&limit=50&cursor=c2", without the filters left out; `paging`
// false keeps only the kind and series filters (the summary's).
std::string AlertQueryString(const AlertQuery& query, bool paging) {
  std::vector<std::pair<std::string, std::string>> params = {
      {"kind", query.kind},   {"branch", query.branch},       {"testbed", query.testbed},
      {"suite", query.suite}, {"benchmark", query.benchmark}, {"metric", query.metric}};
  if (paging) {
    params.insert(params.begin(), {"state", query.state});
    params.push_back({"limit", query.limit > 0 ? std::to_string(query.limit) : ""});
    params.push_back({"cursor", query.cursor});
  }
  std::string out;
  for (const auto& [name, value] : params) {
    if (value.empty()) continue;
    out += (out.empty() ? "?" : "&") + name + "=" + EscapePathSegment(value);
  }
  return out;
}

}  // namespace

// --- Bisects ----------------------------------------------------------------------------------

Result<wire::Bisect> ProjectClient::StoreBisect(const wire::BisectReportUpload& upload) {
  return Answer(Call("POST", "/bisects", wire::EncodeBisectReportUpload(upload).dump()),
                &wire::DecodeBisect, "POST .../bisects");
}

Result<wire::Bisect> ProjectClient::QueueBisect(const wire::RemoteBisectRequest& request) {
  return Answer(Call("POST", "/bisects", wire::EncodeRemoteBisectRequest(request).dump()),
                &wire::DecodeBisect, "POST .../bisects");
}

Result<wire::Bisect> ProjectClient::GetBisect(int64_t id) {
  const std::string path = "/bisects/" + std::to_string(id);
  return Answer(Call("GET", path, ""), &wire::DecodeBisect, "GET ..." + path);
}

Result<std::optional<wire::ClaimedStep>> ProjectClient::ClaimBisectStep(
    const wire::StepClaimRequest& claim) {
  auto answer = Call("POST", "/bisect-steps/claim", wire::EncodeStepClaimRequest(claim).dump());
  if (!answer) return tl::unexpected(answer.error());
  if (!answer->contains(wire::kStepEnvelope)) return std::nullopt;  // 204: nothing queued
  auto step = Answer(std::move(answer), &wire::DecodeClaimedStep, "POST .../bisect-steps/claim");
  if (!step) return tl::unexpected(step.error());
  return std::optional<wire::ClaimedStep>(std::move(*step));
}

Result<wire::StepLease> ProjectClient::RenewBisectStep(int64_t step_id,
                                                       const wire::StepHeartbeat& heartbeat) {
  const std::string path = "/bisect-steps/" + std::to_string(step_id) + "/heartbeat";
  return Answer(Call("POST", path, wire::EncodeStepHeartbeat(heartbeat).dump()),
                &wire::DecodeStepLease, "POST ..." + path);
}

Result<wire::Bisect> ProjectClient::ReportBisectStep(int64_t step_id,
                                                     const wire::StepReport& report) {
  const std::string path = "/bisect-steps/" + std::to_string(step_id) + "/result";
  return Answer(Call("POST", path, wire::EncodeStepReport(report).dump()), &wire::DecodeBisect,
                "POST ..." + path);
}

// --- alerts ----------------------------------------------------------------------------------

Result<wire::AlertPage> ProjectClient::ListAlerts(const AlertQuery& query, bool all_pages) {
  wire::AlertPage merged;
  AlertQuery page_query = query;
  std::set<std::string> seen_cursors;
  for (int page = 0; page < kMaxAlertPages; ++page) {
    auto answer = Exchange("GET", "/alerts" + AlertQueryString(page_query, true), "", "");
    if (!answer) return tl::unexpected(answer.error());
    auto decoded = ServerAnswer(wire::DecodeAlertPage(answer->body), "alert page");
    if (!decoded) return tl::unexpected(decoded.error());
    for (wire::Alert& a : decoded->alerts) merged.alerts.push_back(std::move(a));
    merged.next_cursor = decoded->next_cursor;
    if (merged.next_cursor && merged.next_cursor->empty()) merged.next_cursor.reset();
    if (!merged.next_cursor || !all_pages || !seen_cursors.insert(*merged.next_cursor).second) {
      break;
    }
    page_query.cursor = *merged.next_cursor;
  }
  return merged;
}

Result<wire::AlertSummary> ProjectClient::SummarizeAlerts(const AlertQuery& query) {
  auto answer = Exchange("GET", "/alert-summary" + AlertQueryString(query, false), "", "");
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(wire::DecodeAlertSummary(answer->body), "alert summary");
}

Result<wire::AlertDetail> ProjectClient::GetAlert(const std::string& id) {
  auto answer = Exchange("GET", "/alerts/" + id, "", "");
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(wire::DecodeAlertDetail(answer->body), "alert " + id);
}

Result<wire::Alert> ProjectClient::UpdateAlert(const std::string& id,
                                               const wire::AlertUpdate& update) {
  auto answer = Exchange("PATCH", "/alerts/" + id, wire::EncodeAlertUpdate(update).dump(),
                         "changing an alert's state needs a token with the triage or admin scope");
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(wire::DecodeAlert(answer->body), "alert " + id);
}

// --- alert groups ----------------------------------------------------------------------------

Result<wire::AlertGroupPage> ProjectClient::ListAlertGroups(const AlertQuery& query) {
  std::string params;
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"state", query.state},
           {"branch", query.branch},
           {"limit", query.limit > 0 ? std::to_string(query.limit) : ""},
           {"cursor", query.cursor}}) {
    if (!value.empty())
      params += (params.empty() ? "?" : "&") + name + "=" + EscapePathSegment(value);
  }
  auto answer = Exchange("GET", "/alert-groups" + params, "", "");
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(wire::DecodeAlertGroupPage(answer->body), "alert group page");
}

Result<wire::AlertGroupDetail> ProjectClient::GetAlertGroup(const std::string& id) {
  auto answer = Exchange("GET", "/alert-groups/" + id, "", "");
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(wire::DecodeAlertGroupDetail(answer->body), "alert group " + id);
}

Result<wire::AlertGroupDetail> ProjectClient::UpdateAlertGroup(const std::string& id,
                                                               const wire::AlertUpdate& update) {
  auto answer =
      Exchange("PATCH", "/alert-groups/" + id, wire::EncodeAlertUpdate(update).dump(),
               "changing an alert group's state needs a token with the triage or admin scope");
  if (!answer) return tl::unexpected(answer.error());
  return ServerAnswer(wire::DecodeAlertGroupDetail(answer->body), "alert group " + id);
}

}  // namespace perfwarden::client
