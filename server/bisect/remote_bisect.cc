#include "server/bisect/remote_bisect.h"

#include <openssl/rand.h>

#include <array>
#include <initializer_list>
#include <unordered_map>
#include <utility>

#include "bisect/report.h"
#include "wire/validate.h"

namespace perfgate::server::remote_bisect {
namespace {

using nlohmann::json;

// An optional string member: "" when absent or null.
Result<std::string> OptionalString(const json& object, const std::string& key,
                                   const std::string& field) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return InvalidArgument("must be a string", field);
  return it->get<std::string>();
}

Result<std::string> Sha(const json& object, const std::string& key, const std::string& field) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string() ||
      !wire::IsSha(it->get<std::string>(), wire::HexCase::kLower)) {
    return InvalidArgument("must be a full commit sha (40 lowercase hex digits)", field);
  }
  return it->get<std::string>();
}

Result<std::vector<bisect::CommitRef>> DecodeCommits(const json& body, const std::string& good,
                                                     const std::string& bad) {
  auto it = body.find("commits");
  if (it == body.end() || !it->is_array() || it->size() < 2 || it->size() > kMaxCommits) {
    return InvalidArgument("must be an array of 2.." + std::to_string(kMaxCommits) +
                               " commits, the good end first and the bad end last",
                           "commits");
  }
  std::vector<bisect::CommitRef> commits;
  commits.reserve(it->size());
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& c = (*it)[i];
    const std::string where = "commits[" + std::to_string(i) + "]";
    if (!c.is_object()) return InvalidArgument("must be an object", where);
    bisect::CommitRef commit;
    auto sha = Sha(c, "sha", where + ".sha");
    if (!sha) return tl::unexpected(sha.error());
    auto subject = OptionalString(c, "subject", where + ".subject");
    if (!subject) return tl::unexpected(subject.error());
    auto author = OptionalString(c, "author", where + ".author");
    if (!author) return tl::unexpected(author.error());
    if (auto [at, inserted] = seen.emplace(*sha, i); !inserted) {
      return InvalidArgument("repeats commits[" + std::to_string(at->second) + "]", where + ".sha");
    }
    commits.push_back({std::move(*sha), std::move(*subject), std::move(*author)});
  }
  if (commits.front().sha != good) {
    return InvalidArgument("must be the good end (" + good + ")", "commits[0].sha");
  }
  if (commits.back().sha != bad) {
    return InvalidArgument("must be the bad end (" + bad + ")",
                           "commits[" + std::to_string(commits.size() - 1) + "].sha");
  }
  return commits;
}

Result<std::vector<std::string>> DecodeBenchmarks(const json& body) {
  auto it = body.find("benchmarks");
  if (it == body.end() || !it->is_array() || it->empty()) {
    return InvalidArgument("must be a non-empty array of benchmark names (the first is judged)",
                           "benchmarks");
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& name = (*it)[i];
    if (!name.is_string() || name.get<std::string>().empty()) {
      return InvalidArgument("must be a non-empty string", "benchmarks[" + std::to_string(i) + "]");
    }
    out.push_back(name.get<std::string>());
  }
  return out;
}

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

Result<RemoteBisect> Decode(const json& body) {
  static const std::initializer_list<std::string_view> kFields = {
      "remote", "testbed", "good",  "bad",     "commits", "benchmarks",
      "suite",  "metric",  "build", "options", "alert_id"};
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (std::string_view field : kFields) known = known || key == field;
    if (!known) {
      return InvalidArgument(
          "unknown field of a remote bisect (expected remote, testbed, good, bad, commits, "
          "benchmarks, suite, metric, build, options, alert_id)",
          key);
    }
  }
  RemoteBisect out;
  auto testbed = body.find("testbed");
  if (testbed == body.end() || !testbed->is_string() ||
      !wire::IsName(testbed->get<std::string>())) {
    return InvalidArgument("must be a testbed name: 1..200 characters from [A-Za-z0-9._/-]",
                           "testbed");
  }
  out.testbed = testbed->get<std::string>();
  auto good = Sha(body, "good", "good");
  if (!good) return tl::unexpected(good.error());
  auto bad = Sha(body, "bad", "bad");
  if (!bad) return tl::unexpected(bad.error());
  if (*good == *bad) return InvalidArgument("must differ from good", "bad");
  auto commits = DecodeCommits(body, *good, *bad);
  if (!commits) return tl::unexpected(commits.error());
  out.commits = std::move(*commits);
  auto benchmarks = DecodeBenchmarks(body);
  if (!benchmarks) return tl::unexpected(benchmarks.error());
  out.benchmarks = std::move(*benchmarks);
  for (auto [key, into] : {std::pair{"suite", &out.suite}, std::pair{"metric", &out.metric},
                           std::pair{"build", &out.build}}) {
    auto value = OptionalString(body, key, key);
    if (!value) return tl::unexpected(value.error());
    *into = std::move(*value);
  }
  if (auto options = body.find("options"); options != body.end() && !options->is_null()) {
    auto parsed = bisect::SearchOptionsFromJson(*options);
    if (!parsed) return tl::unexpected(parsed.error());
    out.options = *parsed;
  }
  if (auto alert = body.find("alert_id"); alert != body.end() && !alert->is_null()) {
    if (!alert->is_number_integer() || alert->get<int64_t>() <= 0) {
      return InvalidArgument("must be a positive integer", "alert_id");
    }
    out.alert_id = alert->get<int64_t>();
  }
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
  // The stored request is what Decode accepted, without the columns kept beside it.
  body["good"] = body["commits"].front().value("sha", "");
  body["bad"] = body["commits"].back().value("sha", "");
  body["testbed"] = "stored";
  auto decoded = Decode(body);
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
    // Without a culprit the report's warnings say why (the regression did not reproduce).
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

Result<json> ClaimJson(const store::ClaimedStep& step, const std::string& token) {
  auto job = FromRequestJson(step.bisect_request_json);
  if (!job) return tl::unexpected(job.error());
  auto request = ParseRequest(step.request_json);
  if (!request) return tl::unexpected(request.error());
  json commits = json::array();
  for (const std::size_t position : request->targets) {
    if (position >= job->commits.size()) {
      return MakeError(ErrorCode::kInternal, "a step targets position " + std::to_string(position) +
                                                 " of " + std::to_string(job->commits.size()));
    }
    const bisect::CommitRef& c = job->commits[position];
    commits.push_back({{"position", position}, {"sha", c.sha}, {"subject", c.subject}});
  }
  return json{{"id", step.id},
              {"bisect_id", step.bisect_id},
              {"ordinal", step.ordinal},
              {"token", token},
              {"lease_seconds", step.lease_seconds},
              {"lease_expires_at", step.lease_expires_at},
              {"attempt", step.attempt},
              {"request", bisect::RequestJson(*request)},
              {"commits", std::move(commits)},
              {"good", step.good_sha},
              {"bad", step.bad_sha},
              {"benchmarks", job->benchmarks},
              {"suite", job->suite},
              {"metric", job->metric},
              {"build", job->build}};
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

bool IsStepToken(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace perfgate::server::remote_bisect
