// SPDX-License-Identifier: Apache-2.0
// A fork's pull request in two stages, end to end (docs/ci-forks.md): the untrusted job runs the
// real perfwarden in a real git repository with no token and no server (`perfwarden run --paired
// --no-push`, `perfwarden gate --paired --no-post --artifact DIR`: exit 1 on the planted
// regression); the trusted job runs `perfwarden publish` with an ingest-pr token and the target
// branch's perfwarden.yaml against a real server and PostgreSQL, then ci/comment.sh against the gh
// stand-in (tests/testing/fake_gh.h). One comment is created, the run and its paired verdict are
// stored; an altered artifact, another commit than the event's, a measurement judged by its own
// thresholds and a forged run of main post nothing. Suites are commands that sleep, as in
// gate_e2etest.cc.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "runner/client/sha256.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/fake_gh.h"
#include "tests/testing/http_client.h"
#include "tests/testing/shell.h"
#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Outcome = testing::ShellOutcome;
using testing::RunShell;

std::string Slurp(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

class ForkPrE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("demo");
    auto token = http_->Post("/api/v1/projects/demo/tokens",
                             json{{"name", "pr"}, {"scopes", {"ingest-pr"}}}.dump(), admin_);
    ASSERT_EQ(token.status, 201) << token.body;
    pr_token_ = token.Json()["token"].get<std::string>();

    char pattern[] = "/tmp/perfwarden-fork-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    repo_ = root_ / "fork";
    trusted_ = root_ / "trusted";
    fs::create_directories(repo_);
    fs::create_directories(trusted_);
    ASSERT_EQ(Git("init -q -b main .").exit_code, 0);
  }
  void TearDown() override {
    ServerTest::TearDown();
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }

  Outcome Git(const std::string& args) {
    return RunShell("cd " + repo_.string() + " && GIT_CONFIG_NOSYSTEM=1 HOME=" + repo_.string() +
                    " git -c user.name=Test -c user.email=test@example.com " + args);
  }
  // Two suites sleeping 0.2 s and 0.25 s times the factors; a small paired design.
  void Suites(double alpha, double beta) {
    std::ofstream out(repo_ / "perfwarden.yaml");
    out << "version: 1\nserver: {url: \"http://127.0.0.1:" << app_->port()
        << "\", project: demo}\ntarget_branch: main\ntestbed: e2e\nsuites:\n"
        << "  - {name: alpha, type: command, command: [\"sleep\", \"" << 0.20 * alpha
        << "\"], repetitions: 3}\n"
        << "  - {name: beta, type: command, command: [\"sleep\", \"" << 0.25 * beta
        << "\"], repetitions: 3}\n"
        << "thresholds:\n  - {benchmark: \"*\", percent: 5}\n"
        << "gate: {block_repetitions: 2, min_blocks: 3, max_blocks: 6}\n";
  }
  void Commit(const std::string& message) {
    std::ofstream(repo_ / ".gitignore") << ".perfwarden/\nartifact/\n";
    ASSERT_EQ(Git("add -A").exit_code, 0);
    ASSERT_EQ(Git("commit -q -m '" + message + "'").exit_code, 0);
  }

  // The perfwarden binary in `dir` with only `env` (and PATH, HOME): no token unless given.
  Outcome Perfwarden(const fs::path& dir, const std::string& env, const std::string& args) {
    std::string asan;
    if (const char* a = std::getenv("ASAN_OPTIONS")) asan = std::string(" ASAN_OPTIONS=") + a;
    return RunShell("cd " + dir.string() + " && env -i PATH=/usr/bin:/bin HOME=" + dir.string() +
                    asan + " " + env + " " + PERFWARDEN_BIN_DIR + "/perfwarden " + args);
  }
  // The untrusted stage, as fork-measure.yml runs it in a pull_request event of PR 17.
  Outcome Measure(const std::string& args) {
    return Perfwarden(repo_,
                      "GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request GITHUB_REPOSITORY=o/r "
                      "GITHUB_REF=refs/pull/17/merge GITHUB_HEAD_REF=feature GITHUB_BASE_REF=main",
                      args);
  }
  // The trusted stage, as fork-report.yml runs it: the target branch's perfwarden.yaml only.
  Outcome Publish(const fs::path& artifact, const std::string& commit, const std::string& more) {
    return Perfwarden(trusted_, "PERFWARDEN_TOKEN=" + pr_token_,
                      "publish " + artifact.string() +
                          " --config perfwarden.yaml --expect-commit " + commit +
                          " --expect-pr 17 --color never " + more);
  }
  size_t RunCount() {
    auto runs = http_->Get("/api/v1/projects/demo/runs", admin_);
    EXPECT_EQ(runs.status, 200) << runs.body;
    return runs.Json()["runs"].size();
  }
  // A copy of the artifact with `name` replaced by `text`; with `rehash`, its manifest updated
  // to match (as whoever controls the untrusted job can).
  fs::path Forged(const std::string& name, const std::string& text, bool rehash,
                  const std::string& branch = "") {
    const fs::path copy = root_ / ("forged-" + std::to_string(forged_++));
    fs::copy(repo_ / "artifact", copy);
    std::ofstream(copy / name, std::ios::trunc) << text;
    json manifest = json::parse(Slurp(copy / "manifest.json"));
    if (rehash) manifest["files"][name] = client::Sha256Hex(text);
    if (!branch.empty()) manifest["branch"] = branch;
    std::ofstream(copy / "manifest.json", std::ios::trunc) << manifest.dump();
    return copy;
  }

  std::string pr_token_;
  fs::path root_, repo_, trusted_;
  int forged_ = 0;
};

TEST_F(ForkPrE2eTest, TheUntrustedStageMeasuresTheTrustedOnePostsAndComments) {
  Suites(1, 1);
  Commit("base");
  ASSERT_EQ(Git("show main:perfwarden.yaml > " + (trusted_ / "perfwarden.yaml").string()).exit_code,
            0);
  ASSERT_EQ(Git("checkout -q -b feature").exit_code, 0);
  Suites(1.25, 1);  // +25%: the flow is under test, not the sensitivity (a loaded machine)
  Commit("slower alpha");
  const std::string head = Git("rev-parse HEAD").output.substr(0, 40);
  const std::string main_sha = Git("rev-parse main").output.substr(0, 40);

  // Stage 1: no token, no server; the gate fails on the regression it judged here.
  Outcome run = Measure("run --paired --no-push");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Outcome gate = Measure("gate --paired --no-post --artifact artifact --color never");
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("nothing is measured again"), std::string::npos) << gate.output;
  EXPECT_NE(gate.output.find("REGRESSION"), std::string::npos) << gate.output;
  const json manifest = json::parse(Slurp(repo_ / "artifact" / "manifest.json"));
  EXPECT_EQ(manifest["commit"], head);
  EXPECT_EQ(manifest["branch"], "feature");
  EXPECT_EQ(manifest["pr"], 17);
  EXPECT_EQ(manifest["project"], "demo");
  EXPECT_EQ(RunCount(), 0u);  // nothing reached the server

  // Altered artifacts and another commit than the event's post nothing (exit 2).
  const std::string run_json = Slurp(repo_ / "artifact" / "run.json");
  std::string slower = run_json;
  slower.replace(slower.find("\"feature\""), 9, "\"feature\" ");
  Outcome altered = Publish(Forged("run.json", slower, false), head, "");
  EXPECT_EQ(altered.exit_code, 2) << altered.output;
  EXPECT_NE(altered.output.find("does not match its SHA-256"), std::string::npos) << altered.output;
  Outcome other = Publish(repo_ / "artifact", main_sha, "");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("the event's head commit is " + main_sha), std::string::npos)
      << other.output;
  // Judged by thresholds of its own (90%), forged with its hashes: perfwarden.yaml's are 5%.
  json lenient = json::parse(Slurp(repo_ / "artifact" / "paired.json"));
  lenient["parameters"]["threshold"] = 0.9;
  Outcome own = Publish(Forged("paired.json", lenient.dump(), true), head, "");
  EXPECT_EQ(own.exit_code, 2) << own.output;
  EXPECT_NE(own.output.find("other thresholds"), std::string::npos) << own.output;
  // A run of main, forged with its hashes: refused here (perfwarden.yaml's target branch)...
  json of_main = json::parse(run_json);
  of_main["branch"] = "main";
  const fs::path forged = Forged("run.json", of_main.dump(), true, "main");
  Outcome main_run = Publish(forged, head, "");
  EXPECT_EQ(main_run.exit_code, 2) << main_run.output;
  EXPECT_NE(main_run.output.find("the run is of branch main, the target branch"), std::string::npos)
      << main_run.output;
  EXPECT_EQ(main_run.output.find("HTTP 403"), std::string::npos) << main_run.output;
  // ...and by the server, whose project protects main, when perfwarden.yaml names another target.
  std::string yaml = Slurp(trusted_ / "perfwarden.yaml");
  const fs::path trusted_yaml = trusted_ / "perfwarden.yaml";
  std::string trunk = yaml;
  trunk.replace(trunk.find("target_branch: main"), 19, "target_branch: trunk");
  std::ofstream(trusted_yaml, std::ios::trunc) << trunk;
  Outcome refused = Publish(forged, head, "");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("HTTP 403"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("ingest-pr token posts runs and verdicts of branches the project "
                                "does not protect only"),
            std::string::npos)
      << refused.output;
  std::ofstream(trusted_yaml, std::ios::trunc) << yaml;
  EXPECT_EQ(RunCount(), 0u);

  // Stage 2: verified and posted; the server's verdict is the comment and the exit code.
  const fs::path comment = root_ / "comment.md";
  Outcome published = Publish(repo_ / "artifact", head, "--comment-file " + comment.string());
  ASSERT_EQ(published.exit_code, 1) << published.output;
  EXPECT_NE(published.output.find("artifact verified"), std::string::npos) << published.output;
  ASSERT_EQ(RunCount(), 1u);
  const std::string run_id = manifest["run_id"];
  auto stored = http_->Get("/api/v1/projects/demo/runs/" + run_id + "/verdict", admin_);
  ASSERT_EQ(stored.status, 200) << stored.body;
  const json verdict = stored.Json()["verdict"];
  EXPECT_TRUE(verdict.contains("paired")) << verdict.dump();
  EXPECT_EQ(verdict["outcome"], "regression");
  EXPECT_EQ(verdict["branch"], "feature");
  EXPECT_EQ(verdict["pr"], 17);
  EXPECT_EQ(verdict["baseline"]["commit"], main_sha);
  for (const json& row : verdict["results"]) {
    EXPECT_EQ(row["verdict"] == "REGRESSION", row["suite"] == "alpha") << row.dump();
  }
  const std::string body = Slurp(comment);
  EXPECT_EQ(body.rfind("<!-- perfwarden:gate project=demo testbed=e2e -->", 0), 0u) << body;
  EXPECT_NE(body.find("/runs/" + run_id + "/verdict"), std::string::npos) << body;

  // The comment, by ci/comment.sh against the gh stand-in: one created on pull request 17.
  if (RunShell("command -v jq").exit_code != 0) GTEST_SKIP() << "the gh stand-in needs jq";
  fs::create_directories(root_ / "bin");
  std::ofstream(root_ / "bin" / "gh") << testing::kFakeGh;
  fs::permissions(root_ / "bin" / "gh", fs::perms::owner_all);
  std::ofstream(root_ / "comments.json") << "[]";
  const fs::path script =
      fs::path(PERFWARDEN_FIXTURES_DIR).parent_path().parent_path() / "ci" / "comment.sh";
  Outcome posted =
      RunShell("env -i PATH=" + (root_ / "bin").string() + ":/usr/bin:/bin FAKE=" + root_.string() +
               " GH_TOKEN=ghs_job GITHUB_REPOSITORY=owner/repo " + "bash " + script.string() +
               " github " + comment.string() + " 17");
  EXPECT_EQ(posted.exit_code, 0) << posted.output;
  const std::string log = Slurp(root_ / "log");
  size_t creates = 0;
  for (size_t at = log.find("--method POST"); at != std::string::npos;
       at = log.find("--method POST", at + 1)) {
    ++creates;
  }
  EXPECT_EQ(creates, 1u) << log;
  EXPECT_NE(log.find("repos/owner/repo/issues/17/comments"), std::string::npos) << log;
  EXPECT_EQ(Slurp(root_ / "sent"), body);
}

}  // namespace
}  // namespace perfwarden
