// SPDX-License-Identifier: Apache-2.0
#include "runner/client/uploader.h"

#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "wire/error.h"

namespace perfwarden::client {
namespace {

using nlohmann::json;

constexpr size_t kBodyExcerpt = 2000;  // of a non-JSON error body, in messages and error files

// The "project" of an upload; an error message when there is none to read.
Result<std::string> ProjectOf(const std::string& upload_json) {
  const json upload = json::parse(upload_json, nullptr, /*allow_exceptions=*/false);
  if (upload.is_discarded()) return InvalidArgument("the spooled upload is not valid JSON");
  if (!upload.is_object()) return InvalidArgument("the spooled upload is not a JSON object");
  auto project = upload.find("project");
  if (project == upload.end() || !project->is_string() || project->get<std::string>().empty()) {
    return InvalidArgument("the spooled upload has no \"project\" string", "project");
  }
  return project->get<std::string>();
}

// "HTTP 400 INVALID_ARGUMENT: message (field: results[0].values)" from the server's error body
// (wire/error.h); the raw body (shortened) when it is not one.
std::string DescribeAnswer(const net::HttpResponse& response) {
  std::string text = "HTTP " + std::to_string(response.status);
  if (Result<wire::ErrorBody> body = wire::DecodeErrorBody(response.body)) {
    if (!body->code.empty()) text += " " + body->code;
    if (!body->message.empty()) text += ": " + body->message;
    if (!body->field.empty()) text += " (field: " + body->field + ")";
    return text;
  }
  if (!response.body.empty()) text += ": " + response.body.substr(0, kBodyExcerpt);
  return text;
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// What rejected/<id>.error.txt holds: enough for a human to see why without the server's logs.
std::string RejectionText(const std::string& run_id, const std::string& url, const std::string& why,
                          const std::string& body) {
  std::string text = "run " + run_id + " rejected at " + UtcNow() + "\n";
  if (!url.empty()) text += "url: " + url + "\n";
  text += "reason: " + why + "\n";
  if (!body.empty()) text += "response body: " + body.substr(0, kBodyExcerpt) + "\n";
  return text;
}

std::string Counts(const PushReport& report, size_t left) {
  return std::to_string(report.sent) + " sent, " + std::to_string(report.already_present) +
         " already stored, " + std::to_string(report.rejected) + " rejected, " +
         std::to_string(left) + " still spooled";
}

}  // namespace

std::string EscapePathSegment(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string escaped;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
        (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' || c == '~') {
      escaped += c;
    } else {
      escaped += '%';
      escaped += kHex[byte >> 4];
      escaped += kHex[byte & 0xF];
    }
  }
  return escaped;
}

std::string RunsUrl(const std::string& server_url, const std::string& project) {
  std::string base = server_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/api/v1/projects/" + EscapePathSegment(project) + "/runs";
}

Result<PushReport> PushAll(Spool& spool, net::HttpClient& http, const std::string& server_url,
                           const std::string& token, const net::RetryPolicy& policy,
                           const PushProgress& progress, const PushOptions& options) {
  auto lock = spool.Lock(options.lock_timeout);
  if (!lock) return tl::unexpected(lock.error());
  auto listed = spool.List();
  if (!listed) return tl::unexpected(listed.error());

  PushReport report;
  size_t kept = 0;
  std::string last_kept;  // why the last kept upload was kept
  const auto tell = [&](PushEvent::Kind kind, const std::string& run_id, std::string message) {
    if (progress) progress(PushEvent{kind, run_id, std::move(message)});
  };
  // Stops the push: `left` uploads (this one included) stay spooled.
  const auto stop = [&](ErrorCode code, const std::string& why, size_t left,
                        std::string field = {}) -> tl::unexpected<Error> {
    return MakeError(code, why + " (" + Counts(report, left + kept) + ")", std::move(field));
  };
  const auto reject = [&](const std::string& run_id, const std::string& why,
                          const std::string& text) -> Result<void> {
    if (auto moved = spool.MarkRejected(run_id, text); !moved) return moved;
    ++report.rejected;
    report.messages.push_back("run " + run_id + " rejected: " + why);
    tell(PushEvent::Kind::kRejected, run_id, why);
    return {};
  };

  for (size_t i = 0; i < listed->size(); ++i) {
    const std::string& run_id = (*listed)[i].run_id;
    const size_t left = listed->size() - i;
    auto upload = spool.Read(run_id);
    if (!upload && upload.error().code == ErrorCode::kNotFound) continue;  // removed by hand
    if (!upload) return stop(upload.error().code, upload.error().message, left);
    auto project = ProjectOf(*upload);
    if (!project) {
      const std::string why = project.error().message;
      if (auto moved = reject(run_id, why, RejectionText(run_id, "", why, "")); !moved) {
        return stop(moved.error().code, moved.error().message, left);
      }
      continue;
    }

    net::HttpRequest request;
    request.method = "POST";
    request.url = RunsUrl(server_url, *project);
    request.body = std::move(*upload);
    request.content_type = "application/json";
    request.bearer_token = token;
    net::RetryContext retry;
    retry.sleep = options.sleep;
    // A different jitter sequence per upload, still reproducible from the one seed.
    retry.seed = options.seed + 0x9e3779b97f4a7c15ULL * (i + 1);
    retry.on_retry = [&](const net::RetryNotice& notice) {
      tell(PushEvent::Kind::kRetrying, run_id,
           "attempt " + std::to_string(notice.attempt) + "/" + std::to_string(notice.max_attempts) +
               " failed (" + notice.reason + "); retrying in " +
               std::to_string(notice.delay.count()) + " ms");
    };
    const auto send = [&] { return http.Send(request); };
    auto answer = net::CallWithRetry(policy, send, retry);
    if (!answer) {
      const Error& error = answer.error();
      if (error.code == ErrorCode::kInvalidArgument) {
        return stop(error.code, "bad server URL: " + error.message, left, "server_url");
      }
      if (error.code != ErrorCode::kUnavailable) return stop(error.code, error.message, left);
      return stop(error.code, "server unreachable, results stay spooled: " + error.message, left);
    }

    const int status = answer->status;
    if (status == 201 || status == 200) {
      if (auto removed = spool.Remove(run_id); !removed) {
        return stop(removed.error().code, removed.error().message, left);
      }
      ++(status == 201 ? report.sent : report.already_present);
      tell(status == 201 ? PushEvent::Kind::kSent : PushEvent::Kind::kAlreadyPresent, run_id, "");
    } else if (status == 401 || status == 403) {
      return stop(wire::CodeOfStatus(status),
                  "the server refused the token: " + DescribeAnswer(*answer), left);
    } else if (status == 404) {
      // No such project, or a server URL with a wrong path: a setup error that every upload
      // would hit, so stop and keep them all rather than reject them one by one.
      return stop(wire::CodeOfStatus(status),
                  "the server has no such project or path (check server.url and "
                  "server.project): " +
                      DescribeAnswer(*answer),
                  left, "server_url");
    } else if (status >= 400 && status < 500 && !net::IsRetryableStatus(status)) {
      const std::string why = DescribeAnswer(*answer);
      if (auto moved = reject(run_id, why, RejectionText(run_id, request.url, why, answer->body));
          !moved) {
        return stop(moved.error().code, moved.error().message, left);
      }
    } else if (net::IsRetryableStatus(status) && status != 500) {
      return stop(ErrorCode::kUnavailable,
                  "server unavailable, results stay spooled: " + DescribeAnswer(*answer), left);
    } else if (status >= 300 && status < 400) {
      auto location = answer->headers.find("location");
      return stop(ErrorCode::kInvalidArgument,
                  "the server answered HTTP " + std::to_string(status) + " (redirect" +
                      (location == answer->headers.end() ? "" : " to " + location->second) +
                      "); perfwarden follows no redirects: fix the server URL",
                  left, "server_url");
    } else {
      ++kept;
      last_kept = "run " + run_id + " kept in the spool: " + DescribeAnswer(*answer);
      report.messages.push_back(last_kept);
      tell(PushEvent::Kind::kKept, run_id, DescribeAnswer(*answer));
    }
  }

  auto after = spool.List();
  if (!after) return tl::unexpected(after.error());
  if (kept > 0) {
    return MakeError(ErrorCode::kUnavailable, "the server failed to store " + std::to_string(kept) +
                                                  " upload(s); they stay spooled (" +
                                                  Counts(report, kept) + "); last: " + last_kept);
  }
  report.remaining = after->size();
  return report;
}

}  // namespace perfwarden::client
