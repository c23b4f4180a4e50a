#include "runner/client/project_client.h"

#include <iostream>
#include <random>

#include "net/retry.h"
#include "runner/client/uploader.h"
#include "wire/error.h"

namespace perfgate::client {

using nlohmann::json;

// Alert ids are positive integers; checked before anything is loaded or sent.
Result<void> CheckId(const std::string& id) {
  const bool digits = !id.empty() && id.size() <= 18 &&
                      id.find_first_not_of("0123456789") == std::string::npos &&
                      id.find_first_not_of('0') != std::string::npos;
  if (!digits) {
    return InvalidArgument("'" + id +
                               "' is not an alert id (alert ids are positive integers: the ID "
                               "column of `perfgate alerts list`)",
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
    std::cerr << "perfgate: " << what << " failed (" << notice.reason << "); retrying\n";
  };
  return net::CallWithRetry(
      net::RetryPolicy{}, [&] { return http_.Send(request); }, context);
}

Result<json> ProjectClient::Call(const std::string& method, const std::string& path_and_query,
                                 const std::string& body, const std::string& hint_403) {
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
  if (response->status < 200 || response->status >= 300)
    return tl::unexpected(HttpError(*response, hint_403));
  if (response->status == 204) return json::object();
  json answer = json::parse(response->body, nullptr, false);
  if (answer.is_discarded() || !answer.is_object()) {
    return MakeError(ErrorCode::kUnavailable, "the server's answer to " + method + " " +
                                                  net::RedactUrl(request.url) +
                                                  " is not a JSON object");
  }
  return answer;
}

Result<wire::Verdict> ProjectClient::AskVerdict(const std::string& run_id,
                                                const wire::VerdictRequest& body) {
  net::HttpRequest request;
  request.method = "POST";
  request.url = base_ + "/runs/" + run_id + "/verdict";
  request.body = wire::EncodeVerdictRequest(body).dump();
  request.content_type = "application/json";
  auto response = Send(request, "verdict request");
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

// --- Bisects ----------------------------------------------------------------------------------

namespace {

// The decoded answer, or kUnavailable: the server answered, but not with the documented message.
template <class T>
Result<T> Answer(Result<json> answer, Result<T> (*decode)(const json&), const std::string& what) {
  if (!answer) return tl::unexpected(answer.error());
  auto decoded = decode(*answer);
  if (!decoded) {
    const Error& e = decoded.error();
    return MakeError(ErrorCode::kUnavailable,
                     "the server's answer to " + what +
                         " is not valid: " + (e.field.empty() ? "" : e.field + ": ") + e.message);
  }
  return decoded;
}

}  // namespace

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

}  // namespace perfgate::client
