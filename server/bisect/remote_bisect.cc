// SPDX-License-Identifier: Apache-2.0
#include "server/bisect/remote_bisect.h"

#include <openssl/rand.h>

#include <array>
#include <utility>

#include "bisect/report.h"

namespace perfwarden::server::remote_bisect {
namespace {

using nlohmann::json;

Result<bisect::Measurement> ParseMeasurement(const std::string& text) {
  return bisect::MeasurementFromJson(json::parse(text, nullptr, false));
}

Result<bisect::Request> ParseRequest(const std::string& text) {
  auto request = bisect::RequestFromJson(json::parse(text, nullptr, false));
  if (!request) {
    return MakeError(ErrorCode::kInternal, "a stored step request: " + request.error().message);
  }
  return request;
}

// The bisect replayed over its done steps: finished, or pending with the next request.
Result<bisect::Outcome> Replay(const RemoteBisect& job, const std::vector<store::DoneStep>& done) {
  std::vector<bisect::Measurement> log;
  log.reserve(done.size());
  int64_t builds = 0, runs = 0;
  for (const store::DoneStep& step : done) {
    auto measurement = ParseMeasurement(step.result_json);
    if (!measurement) return tl::unexpected(measurement.error());
    log.push_back(std::move(*measurement));
    builds += step.builds;
    runs += step.runs;
  }
  auto outcome = bisect::RunSearch(job.commits, job.options, &log, {}, {});
  if (!outcome) return outcome;
  outcome->report.benchmarks = job.benchmarks;
  outcome->report.builds = static_cast<int>(builds);
  outcome->report.runs = static_cast<int>(runs);
  return outcome;
}

// The reported measurement belongs to its step and to this bisect: its request is the step's,
// and its suite, metric and direction those of the bisect (as queued, and as first measured).
Result<void> CheckReported(const RemoteBisect& job, const store::BisectReplayInput& input) {
  const store::DoneStep& last = input.done.back();
  auto reported = ParseMeasurement(last.result_json);
  if (!reported) return tl::unexpected(reported.error());
  auto asked = ParseRequest(last.request_json);
  if (!asked) return tl::unexpected(asked.error());
  if (!(reported->request == *asked)) {
    return InvalidArgument("is " + bisect::RequestJson(reported->request).dump() +
                               ", but the step asks for " + bisect::RequestJson(*asked).dump(),
                           "measurement.request");
  }
  std::string suite = job.suite, metric = job.metric;
  std::optional<Direction> direction;
  if (input.done.size() > 1) {
    auto first = ParseMeasurement(input.done.front().result_json);
    if (!first) return tl::unexpected(first.error());
    suite = first->suite;
    metric = first->metric;
    direction = first->direction;
  }
  if (!suite.empty() && reported->suite != suite) {
    return InvalidArgument("is \"" + reported->suite + "\", the bisect measures \"" + suite + "\"",
                           "measurement.suite");
  }
  if (!metric.empty() && reported->metric != metric) {
    return InvalidArgument(
        "is \"" + reported->metric + "\", the bisect measures \"" + metric + "\"",
        "measurement.metric");
  }
  if (direction && reported->direction != *direction) {
    return InvalidArgument("differs from the bisect's first measurement", "measurement.direction");
  }
  return {};
}

json Object(const bisect::Report& report) { return json(bisect::ReportJson(report)); }

}  // namespace

Result<RemoteBisect> FromWire(const wire::RemoteBisectRequest& request) {
  RemoteBisect out;
  out.testbed = request.testbed;
  out.commits.reserve(request.commits.size());
  for (const wire::BisectCommit& c : request.commits) {
    out.commits.push_back({c.sha, c.subject, c.author});
  }
  out.benchmarks = request.benchmarks;
  out.suite = request.suite;
  out.metric = request.metric;
  out.build = request.build;
  if (request.options) {
    auto options = bisect::SearchOptionsFromJson(*request.options);
    if (!options) return tl::unexpected(options.error());
    out.options = *options;
  }
  out.alert_id = request.alert_id;
  return out;
}

json RequestJson(const RemoteBisect& bisect) {
  json commits = json::array();
  for (const bisect::CommitRef& c : bisect.commits) {
    commits.push_back({{"sha", c.sha}, {"subject", c.subject}, {"author", c.author}});
  }
  return {{"commits", std::move(commits)},   {"options", bisect::SearchOptionsJson(bisect.options)},
          {"benchmarks", bisect.benchmarks}, {"suite", bisect.suite},
          {"metric", bisect.metric},         {"build", bisect.build}};
}

Result<RemoteBisect> FromRequestJson(std::string_view text) {
  json body = json::parse(text, nullptr, false);
  auto broken = [](const std::string& why) {
    return MakeError(ErrorCode::kInternal, "a stored remote bisect request: " + why);
  };
  if (!body.is_object() || !body.contains("commits") || !body["commits"].is_array() ||
      body["commits"].size() < 2) {
    return broken("no commits");
  }
  // The stored request is what the queue accepted, without the columns kept beside it.
  body["good"] = body["commits"].front().value("sha", "");
  body["bad"] = body["commits"].back().value("sha", "");
  body["testbed"] = "stored";
  auto request = wire::DecodeRemoteBisectRequest(body);
  auto decoded =
      request ? FromWire(*request) : Result<RemoteBisect>(tl::unexpected(request.error()));
  if (!decoded) return broken(decoded.error().field + ": " + decoded.error().message);
  decoded->testbed.clear();
  return decoded;
}

Result<store::NewRemoteBisect> Prepare(const RemoteBisect& bisect, const std::string& created_by) {
  std::vector<bisect::Measurement> log;
  auto outcome = bisect::RunSearch(bisect.commits, bisect.options, &log, {}, {});
  if (!outcome) return tl::unexpected(outcome.error());
  if (outcome->finished || !outcome->pending) {
    return MakeError(ErrorCode::kInternal, "the bisect asks for no first measurement");
  }
  store::NewRemoteBisect out;
  out.alert_id = bisect.alert_id;
  out.good_sha = bisect.good();
  out.bad_sha = bisect.bad();
  out.testbed = bisect.testbed;
  out.request_json = RequestJson(bisect).dump();
  out.first_step_json = bisect::RequestJson(*outcome->pending).dump();
  out.created_by = created_by;
  return out;
}

Result<store::BisectDecision> Decide(const store::BisectReplayInput& input) {
  if (input.done.empty()) return MakeError(ErrorCode::kInternal, "a replay without steps");
  auto job = FromRequestJson(input.request_json);
  if (!job) return tl::unexpected(job.error());
  if (auto checked = CheckReported(*job, input); !checked) return tl::unexpected(checked.error());
  store::BisectDecision decision;
  auto outcome = Replay(*job, input.done);
  if (!outcome) {
    // An end that does not build or run: no agent can get further, the bisect is over.
    if (outcome.error().code != ErrorCode::kUnavailable) return tl::unexpected(outcome.error());
    decision.state = "failed";
    decision.error = outcome.error().message;
    return decision;
  }
  if (outcome->finished) {
    const bisect::Report& report = outcome->report;
    // Without a culprit the report says why: its endpoints' outcome (the regression did not
    // reproduce, or the ends stayed undecided at the repetition cap, with the figures).
    decision.state = report.culprits.empty() ? "failed" : "succeeded";
    decision.report_json = bisect::ReportJson(report).dump();
    if (!report.culprits.empty()) decision.culprit_sha = report.culprits.front().sha;
    return decision;
  }
  if (!outcome->pending) return MakeError(ErrorCode::kInternal, "the bisect asks for nothing");
  decision.state = "running";
  decision.next_request_json = bisect::RequestJson(*outcome->pending).dump();
  return decision;
}

Result<std::optional<json>> Progress(const store::BisectRecord& record) {
  if (record.testbed.empty() || (record.state != "pending" && record.state != "running")) {
    return std::nullopt;
  }
  auto job = FromRequestJson(record.request_json);
  if (!job) return tl::unexpected(job.error());
  std::vector<store::DoneStep> done;
  for (const store::BisectStepRecord& step : record.steps) {
    if (step.state != "done") continue;
    done.push_back({step.ordinal, step.request_json, step.result_json, step.builds, step.runs});
  }
  auto outcome = Replay(*job, done);
  if (!outcome) return tl::unexpected(outcome.error());
  json progress = Object(outcome->report);
  if (outcome->pending) progress["pending"] = bisect::RequestJson(*outcome->pending);
  return progress;
}

Result<wire::ClaimedStep> ClaimedStepOf(const store::ClaimedStep& step, const std::string& token) {
  auto job = FromRequestJson(step.bisect_request_json);
  if (!job) return tl::unexpected(job.error());
  auto request = ParseRequest(step.request_json);
  if (!request) return tl::unexpected(request.error());
  wire::ClaimedStep out;
  for (const std::size_t position : request->targets) {
    if (position >= job->commits.size()) {
      return MakeError(ErrorCode::kInternal, "a step targets position " + std::to_string(position) +
                                                 " of " + std::to_string(job->commits.size()));
    }
    const bisect::CommitRef& c = job->commits[position];
    out.commits.push_back({static_cast<int64_t>(position), c.sha, c.subject});
  }
  out.id = step.id;
  out.bisect_id = step.bisect_id;
  out.ordinal = step.ordinal;
  out.token = token;
  out.lease_seconds = step.lease_seconds;
  out.lease_expires_at = step.lease_expires_at;
  out.attempt = step.attempt;
  out.request = bisect::RequestJson(*request);
  out.good = step.good_sha;
  out.bad = step.bad_sha;
  out.benchmarks = job->benchmarks;
  out.suite = job->suite;
  out.metric = job->metric;
  out.build = job->build;
  return out;
}

Result<std::string> NewStepToken() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return MakeError(ErrorCode::kInternal, "the random generator failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

}  // namespace perfwarden::server::remote_bisect
