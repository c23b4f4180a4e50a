// SPDX-License-Identifier: Apache-2.0
// CI detection, table-driven over environments as GitHub Actions and GitLab CI document them
// (push, pull request, re-run, pull_request_target, GHES; merge request, merged results, branch
// pipelines), a generic CI and none; then the wire "ci" object and the process environment.
#include "runner/telemetry/ci_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace perfwarden::telemetry {
namespace {

using EnvMap = std::map<std::string, std::string>;

GetEnv FakeEnv(EnvMap values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// The variables every GitHub Actions step sees (values from the "Variables reference" page).
EnvMap GitHubBase() {
  return {{"CI", "true"},
          {"GITHUB_ACTIONS", "true"},
          {"GITHUB_SERVER_URL", "https://github.com"},
          {"GITHUB_REPOSITORY", "octocat/Hello-World"},
          {"GITHUB_RUN_ID", "1658821493"},
          {"GITHUB_RUN_NUMBER", "3"},
          {"GITHUB_RUN_ATTEMPT", "1"},
          {"GITHUB_SHA", "ffac537e6cbbf934b08745a378932722df287a53"},
          {"GITHUB_WORKFLOW", "My test workflow"},
          {"GITHUB_JOB", "greeting_job"},
          {"RUNNER_NAME", "Hosted Agent"},
          {"RUNNER_OS", "Linux"}};
}

EnvMap With(EnvMap base, const EnvMap& more) {
  for (const auto& [key, value] : more) base[key] = value;
  return base;
}

// A GitLab merge request pipeline (values shaped as in "Predefined CI/CD variables reference").
EnvMap GitLabBase() {
  return {{"CI", "true"},
          {"GITLAB_CI", "true"},
          {"CI_PROJECT_URL", "https://gitlab.example.com/gitlab-org/gitlab-foss"},
          {"CI_PIPELINE_ID", "1000"},
          {"CI_PIPELINE_URL", "https://gitlab.example.com/gitlab-org/gitlab-foss/-/pipelines/1000"},
          {"CI_JOB_ID", "50"},
          {"CI_JOB_NAME", "benchmark"},
          {"CI_JOB_URL", "https://gitlab.example.com/gitlab-org/gitlab-foss/-/jobs/50"},
          {"CI_COMMIT_SHA", "1ecfd275763eff1d6b4844ea3168962458c9f27a"},
          {"CI_COMMIT_REF_NAME", "main"}};
}

const std::map<std::string, std::string> kGitHubExtra = {{"workflow", "My test workflow"},
                                                         {"job", "greeting_job"},
                                                         {"run_number", "3"},
                                                         {"run_attempt", "1"},
                                                         {"runner_name", "Hosted Agent"}};

CiMetadata OnlyProvider(const std::string& provider) {
  CiMetadata ci;
  ci.provider = provider;
  return ci;
}

struct Case {
  const char* name;
  EnvMap env;
  CiMetadata expected;
};

TEST(CiEnv, DetectsProvidersFromDocumentedEnvironments) {
  const std::string repo = "https://github.com/octocat/Hello-World";
  const std::string run = repo + "/actions/runs/1658821493";
  const std::string sha = "ffac537e6cbbf934b08745a378932722df287a53";
  auto extra = [](EnvMap more) { return With(kGitHubExtra, more); };
  const std::string gl = "https://gitlab.example.com/gitlab-org/gitlab-foss";
  const std::map<std::string, std::string> gl_extra = {
      {"pipeline_url", gl + "/-/pipelines/1000"}, {"job_id", "50"}, {"job_name", "benchmark"}};

  const std::vector<Case> cases = {
      {"github push",
       With(GitHubBase(), {{"GITHUB_EVENT_NAME", "push"},
                           {"GITHUB_REF", "refs/heads/main"},
                           {"GITHUB_REF_NAME", "main"},
                           {"GITHUB_HEAD_REF", ""},  // set but empty outside pull requests
                           {"GITHUB_BASE_REF", ""}}),
       {"github", run, std::nullopt, "main", "", sha, repo, "1658821493",
        extra({{"event_name", "push"}})}},
      {"github pull request, third attempt",
       With(GitHubBase(), {{"GITHUB_EVENT_NAME", "pull_request"},
                           {"GITHUB_REF", "refs/pull/42/merge"},
                           {"GITHUB_REF_NAME", "42/merge"},
                           {"GITHUB_HEAD_REF", "feature-branch-1"},
                           {"GITHUB_BASE_REF", "main"},
                           {"GITHUB_RUN_ATTEMPT", "3"}}),
       {"github", run + "/attempts/3", 42, "feature-branch-1", "main", sha, repo, "1658821493",
        extra({{"event_name", "pull_request"}, {"run_attempt", "3"}})}},
      {"github pull_request_target runs on the base ref: no PR number",
       With(GitHubBase(), {{"GITHUB_EVENT_NAME", "pull_request_target"},
                           {"GITHUB_REF", "refs/heads/main"},
                           {"GITHUB_REF_NAME", "main"},
                           {"GITHUB_HEAD_REF", "fork-feature"},
                           {"GITHUB_BASE_REF", "main"}}),
       {"github", run, std::nullopt, "fork-feature", "main", sha, repo, "1658821493",
        extra({{"event_name", "pull_request_target"}})}},
      {"github enterprise server, malformed PR ref",
       With(GitHubBase(), {{"GITHUB_SERVER_URL", "https://ghe.example.com"},
                           {"GITHUB_REF", "refs/pull/abc/merge"},
                           {"GITHUB_REF_NAME", "abc/merge"}}),
       {"github", "https://ghe.example.com/octocat/Hello-World/actions/runs/1658821493",
        std::nullopt, "abc/merge", "", sha, "https://ghe.example.com/octocat/Hello-World",
        "1658821493", kGitHubExtra}},
      {"github PR number zero is not a PR",
       With(GitHubBase(), {{"GITHUB_REF", "refs/pull/0/merge"}}),
       {"github", run, std::nullopt, "", "", sha, repo, "1658821493", kGitHubExtra}},
      {"gitlab merge request pipeline (merged results)",
       With(GitLabBase(),
            {{"CI_PIPELINE_SOURCE", "merge_request_event"},
             {"CI_MERGE_REQUEST_IID", "17"},
             {"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feature/faster-sort"},
             {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"},
             {"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"},
             {"CI_MERGE_REQUEST_DIFF_BASE_SHA", "89abcdef0123456789abcdef0123456789abcdef"}}),
       {"gitlab", gl + "/-/jobs/50", 17, "feature/faster-sort", "main",
        "1ecfd275763eff1d6b4844ea3168962458c9f27a", gl, "1000",
        With(gl_extra, {{"pipeline_source", "merge_request_event"},
                        {"head_sha", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"},
                        {"diff_base_sha", "89abcdef0123456789abcdef0123456789abcdef"}})}},
      {"gitlab branch pipeline",
       With(GitLabBase(), {{"CI_PIPELINE_SOURCE", "push"},
                           {"CI_COMMIT_BRANCH", "main"},
                           {"CI_MERGE_REQUEST_IID", ""}}),
       {"gitlab", gl + "/-/jobs/50", std::nullopt, "main", "",
        "1ecfd275763eff1d6b4844ea3168962458c9f27a", gl, "1000",
        With(gl_extra, {{"pipeline_source", "push"}})}},
      {"another CI", {{"CI", "true"}, {"GITHUB_ACTIONS", "false"}}, OnlyProvider("ci")},
      {"CI=1", {{"CI", "1"}}, OnlyProvider("ci")},
      {"CI=false", {{"CI", "false"}}, {}},
      {"no CI", {}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const CiMetadata ci = DetectCi(FakeEnv(c.env));
    EXPECT_EQ(ci.provider, c.expected.provider);
    EXPECT_EQ(ci.job_url, c.expected.job_url);
    EXPECT_EQ(ci.pr, c.expected.pr);
    EXPECT_EQ(ci.branch, c.expected.branch);
    EXPECT_EQ(ci.target_branch, c.expected.target_branch);
    EXPECT_EQ(ci.commit_sha, c.expected.commit_sha);
    EXPECT_EQ(ci.repository_url, c.expected.repository_url);
    EXPECT_EQ(ci.run_id, c.expected.run_id);
    EXPECT_EQ(ci.extra, c.expected.extra);
  }
}

TEST(CiEnv, WireObject) {
  CiMetadata ci = DetectCi(FakeEnv(With(GitHubBase(), {{"GITHUB_REF", "refs/pull/7/merge"},
                                                       {"GITHUB_HEAD_REF", "topic"},
                                                       {"GITHUB_EVENT_NAME", "pull_request"}})));
  EXPECT_EQ(ToJson(ci),
            R"({"provider":"github",)"
            R"("job_url":"https://github.com/octocat/Hello-World/actions/runs/1658821493",)"
            R"("pr":7,"run_id":"1658821493",)"
            R"("repository_url":"https://github.com/octocat/Hello-World",)"
            R"("event_name":"pull_request","job":"greeting_job","run_attempt":"1",)"
            R"("run_number":"3","runner_name":"Hosted Agent","workflow":"My test workflow"})");
  // Extras cannot redefine the fixed keys; empty values are left out.
  ci.extra["provider"] = "spoofed";
  ci.extra["pr"] = "8";
  ci.extra["empty"] = "";
  const nlohmann::json json = nlohmann::json::parse(ToJson(ci));
  EXPECT_EQ(json.at("provider"), "github");
  EXPECT_EQ(json.at("pr"), 7);
  EXPECT_FALSE(json.contains("empty"));
  EXPECT_FALSE(json.contains("branch"));  // top-level wire fields, not repeated in "ci"

  EXPECT_EQ(ToJson(CiMetadata{}), "{}");
  EXPECT_EQ(ToJson(OnlyProvider("ci")), R"({"provider":"ci"})");
}

// Sets variables for one test and puts the previous values back.
class ScopedEnv {
 public:
  explicit ScopedEnv(const EnvMap& values) {
    for (const auto& [name, value] : values) {
      const char* old = getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(CiEnv, ReadsTheProcessEnvironment) {
  const ScopedEnv env({{"GITHUB_ACTIONS", "true"},
                       {"GITHUB_SERVER_URL", "https://github.com"},
                       {"GITHUB_REPOSITORY", "perfwarden/test"},
                       {"GITHUB_RUN_ID", "99"},
                       {"GITHUB_RUN_ATTEMPT", "2"},
                       {"GITHUB_REF", "refs/pull/5/merge"}});
  const CiMetadata ci = DetectCi();
  EXPECT_EQ(ci.provider, "github");
  EXPECT_EQ(ci.job_url, "https://github.com/perfwarden/test/actions/runs/99/attempts/2");
  EXPECT_EQ(ci.pr, 5);
}

}  // namespace
}  // namespace perfwarden::telemetry
