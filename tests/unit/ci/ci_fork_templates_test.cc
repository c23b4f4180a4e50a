// SPDX-License-Identifier: Apache-2.0
// The two-stage workflows of fork pull requests (ci/github/fork-measure.yml, fork-report.yml;
// docs/ci-forks.md) and the templates' token split, without GitHub or GitLab: the measuring job
// has no secret and runs the commands tests/e2e/fork_pr_e2etest.cc runs with the real perfwarden;
// the reporting job never checks out the pull request, downloads the other run's artifact, takes
// the pull request only when GitHub says its head is the measured commit, and runs `perfwarden
// publish` and ci/comment.sh (here against stand-ins) with the restricted token. Pull request
// jobs use PERFWARDEN_PR_TOKEN (ingest-pr), the target branch's PERFWARDEN_TOKEN.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <string>

#include "tests/unit/ci/ci_shell.h"

namespace perfwarden {
namespace {

using namespace perfwarden::ci_test;  // NOLINT(build/namespaces): the shared fixture

const std::string kHead = "0123456789abcdef0123456789abcdef01234567";

YAML::Node Workflow(const std::string& name) {
  return YAML::LoadFile(Src("ci/github/" + name).string());
}

// The step of `job` named `name` (a null node when there is none).
YAML::Node Step(const YAML::Node& job, const std::string& name) {
  for (const YAML::Node& step : job["steps"]) {
    if (step["name"].as<std::string>("") == name) return step;
  }
  ADD_FAILURE() << "no step " << name;
  return YAML::Node();
}

TEST(CiForkTemplatesTest, TheMeasuringJobHasNoSecretAndTheReportingJobRunsNoPullRequestCode) {
  const std::string measure_text = Read(Src("ci/github/fork-measure.yml"));
  const std::string report_text = Read(Src("ci/github/fork-report.yml"));
  // No secret reaches the fork's code, and no expression is spliced into a script (a branch
  // name or title could inject shell code): values travel through env.
  EXPECT_EQ(measure_text.find("secrets."), std::string::npos);
  for (const char* file : {"fork-measure.yml", "fork-report.yml"}) {
    for (const auto& job : Workflow(file)["jobs"]) {
      for (const YAML::Node& step : job.second["steps"]) {
        EXPECT_EQ(step["run"].as<std::string>("").find("${{"), std::string::npos)
            << file << ": " << step["name"].as<std::string>("");
      }
    }
  }
  const YAML::Node measure = Workflow("fork-measure.yml");
  EXPECT_TRUE(measure["on"]["pull_request"].IsMap());
  const YAML::Node mjob = measure["jobs"]["measure"];
  EXPECT_FALSE(mjob["permissions"]) << "the job widens nothing";
  EXPECT_EQ(mjob["if"].as<std::string>(),
            "github.event.pull_request.head.repo.full_name != github.repository");
  const YAML::Node checkout = mjob["steps"][0];
  EXPECT_TRUE(checkout["uses"].as<std::string>().starts_with("actions/checkout@"));
  EXPECT_EQ(checkout["with"]["ref"].as<std::string>(), "${{ github.event.pull_request.head.sha }}");
  EXPECT_FALSE(checkout["with"]["persist-credentials"].as<bool>(true));
  // The commands the end-to-end test runs with the real perfwarden.
  const std::string gate =
      Step(mjob, "perfwarden run and gate (no server)")["run"].as<std::string>();
  EXPECT_TRUE(Contains(gate, "perfwarden run --config perfwarden.yaml --paired --no-push\n"));
  EXPECT_TRUE(Contains(gate,
                       "perfwarden gate --config perfwarden.yaml --paired --no-post --artifact "
                       "perfwarden-artifact"));
  const YAML::Node upload = Step(mjob, "Keep the artifact");
  EXPECT_TRUE(upload["uses"].as<std::string>().starts_with("actions/upload-artifact@"));
  EXPECT_EQ(upload["with"]["path"].as<std::string>(), "perfwarden-artifact/");

  const YAML::Node report = Workflow("fork-report.yml");
  EXPECT_EQ(report["on"]["workflow_run"]["workflows"][0].as<std::string>(),
            measure["name"].as<std::string>());
  EXPECT_EQ(report["on"]["workflow_run"]["types"][0].as<std::string>(), "completed");
  const YAML::Node rjob = report["jobs"]["report"];
  EXPECT_EQ(rjob["permissions"].size(), 3u);
  EXPECT_EQ(rjob["permissions"]["contents"].as<std::string>(), "read");
  EXPECT_EQ(rjob["permissions"]["actions"].as<std::string>(), "read");
  EXPECT_EQ(rjob["permissions"]["pull-requests"].as<std::string>(), "write");
  EXPECT_EQ(rjob["env"]["HEAD_SHA"].as<std::string>(), "${{ github.event.workflow_run.head_sha }}");
  int checkouts = 0, downloads = 0;
  for (const YAML::Node& step : rjob["steps"]) {
    const std::string uses = step["uses"].as<std::string>("");
    if (uses.starts_with("actions/checkout@")) {
      ++checkouts;
      // This repository's default branch (no ref) or perfwarden's release: never the head.
      const std::string repository = step["with"]["repository"].as<std::string>("");
      EXPECT_TRUE(repository.empty() || repository == "perfwarden/perfwarden") << repository;
      EXPECT_EQ(step["with"]["ref"].as<std::string>("").find("${{"), std::string::npos);
      EXPECT_FALSE(step["with"]["persist-credentials"].as<bool>(true));
      EXPECT_FALSE(step["with"]["sparse-checkout"].as<std::string>("").empty());
    }
    if (uses.starts_with("actions/download-artifact@")) {
      ++downloads;
      EXPECT_EQ(step["with"]["name"].as<std::string>(), upload["with"]["name"].as<std::string>());
      EXPECT_EQ(step["with"]["run-id"].as<std::string>(), "${{ github.event.workflow_run.id }}");
    }
  }
  EXPECT_EQ(checkouts, 2);
  EXPECT_EQ(downloads, 1);
  // The restricted token, for publish alone.
  const std::regex secret(R"(secrets\.[A-Z_]+)");
  for (std::sregex_iterator it(report_text.begin(), report_text.end(), secret), end; it != end;
       ++it) {
    EXPECT_EQ(it->str(), "secrets.PERFWARDEN_PR_TOKEN");
  }
  EXPECT_EQ(Step(rjob, "perfwarden publish")["env"]["PERFWARDEN_TOKEN"].as<std::string>(),
            "${{ secrets.PERFWARDEN_PR_TOKEN }}");
}

class CiForkShellTest : public CiShellTest {
 protected:
  // Runs the report job's step `name` as GitHub would, with its env evaluated.
  Outcome RunReportStep(const std::string& name, Env env) {
    const YAML::Node job = Workflow("fork-report.yml")["jobs"]["report"];
    const YAML::Node step = Step(job, name);
    std::map<std::string, std::string> values = {
        {"github.token", "ghs_job"},
        {"github.event.workflow_run.head_sha", kHead},
        {"github.event.workflow_run.pull_requests[0].number", event_pr_},
        {"secrets.PERFWARDEN_PR_TOKEN", "pwt_pr"},
        {"steps.pr.outputs.pr", outputs_["pr"]},
        {"steps.publish.outputs.exit-code", outputs_["exit-code"]}};
    const std::regex expression(R"(^\$\{\{ ([^}]+) \}\}$)");
    for (const YAML::Node& from : {job["env"], step["env"]}) {
      for (const auto& e : from) {
        std::string value = e.second.as<std::string>();
        std::smatch m;
        if (std::regex_match(value, m, expression)) {
          EXPECT_TRUE(values.count(m[1])) << "unknown " << m[1];
          value = values[m[1]];
        }
        env[e.first.as<std::string>()] = value;
      }
    }
    env["GITHUB_REPOSITORY"] = "owner/repo";
    env["RUNNER_TEMP"] = dir_.string();
    env["GITHUB_OUTPUT"] = (dir_ / "output").string();
    std::ofstream(dir_ / "output", std::ios::trunc);
    Outcome o = Bash(step["run"].as<std::string>(), env);
    std::ifstream out(dir_ / "output");
    for (std::string line; std::getline(out, line);) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) outputs_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return o;
  }
  void WriteManifest(const std::string& pr_json) {
    fs::create_directories(dir_ / "perfwarden-artifact");
    Write("perfwarden-artifact/manifest.json", "{\"pr\": " + pr_json + "}");
  }

  std::string event_pr_;  // GitHub names none for a fork's pull request
  std::map<std::string, std::string> outputs_;
};

TEST_F(CiForkShellTest, TheReportPublishesAndCommentsOnTheVerifiedPullRequest) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  WriteManifest("17");
  Write("pull.json", R"({"head": {"sha": ")" + kHead + R"("}})");
  Write("comments.json", "[]");
  Outcome pr = RunReportStep("Pull request", {});
  ASSERT_EQ(pr.exit_code, 0) << pr.output;
  EXPECT_EQ(outputs_["pr"], "17");
  EXPECT_TRUE(Contains(Log(), "gh api repos/owner/repo/pulls/17 --jq .head.sha\n"));

  Outcome publish = RunReportStep("perfwarden publish", {{"PUBLISH_EXIT", "1"}});
  EXPECT_EQ(publish.exit_code, 0) << publish.output;  // the result step fails the job
  EXPECT_EQ(outputs_["exit-code"], "1");
  EXPECT_TRUE(Contains(Log(), "perfwarden publish " + dir_.string() +
                                  "/perfwarden-artifact --config perfwarden.yaml --expect-commit " +
                                  kHead + " --expect-pr 17 --comment-file " + dir_.string() +
                                  "/perfwarden-comment.md --color always\n"));
  EXPECT_EQ(Read(dir_ / "token"), "pwt_pr");

  // ci/comment.sh of the release, where the workflow's sparse checkout puts it.
  fs::create_directories(dir_ / "work/.perfwarden-ci/ci");
  fs::copy_file(Src("ci/comment.sh"), dir_ / "work/.perfwarden-ci/ci/comment.sh");
  Outcome comment = RunReportStep("Pull request comment", {});
  EXPECT_EQ(comment.exit_code, 0) << comment.output;
  EXPECT_TRUE(Contains(Log(), "gh api --method POST repos/owner/repo/issues/17/comments "));
  EXPECT_EQ(Read(dir_ / "sent").rfind(kMarker, 0), 0u);
  EXPECT_EQ(RunReportStep("perfwarden result", {}).exit_code, 1);
}

TEST_F(CiForkShellTest, AnUnverifiedPullRequestPostsNothing) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  // Not a number: refused before any call (it would be spliced into an API path).
  for (const std::string bad : {R"("17/../../x")", R"("1e3")", "-4", R"("")", "null"}) {
    WriteManifest(bad);
    std::ofstream(dir_ / "log", std::ios::trunc);
    EXPECT_EQ(RunReportStep("Pull request", {}).exit_code, 2) << bad;
    EXPECT_EQ(Log(), "") << bad;
  }
  // A pull request whose head is another commit (pushed again since, or not this one).
  WriteManifest("18");
  Write("pull.json", R"({"head": {"sha": "ffffffffffffffffffffffffffffffffffffffff"}})");
  outputs_.clear();
  Outcome o = RunReportStep("Pull request", {});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "nothing posted"));
  EXPECT_EQ(outputs_["pr"], "");
  // The event's number, when GitHub gives one, wins over the manifest's.
  Write("pull.json", R"({"head": {"sha": ")" + kHead + R"("}})");
  event_pr_ = "21";
  EXPECT_EQ(RunReportStep("Pull request", {}).exit_code, 0);
  EXPECT_EQ(outputs_["pr"], "21");
}

TEST_F(CiShellTest, TheGitlabJobPicksTheRestrictedTokenForMergeRequests) {
  const Env mr = {{"CI_MERGE_REQUEST_IID", "9"}};
  Env both = mr;
  both["PERFWARDEN_TOKEN"] = "pwt_full";
  both["PERFWARDEN_PR_TOKEN"] = "pwt_pr";
  Outcome o = RunGitlab(both);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Read(dir_ / "token"), "pwt_pr");
  // A merge request pipeline without the restricted token (a protected source branch sees the
  // full one): it uses what it has.
  o = RunGitlab({{"CI_MERGE_REQUEST_IID", "9"}, {"PERFWARDEN_TOKEN", "pwt_full"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Read(dir_ / "token"), "pwt_full");
  // The default branch: the protected full token, never the restricted one.
  o = RunGitlab({{"PERFWARDEN_TOKEN", "pwt_full"}, {"PERFWARDEN_PR_TOKEN", "pwt_pr"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Read(dir_ / "token"), "pwt_full");
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunGitlab({{"PERFWARDEN_PR_TOKEN", "pwt_pr"}});
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Contains(o.output, "protected CI/CD variable"));
  EXPECT_EQ(Log(), "");
}

}  // namespace
}  // namespace perfwarden
