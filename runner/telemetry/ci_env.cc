// SPDX-License-Identifier: Apache-2.0
#include "runner/telemetry/ci_env.h"

#include <charconv>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

namespace perfwarden::telemetry {
namespace {

// Reads variables with "empty means unset" applied once, here.
class Env {
 public:
  explicit Env(const GetEnv& getenv) : getenv_(getenv) {}

  std::string Get(const std::string& name) const {
    if (!getenv_) return {};
    return getenv_(name).value_or("");
  }
  bool Is(const std::string& name, std::string_view value) const { return Get(name) == value; }

  // Copies variables into extra under their short names, skipping unset ones.
  void CopyExtras(std::initializer_list<std::pair<const char*, const char*>> names,
                  CiMetadata& ci) const {
    for (const auto& [key, variable] : names) {
      if (std::string value = Get(variable); !value.empty()) ci.extra[key] = std::move(value);
    }
  }

 private:
  const GetEnv& getenv_;
};

// A PR or MR number: a positive decimal integer, nothing else.
std::optional<std::int64_t> PositiveInteger(std::string_view text) {
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 1) {
    return std::nullopt;
  }
  return value;
}

CiMetadata GitHub(const Env& env) {
  CiMetadata ci;
  ci.provider = "github";
  std::string server = env.Get("GITHUB_SERVER_URL");
  if (server.empty()) server = "https://github.com";  // older runners did not set it
  const std::string repository = env.Get("GITHUB_REPOSITORY");
  if (!repository.empty()) ci.repository_url = server + "/" + repository;
  ci.run_id = env.Get("GITHUB_RUN_ID");
  if (!repository.empty() && !ci.run_id.empty()) {
    ci.job_url = ci.repository_url + "/actions/runs/" + ci.run_id;
    // A re-run keeps the run id; without the attempt the link shows the latest attempt.
    const std::string attempt = env.Get("GITHUB_RUN_ATTEMPT");
    if (auto n = PositiveInteger(attempt); n && *n > 1) ci.job_url += "/attempts/" + attempt;
  }
  // pull_request events check out refs/pull/N/merge. pull_request_target runs on the base
  // branch's ref, so its PR number is only in the event payload and stays unknown here.
  const std::string ref = env.Get("GITHUB_REF");
  constexpr std::string_view kPullPrefix = "refs/pull/";
  if (ref.starts_with(kPullPrefix)) {
    const std::string_view rest = std::string_view(ref).substr(kPullPrefix.size());
    const std::string_view number = rest.substr(0, rest.find('/'));
    const std::string_view tail = rest.substr(number.size());
    if (tail == "/merge" || tail == "/head") ci.pr = PositiveInteger(number);
  }
  // For a PR, GITHUB_REF_NAME is "N/merge"; the source branch is GITHUB_HEAD_REF.
  ci.branch = env.Get("GITHUB_HEAD_REF");
  if (ci.branch.empty()) ci.branch = env.Get("GITHUB_REF_NAME");
  ci.target_branch = env.Get("GITHUB_BASE_REF");
  ci.commit_sha = env.Get("GITHUB_SHA");
  env.CopyExtras({{"workflow", "GITHUB_WORKFLOW"},
                  {"job", "GITHUB_JOB"},
                  {"event_name", "GITHUB_EVENT_NAME"},
                  {"run_number", "GITHUB_RUN_NUMBER"},
                  {"run_attempt", "GITHUB_RUN_ATTEMPT"},
                  {"runner_name", "RUNNER_NAME"}},
                 ci);
  return ci;
}

CiMetadata GitLab(const Env& env) {
  CiMetadata ci;
  ci.provider = "gitlab";
  ci.job_url = env.Get("CI_JOB_URL");
  ci.pr = PositiveInteger(env.Get("CI_MERGE_REQUEST_IID"));
  // CI_COMMIT_BRANCH is not set in merge request pipelines, the source branch name only there.
  ci.branch = env.Get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME");
  if (ci.branch.empty()) ci.branch = env.Get("CI_COMMIT_BRANCH");
  ci.target_branch = env.Get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME");
  ci.commit_sha = env.Get("CI_COMMIT_SHA");
  ci.repository_url = env.Get("CI_PROJECT_URL");
  ci.run_id = env.Get("CI_PIPELINE_ID");
  env.CopyExtras({{"pipeline_url", "CI_PIPELINE_URL"},
                  {"pipeline_source", "CI_PIPELINE_SOURCE"},
                  {"job_id", "CI_JOB_ID"},
                  {"job_name", "CI_JOB_NAME"},
                  {"runner_description", "CI_RUNNER_DESCRIPTION"},
                  {"head_sha", "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"},
                  {"diff_base_sha", "CI_MERGE_REQUEST_DIFF_BASE_SHA"}},
                 ci);
  return ci;
}

}  // namespace

CiMetadata DetectCi(const GetEnv& getenv) {
  const Env env(getenv);
  if (env.Is("GITHUB_ACTIONS", "true")) return GitHub(env);
  if (env.Is("GITLAB_CI", "true")) return GitLab(env);
  // Most CI systems set CI=true; some (AppVeyor) "True", a few "1".
  if (env.Is("CI", "true") || env.Is("CI", "True") || env.Is("CI", "1")) {
    CiMetadata ci;
    ci.provider = "ci";
    return ci;
  }
  return {};
}

CiMetadata DetectCi() {
  return DetectCi([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

std::string ToJson(const CiMetadata& ci) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  const auto text = [&](const char* key, const std::string& value) {
    if (!value.empty()) json[key] = value;
  };
  text("provider", ci.provider);
  text("job_url", ci.job_url);
  if (ci.pr) json["pr"] = *ci.pr;
  text("run_id", ci.run_id);
  text("repository_url", ci.repository_url);
  for (const auto& [key, value] : ci.extra) {
    // The fixed keys mean what the wire format says; an extra cannot redefine them.
    if (value.empty() || json.contains(key) || key == "pr") continue;
    json[key] = value;
  }
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace perfwarden::telemetry
