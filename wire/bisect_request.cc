// SPDX-License-Identifier: Apache-2.0
// The bodies the server reads, decoded strictly: an unknown key (a typo must not change a bisect
// silently) or a value out of range is kInvalidArgument naming the field, checked in the order
// the keys are listed in bisect.h.
#include <climits>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>

#include "wire/bisect.h"
#include "wire/json_check.h"
#include "wire/validate.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;

Result<void> CheckObject(const json& body) {
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  return {};
}

Result<void> OnlyKeys(const json& body, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : body.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || key == k;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return InvalidArgument("unknown key (known: " + list + ")", key);
  }
  return {};
}

// An optional string member: "" when absent or null.
Result<std::string> OptionalString(const json& object, std::string_view key,
                                   const std::string& field) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return InvalidArgument("must be a string", field);
  return it->get<std::string>();
}

Result<std::string> LowerSha(const json& object, std::string_view key, const std::string& field) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string() || !IsSha(it->get<std::string>(), HexCase::kLower)) {
    return InvalidArgument("must be a full commit sha (40 lowercase hex digits)", field);
  }
  return it->get<std::string>();
}

// A positive alert id, absent or null: none.
Result<std::optional<int64_t>> AlertId(const json& body) {
  const auto alert = body.find("alert_id");
  if (alert == body.end() || alert->is_null()) return std::optional<int64_t>();
  if (!alert->is_number_integer() || alert->get<int64_t>() <= 0) {
    return InvalidArgument("must be a positive integer", "alert_id");
  }
  return std::optional<int64_t>(alert->get<int64_t>());
}

// An integer member in [min, max]; nullopt when absent.
Result<std::optional<int64_t>> IntegerIn(const json& body, std::string_view key, int64_t min,
                                         int64_t max) {
  const auto it = body.find(key);
  if (it == body.end()) return std::optional<int64_t>();
  if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max) {
    return InvalidArgument(
        "must be an integer from " + std::to_string(min) + " to " + std::to_string(max),
        std::string(key));
  }
  return std::optional<int64_t>(it->get<int64_t>());
}

Result<std::string> StepToken(const json& body) {
  const auto it = body.find("token");
  if (it == body.end() || !it->is_string() || !IsStepToken(it->get<std::string>())) {
    return InvalidArgument("must be the step token the claim returned (32 hex digits)", "token");
  }
  return it->get<std::string>();
}

Result<std::vector<BisectCommit>> Commits(const json& body, const std::string& good,
                                          const std::string& bad) {
  const auto it = body.find("commits");
  if (it == body.end() || !it->is_array() || it->size() < 2 || it->size() > kMaxBisectCommits) {
    return InvalidArgument("must be an array of 2.." + std::to_string(kMaxBisectCommits) +
                               " commits, the good end first and the bad end last",
                           "commits");
  }
  std::vector<BisectCommit> commits;
  commits.reserve(it->size());
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& c = (*it)[i];
    const std::string where = ElementPath("commits", i);
    if (!c.is_object()) return InvalidArgument("must be an object", where);
    auto sha = LowerSha(c, "sha", where + ".sha");
    if (!sha) return tl::unexpected(sha.error());
    auto subject = OptionalString(c, "subject", where + ".subject");
    if (!subject) return tl::unexpected(subject.error());
    auto author = OptionalString(c, "author", where + ".author");
    if (!author) return tl::unexpected(author.error());
    if (auto [at, inserted] = seen.emplace(*sha, i); !inserted) {
      return InvalidArgument("repeats " + ElementPath("commits", at->second), where + ".sha");
    }
    commits.push_back({std::move(*sha), std::move(*subject), std::move(*author)});
  }
  if (commits.front().sha != good) {
    return InvalidArgument("must be the good end (" + good + ")", "commits[0].sha");
  }
  if (commits.back().sha != bad) {
    return InvalidArgument("must be the bad end (" + bad + ")",
                           ElementPath("commits", commits.size() - 1) + ".sha");
  }
  return commits;
}

Result<std::vector<std::string>> Benchmarks(const json& body) {
  const auto it = body.find("benchmarks");
  if (it == body.end() || !it->is_array() || it->empty()) {
    return InvalidArgument("must be a non-empty array of benchmark names (the first is judged)",
                           "benchmarks");
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& name = (*it)[i];
    if (!name.is_string() || name.get<std::string>().empty()) {
      return InvalidArgument("must be a non-empty string", ElementPath("benchmarks", i));
    }
    out.push_back(name.get<std::string>());
  }
  return out;
}

// The claim's testbed and agent: 1..200 characters.
Result<std::string> ShortName(const json& body, std::string_view key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_string() || it->get<std::string>().empty() ||
      it->get<std::string>().size() > 200) {
    return InvalidArgument("must be a string of 1..200 characters", std::string(key));
  }
  return it->get<std::string>();
}

}  // namespace

Result<NewBisect> DecodeNewBisect(const json& body) {
  if (auto object = CheckObject(body); !object) return tl::unexpected(object.error());
  if (auto remote = body.find("remote"); remote != body.end()) {
    if (!remote->is_boolean()) return InvalidArgument("must be true or false", "remote");
    if (remote->get<bool>()) {
      auto request = DecodeRemoteBisectRequest(body);
      if (!request) return tl::unexpected(request.error());
      return NewBisect(std::move(*request));
    }
  }
  auto upload = DecodeBisectReportUpload(body);
  if (!upload) return tl::unexpected(upload.error());
  return NewBisect(std::move(*upload));
}

Result<RemoteBisectRequest> DecodeRemoteBisectRequest(const json& body) {
  if (auto object = CheckObject(body); !object) return tl::unexpected(object.error());
  if (auto only = OnlyKeys(body, {"remote", "testbed", "good", "bad", "commits", "benchmarks",
                                  "suite", "metric", "build", "options", "alert_id"});
      !only) {
    return tl::unexpected(only.error());
  }
  if (auto remote = body.find("remote");
      remote != body.end() && !(remote->is_boolean() && remote->get<bool>())) {
    return InvalidArgument("must be true (a remote bisect)", "remote");
  }
  RemoteBisectRequest out;
  const auto testbed = body.find("testbed");
  if (testbed == body.end() || !testbed->is_string() || !IsName(testbed->get<std::string>())) {
    return InvalidArgument("must be a testbed name: 1..200 characters from [A-Za-z0-9._/-]",
                           "testbed");
  }
  out.testbed = testbed->get<std::string>();
  auto good = LowerSha(body, "good", "good");
  if (!good) return tl::unexpected(good.error());
  auto bad = LowerSha(body, "bad", "bad");
  if (!bad) return tl::unexpected(bad.error());
  if (*good == *bad) return InvalidArgument("must differ from good", "bad");
  out.good = std::move(*good);
  out.bad = std::move(*bad);
  auto commits = Commits(body, out.good, out.bad);
  if (!commits) return tl::unexpected(commits.error());
  out.commits = std::move(*commits);
  auto benchmarks = Benchmarks(body);
  if (!benchmarks) return tl::unexpected(benchmarks.error());
  out.benchmarks = std::move(*benchmarks);
  for (auto [key, into] : {std::pair{"suite", &out.suite}, std::pair{"metric", &out.metric},
                           std::pair{"build", &out.build}}) {
    auto value = OptionalString(body, key, key);
    if (!value) return tl::unexpected(value.error());
    *into = std::move(*value);
  }
  if (auto options = body.find("options"); options != body.end() && !options->is_null()) {
    if (!options->is_object()) return InvalidArgument("must be an object", "options");
    out.options = *options;
  }
  auto alert = AlertId(body);
  if (!alert) return tl::unexpected(alert.error());
  out.alert_id = *alert;
  return out;
}

Result<BisectReportUpload> DecodeBisectReportUpload(const json& body) {
  if (auto object = CheckObject(body); !object) return tl::unexpected(object.error());
  if (auto remote = body.find("remote");
      remote != body.end() && !(remote->is_boolean() && !remote->get<bool>())) {
    return InvalidArgument("must be false (a bisect's answer)", "remote");
  }
  // Lower case only, as the bisect_jobs table's CHECKs take them (and as git prints them).
  for (const char* field : {"good", "bad"}) {
    const auto it = body.find(field);
    if (it == body.end() || !it->is_string() || !IsSha(it->get<std::string>(), HexCase::kLower)) {
      return InvalidArgument("must be a full commit sha (40 lowercase hex digits)", field);
    }
  }
  const auto culprits = body.find("culprits");
  if (culprits == body.end() || !culprits->is_array()) {
    return InvalidArgument("must be an array (perfwarden bisect --format json)", "culprits");
  }
  for (std::size_t i = 0; i < culprits->size(); ++i) {
    const json& c = (*culprits)[i];
    if (!c.is_object() || !c.contains("sha") || !c["sha"].is_string() ||
        !IsSha(c["sha"].get<std::string>(), HexCase::kLower)) {
      return InvalidArgument("must be an object with a full commit sha (40 lowercase hex digits)",
                             ElementPath("culprits", i) + ".sha");
    }
  }
  auto alert = AlertId(body);
  if (!alert) return tl::unexpected(alert.error());
  BisectReportUpload out;
  out.report = body;
  out.report.erase("alert_id");
  out.alert_id = *alert;
  return out;
}

Result<StepClaimRequest> DecodeStepClaimRequest(const json& body) {
  if (auto object = CheckObject(body); !object) return tl::unexpected(object.error());
  if (auto only = OnlyKeys(body, {"testbed", "agent", "lease_seconds"}); !only) {
    return tl::unexpected(only.error());
  }
  StepClaimRequest out;
  auto testbed = ShortName(body, "testbed");
  if (!testbed) return tl::unexpected(testbed.error());
  out.testbed = std::move(*testbed);
  auto agent = ShortName(body, "agent");
  if (!agent) return tl::unexpected(agent.error());
  out.agent = std::move(*agent);
  auto lease = IntegerIn(body, "lease_seconds", kMinStepLease, kMaxStepLease);
  if (!lease) return tl::unexpected(lease.error());
  out.lease_seconds = *lease;
  return out;
}

Result<StepHeartbeat> DecodeStepHeartbeat(const json& body) {
  if (auto object = CheckObject(body); !object) return tl::unexpected(object.error());
  if (auto only = OnlyKeys(body, {"token", "lease_seconds"}); !only) {
    return tl::unexpected(only.error());
  }
  StepHeartbeat out;
  auto token = StepToken(body);
  if (!token) return tl::unexpected(token.error());
  out.token = std::move(*token);
  auto lease = IntegerIn(body, "lease_seconds", kMinStepLease, kMaxStepLease);
  if (!lease) return tl::unexpected(lease.error());
  out.lease_seconds = *lease;
  return out;
}

Result<StepReport> DecodeStepReport(const json& body) {
  if (auto object = CheckObject(body); !object) return tl::unexpected(object.error());
  if (auto only = OnlyKeys(body, {"token", "measurement", "builds", "runs", "error"}); !only) {
    return tl::unexpected(only.error());
  }
  StepReport out;
  auto token = StepToken(body);
  if (!token) return tl::unexpected(token.error());
  out.token = std::move(*token);
  const auto measurement = body.find("measurement");
  const auto error = body.find("error");
  if ((measurement == body.end()) == (error == body.end())) {
    return InvalidArgument("give either a measurement or an error", "measurement");
  }
  if (error != body.end()) {
    if (!error->is_string() || error->get<std::string>().empty()) {
      return InvalidArgument("must be a non-empty string (why the step failed)", "error");
    }
    out.error = error->get<std::string>();
    return out;
  }
  out.measurement = *measurement;
  for (auto [key, into] : {std::pair{"builds", &out.builds}, std::pair{"runs", &out.runs}}) {
    auto count = IntegerIn(body, key, 0, INT_MAX);
    if (!count) return tl::unexpected(count.error());
    *into = *count;
  }
  return out;
}

}  // namespace perfwarden::wire
