// SPDX-License-Identifier: Apache-2.0
// `perfwarden bisect --remote` end to end: a real server and PostgreSQL, a git repository made by
// the test (tests/testing/bisect_repo.h), the bisect queued by `perfwarden bisect --remote`,
// measured by `perfwarden agent` processes that claim its steps from the server, and followed with
// `perfwarden bisect status`. Two agents share one bisect (its steps measured by both) and find
// the culprit the local mode finds; an agent killed in the middle of a step has the step
// reclaimed by another when its lease runs out.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "tests/testing/bisect_repo.h"
#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class BisectRemoteE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
    repo_ = std::make_unique<testing::SyntheticRepo>(
        std::string("bisect-remote-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        "server: {url: \"http://127.0.0.1:" + std::to_string(app_->port()) +
            "\", project: proj}\n");
    ASSERT_TRUE(repo_->ok());
  }
  void TearDown() override {
    for (const int pid : agents_) kill(-pid, SIGKILL);
    repo_.reset();
    ServerTest::TearDown();
  }

  // `perfwarden ARGS` in the repository, with the admin token; stdout only (stderr to `log`).
  testing::ShellOutcome Perfwarden(const std::string& args, const std::string& log) {
    return testing::RunShell("(cd " + repo_->path().string() + " && PERFWARDEN_TOKEN=" + admin_ +
                             testing::AsanEnv() + " " + PERFWARDEN_BIN_DIR + "/perfwarden " + args +
                             " 2>>" + log + ")");
  }

  // Starts `perfwarden agent` in the background in its own process group (so that the test can
  // kill it with its build), with `env` before it; returns its pid.
  int StartAgent(const std::string& name, const std::string& args, const std::string& env = "",
                 bool trust_queued_build = true) {
    const std::string log = repo_->path().string() + "-" + name + ".log";
    logs_.push_back(log);
    const testing::ShellOutcome started =
        testing::RunShell("cd " + repo_->path().string() + " && PERFWARDEN_TOKEN=" + admin_ +
                          testing::AsanEnv() + " " + env + " setsid " + PERFWARDEN_BIN_DIR +
                          "/perfwarden agent --testbed gpu-a --repo . " + "--name " + name +
                          " --poll 0.1 " + (trust_queued_build ? "--trust-queued-build " : "") +
                          args + " >" + log + " 2>&1 & echo $!");
    const int pid = std::stoi(started.output);
    agents_.push_back(pid);
    return pid;
  }

  json GetBisect(const std::string& id) {
    return json::parse(http_->Get("/api/v1/projects/proj/bisects/" + id, admin_).body)["bisect"];
  }

  std::string Logs() {
    std::string out;
    for (const std::string& log : logs_) {
      std::ifstream in(log);
      out += "--- " + log + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
    }
    return out;
  }

  std::string Queue(int n, const std::string& build = testing::kBuildBench) {
    const std::string log = repo_->path().string() + "-queue.log";
    logs_.push_back(log);
    const testing::ShellOutcome queued =
        Perfwarden("bisect --remote --testbed gpu-a --good HEAD~" + std::to_string(n) +
                       " --bad HEAD --benchmark BM_Work --build '" + build + "'",
                   log);
    EXPECT_EQ(queued.exit_code, 0) << queued.output << Logs();
    return testing::SyntheticRepo::Trim(queued.output);
  }

  std::unique_ptr<testing::SyntheticRepo> repo_;
  std::vector<int> agents_;
  std::vector<std::string> logs_;
};

TEST_F(BisectRemoteE2eTest, TwoAgentsShareABisectAndFindTheCulprit) {
  const int n = 64, k = 37;
  ASSERT_TRUE(repo_->MakeHistory(n, [&](int c) { return c >= k ? 1100.0 : 1000.0; }, {32}));
  const std::string id = Queue(n);
  ASSERT_FALSE(id.empty());
  // Queued, nobody measuring yet: the status says what it waits for.
  const std::string status_log = repo_->path().string() + "-status.log";
  logs_.push_back(status_log);
  const testing::ShellOutcome waiting = Perfwarden("bisect status " + id, status_log);
  EXPECT_EQ(waiting.exit_code, 0) << waiting.output << Logs();
  EXPECT_NE(waiting.output.find("pending"), std::string::npos) << waiting.output;
  EXPECT_NE(waiting.output.find("waiting for an agent"), std::string::npos) << waiting.output;

  // a1 takes the first step and then stops (--once); a2, started while a1 measures, takes the
  // rest. Which agent wins a claim when both are free is a race, so the test makes the sharing
  // certain this way (both agents serving at once is the killed-agent test's case).
  StartAgent("a1", "--once");
  json claimed;
  for (int i = 0; i < 600; ++i) {
    claimed = GetBisect(id);
    if (!claimed["steps"].empty() && claimed["steps"][0]["state"] != "queued") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(claimed["steps"][0]["agent"], "a1") << claimed.dump(2) << Logs();
  StartAgent("a2", "--exit-when-idle 20");
  const testing::ShellOutcome done =
      Perfwarden("bisect status " + id + " --wait --poll 0.2 --format json", status_log);
  ASSERT_EQ(done.exit_code, 0) << done.output << Logs();
  const json r = json::parse(done.output);
  ASSERT_EQ(r["culprits"].size(), 1u) << r.dump(2);
  EXPECT_EQ(r["culprits"][0]["sha"], repo_->Sha(k, n));
  EXPECT_EQ(r["culprits"][0]["subject"], "commit 37");
  EXPECT_NEAR(r["culprits"][0]["magnitude"].get<double>(), 0.10, 0.03);
  EXPECT_EQ(r["commits"], n);
  EXPECT_LE(r["probes"].size(), 9u) << r.dump(2);
  bool skipped = false;
  for (const json& p : r["probes"]) {
    if (p["verdict"] == "skip") skipped = p["sha"] == repo_->Sha(32, n);
  }
  EXPECT_TRUE(skipped) << r.dump(2);
  EXPECT_GT(r["builds"].get<int>(), 0);
  // Every step was measured once: the first by a1, the others by a2.
  const json b = GetBisect(id);
  EXPECT_EQ(b["state"], "succeeded");
  EXPECT_EQ(b["culprit"], repo_->Sha(k, n));
  std::map<std::string, int> by_agent;
  for (const json& step : b["steps"]) {
    EXPECT_EQ(step["state"], "done") << step.dump();
    EXPECT_EQ(step["attempts"], 1) << step.dump();
    ++by_agent[step["agent"].get<std::string>()];
  }
  EXPECT_EQ(b["steps"].size(), r["measurements"].get<std::size_t>());
  EXPECT_EQ(by_agent["a1"], 1) << b["steps"].dump(1) << Logs();
  EXPECT_EQ(by_agent["a2"], static_cast<int>(b["steps"].size()) - 1) << b["steps"].dump(1);
  // The figures docs/bisect.md quotes.
  std::printf("remote bisect: %zu probes, %zu steps (", r["probes"].size(), b["steps"].size());
  for (const auto& [agent, steps] : by_agent) std::printf(" %s: %d", agent.c_str(), steps);
  std::printf(" ), %d builds, %d suite runs\n", r["builds"].get<int>(), r["runs"].get<int>());
  // The agents posted what they measured as runs of branch perfwarden-bisect, testbed gpu-a.
  const json runs = json::parse(
      http_->Get("/api/v1/projects/proj/runs?branch=perfwarden-bisect&limit=200", admin_).body);
  EXPECT_GE(runs["runs"].size(), r["probes"].size()) << runs.dump(1);

  // The same bisect queued again (another alert on that range, say) is answered from the
  // measurements already stored: every step reused, nothing built or run, the same culprit.
  const std::string again = Queue(n);
  const json b2 = GetBisect(again);
  EXPECT_EQ(b2["state"], "succeeded") << b2.dump(2);
  EXPECT_EQ(b2["culprit"], repo_->Sha(k, n));
  EXPECT_EQ(b2["steps"].size(), b["steps"].size());
  for (const json& step : b2["steps"]) EXPECT_TRUE(step["reused_from"].is_number()) << step.dump();
  EXPECT_EQ(b2["report"]["builds"], 0);
  EXPECT_EQ(b2["report"]["runs"], 0);
  EXPECT_EQ(b2["report"]["culprits"][0]["magnitude"], r["culprits"][0]["magnitude"]);
}

TEST_F(BisectRemoteE2eTest, AKilledAgentsStepIsReclaimed) {
  const int n = 16, k = 9;
  ASSERT_TRUE(repo_->MakeHistory(n, [&](int c) { return c >= k ? 1100.0 : 1000.0; }));
  const std::string id = Queue(
      n, std::string("if [ -n \"$SLOW_BUILD\" ]; then sleep 600; fi; ") + testing::kBuildBench);
  ASSERT_FALSE(id.empty());
  // a1's builds hang (as a host that died would), so it is killed in the middle of step 1.
  const int a1 = StartAgent("a1", "--lease 5", "SLOW_BUILD=1");
  (void)a1;
  json b;
  for (int i = 0; i < 600; ++i) {
    b = GetBisect(id);
    if (b["steps"].size() == 1 && b["steps"][0]["state"] == "claimed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(b["steps"][0]["state"], "claimed") << b.dump(2) << Logs();
  EXPECT_EQ(b["steps"][0]["agent"], "a1");
  kill(-agents_.back(), SIGKILL);
  agents_.pop_back();
  StartAgent("a2", "--lease 5 --exit-when-idle 20");
  const std::string status_log = repo_->path().string() + "-status.log";
  logs_.push_back(status_log);
  const testing::ShellOutcome done =
      Perfwarden("bisect status " + id + " --wait --poll 0.2 --format json", status_log);
  ASSERT_EQ(done.exit_code, 0) << done.output << Logs();
  const json r = json::parse(done.output);
  ASSERT_EQ(r["culprits"].size(), 1u) << r.dump(2);
  EXPECT_EQ(r["culprits"][0]["sha"], repo_->Sha(k, n));
  b = GetBisect(id);
  EXPECT_EQ(b["state"], "succeeded");
  // The first step went to a2 once a1's lease ran out: its second attempt.
  EXPECT_EQ(b["steps"][0]["agent"], "a2") << b["steps"].dump(1);
  EXPECT_EQ(b["steps"][0]["attempts"], 2) << b["steps"].dump(1);
  for (std::size_t i = 1; i < b["steps"].size(); ++i) EXPECT_EQ(b["steps"][i]["agent"], "a2");
}

// A build command is a shell command: an agent runs one queued through the server only when its
// owner said so (--trust-queued-build); otherwise the step fails there and goes back to the
// queue, and the error says how to start the agent.
TEST_F(BisectRemoteE2eTest, AnAgentRunsNoQueuedBuildUnlessTrusted) {
  ASSERT_TRUE(repo_->MakeHistory(4, [&](int c) { return c >= 2 ? 1100.0 : 1000.0; }));
  const std::string id = Queue(4);
  ASSERT_FALSE(id.empty());
  const int pid = StartAgent("careful", "--once", "", false);
  json b;
  for (int i = 0; i < 600; ++i) {
    b = GetBisect(id);
    if (!b["steps"].empty() && !b["steps"][0]["last_error"].is_null()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(b["steps"].empty()) << b.dump(2);
  EXPECT_EQ(b["steps"][0]["state"], "queued") << b.dump(2) << Logs();
  EXPECT_NE(b["steps"][0]["last_error"].get<std::string>().find("--trust-queued-build"),
            std::string::npos)
      << b.dump(2);
  (void)pid;
}

}  // namespace
}  // namespace perfwarden
