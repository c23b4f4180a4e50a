// SPDX-License-Identifier: Apache-2.0
// `perfwarden bisect` end to end, local mode: a git repository made by the test, 64 commits of a
// tiny benchmark program (a C file the bisect builds with --build at every probe) whose commit k
// makes BM_Work 10% slower, one commit that does not build, noise of 2% per repetition. The
// program prints Google Benchmark's JSON with its timings drawn around the level its commit
// sets (real timing on a shared 2-core CI machine would make the test about the machine): what
// is tested is the search, the decisions, the builds in temporary trees, skipping, resuming and
// the answer. Also a range without a regression, and two steps (4% and 8%).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/bisect_repo.h"
#include "tests/testing/http_client.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/shell.h"
#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class BisectE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    synthetic_ = std::make_unique<testing::SyntheticRepo>(
        std::string("bisect-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(synthetic_->ok());
    repo_ = synthetic_->path();
  }
  void TearDown() override { synthetic_.reset(); }

  testing::ShellOutcome Git(const std::string& args) { return synthetic_->Git(args); }

  // Commits 0..n: commit k's level from `level(k)`; commits in `broken` do not compile.
  template <class Level>
  void MakeHistory(int n, Level level, const std::vector<int>& broken = {}) {
    ASSERT_TRUE(synthetic_->MakeHistory(n, level, broken));
  }

  std::string Sha(int k, int n) { return synthetic_->Sha(k, n); }
  static std::string Trim(std::string s) { return testing::SyntheticRepo::Trim(std::move(s)); }

  testing::ShellOutcome Bisect(const std::string& args) {
    // stdout only (the JSON); the progress on stderr goes to the log.
    return testing::RunShell("(cd " + repo_.string() + " &&" + testing::AsanEnv() + " " +
                             PERFWARDEN_BIN_DIR + "/perfwarden bisect " + args + " --build '" +
                             testing::kBuildBench + "' --benchmark BM_Work --format json 2>" +
                             repo_.string() + ".log" + ")");
  }

  json Parse(const testing::ShellOutcome& out) {
    json j = json::parse(out.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out.output << ReadLog();
    return j;
  }

  std::string ReadLog() {
    std::ifstream in(repo_.string() + ".log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::unique_ptr<testing::SyntheticRepo> synthetic_;
  fs::path repo_;
};

TEST_F(BisectE2eTest, FindsTheCulpritOfSixtyFourCommitsAroundABrokenBuild) {
  const int n = 64, k = 37;
  MakeHistory(n, [&](int c) { return c >= k ? 1100.0 : 1000.0; }, {32});
  const std::string before = Trim(Git("status --porcelain").output);
  const testing::ShellOutcome out = Bisect("--good HEAD~64 --bad HEAD");
  ASSERT_EQ(out.exit_code, 0) << out.output << ReadLog();
  const json r = Parse(out);
  ASSERT_EQ(r["culprits"].size(), 1u) << r.dump(2);
  const json& c = r["culprits"][0];
  EXPECT_EQ(c["sha"], Sha(k, n));
  EXPECT_EQ(c["subject"], "commit 37");
  EXPECT_EQ(c["author"], "T");
  EXPECT_TRUE(c["exact"].get<bool>());
  EXPECT_NEAR(c["magnitude"].get<double>(), 0.10, 0.03);
  EXPECT_LT(c["ci"][0].get<double>(), c["magnitude"].get<double>());
  EXPECT_GT(c["ci"][1].get<double>(), c["magnitude"].get<double>());
  EXPECT_TRUE(r["endpoints"]["reproduced"].get<bool>());
  EXPECT_EQ(r["commits"], 64);
  EXPECT_EQ(r["expected_probes"], 6);
  // About log2(64) probes: the broken commit (32, the first probe) costs one more.
  EXPECT_LE(r["probes"].size(), 9u) << r.dump(2);
  EXPECT_GE(r["probes"].size(), 5u) << r.dump(2);
  bool skipped = false;
  for (const json& p : r["probes"]) {
    if (p["verdict"] == "skip") {
      skipped = true;
      EXPECT_EQ(p["sha"], Sha(32, n));
      EXPECT_NE(p["reason"].get<std::string>().find("build failed"), std::string::npos);
    }
  }
  EXPECT_TRUE(skipped) << r.dump(2);
  // The working tree was not touched.
  EXPECT_EQ(Trim(Git("status --porcelain").output), before);
  EXPECT_FALSE(fs::exists(repo_ / "bench"));
  EXPECT_NE(ReadLog().find("step 1 of about 6"), std::string::npos) << ReadLog();
  std::cout << "64 commits: " << r["probes"].size() << " probes, " << r["builds"] << " builds, "
            << r["runs"] << " suite runs\n";
}

TEST_F(BisectE2eTest, ARangeWithoutARegressionSaysSo) {
  MakeHistory(8, [](int) { return 1000.0; });
  const testing::ShellOutcome out = Bisect("--good HEAD~8 --bad HEAD --max-repetitions 20");
  EXPECT_EQ(out.exit_code, 1) << out.output << ReadLog();
  const json r = Parse(out);
  EXPECT_FALSE(r["endpoints"]["reproduced"].get<bool>());
  EXPECT_TRUE(r["culprits"].empty());
  ASSERT_EQ(r["warnings"].size(), 1u);
  EXPECT_NE(r["warnings"][0].get<std::string>().find("does not reproduce"), std::string::npos);
}

TEST_F(BisectE2eTest, TwoStepsAreBothReported) {
  const int n = 32;
  MakeHistory(n, [](int c) { return 1000.0 * (c >= 9 ? 1.04 : 1.0) * (c >= 23 ? 1.08 : 1.0); });
  const testing::ShellOutcome out = Bisect("--good HEAD~32 --bad HEAD --repetitions 20");
  ASSERT_EQ(out.exit_code, 0) << out.output << ReadLog();
  const json r = Parse(out);
  ASSERT_EQ(r["culprits"].size(), 2u) << r.dump(2);
  EXPECT_EQ(r["culprits"][0]["sha"], Sha(23, n));
  EXPECT_NEAR(r["culprits"][0]["magnitude"].get<double>(), 0.08, 0.03);
  EXPECT_LT(r["culprits"][0]["share"].get<double>(),
            0.9);  // part of the change: the sides were searched
  EXPECT_EQ(r["culprits"][1]["sha"], Sha(9, n));
  EXPECT_NEAR(r["culprits"][1]["magnitude"].get<double>(), 0.04, 0.02);
  EXPECT_FALSE(r["warnings"].empty());
}

TEST_F(BisectE2eTest, AnInterruptedBisectResumes) {
  const int n = 32, k = 11;
  MakeHistory(n, [&](int c) { return c >= k ? 1100.0 : 1000.0; });
  const std::string state = (repo_ / "state.json").string();
  const testing::ShellOutcome full = Bisect("--good HEAD~32 --bad HEAD --state " + state);
  ASSERT_EQ(full.exit_code, 0) << full.output << ReadLog();
  const json first = Parse(full);
  ASSERT_EQ(first["culprits"].size(), 1u);
  EXPECT_FALSE(first["resumed"].get<bool>());
  // As if it had stopped early: keep the first three measurements (the ends, then the first
  // probes; the state file's log is in the order they were made).
  std::ifstream in(state);
  json kept = json::parse(in);
  ASSERT_GE(kept["measurements"].size(), 3u) << kept.dump(1);
  json log = json::array();
  for (std::size_t i = 0; i < 3; ++i) log.push_back(kept["measurements"][i]);
  kept["measurements"] = log;
  std::ofstream(state) << kept.dump();
  const testing::ShellOutcome resumed = Bisect("--good HEAD~32 --bad HEAD --state " + state);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output << ReadLog();
  const json second = Parse(resumed);
  EXPECT_TRUE(second["resumed"].get<bool>());
  EXPECT_EQ(second["resumed_measurements"], 3);
  EXPECT_GT(second["measurements"].get<int>(), 3);
  ASSERT_EQ(second["culprits"].size(), 1u);
  EXPECT_EQ(second["culprits"][0]["sha"], Sha(k, n));
  // The replayed measurements decide as they did the first time (the first probe's are all
  // in the kept log unless it needed two doublings).
  ASSERT_FALSE(second["probes"].empty());
  EXPECT_EQ(second["probes"][0]["sha"], first["probes"][0]["sha"]);
  EXPECT_EQ(second["probes"][0]["verdict"], first["probes"][0]["verdict"]);
  EXPECT_EQ(second["probes"][0]["median"], first["probes"][0]["median"]);
  EXPECT_NE(ReadLog().find("(3 measurements)"), std::string::npos) << ReadLog();
  EXPECT_NE(ReadLog().find("resuming"), std::string::npos);
}

// From an alert to the culprit: a nightly measures every 8th commit of main and posts it to a
// real server, whose history analysis raises an alert on the range where the level stepped;
// `perfwarden bisect --alert ID` takes the range, suite, benchmark and metric from it and finds
// the commit inside.
class BisectAlertE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
  }
};

TEST_F(BisectAlertE2eTest, AnAlertsRangeIsBisectedToItsCommit) {
  testing::SyntheticRepo synthetic(
      "bisect-alert",
      "server: {url: \"http://127.0.0.1:" + std::to_string(app_->port()) + "\", project: proj}\n");
  ASSERT_TRUE(synthetic.ok());
  const fs::path& repo = synthetic.path();
  auto git = [&](const std::string& args) { return synthetic.Git(args); };
  // Nightly at 0, 8, ..., 192 (25 points: the history's rank test needs about ten a side); the
  // step lands between 96 and 104.
  const int n = 192, k = 101;
  std::vector<std::string> shas;
  for (int c = 0; c <= n; ++c) {
    std::ofstream(repo / "level.h")
        << "#define LEVEL " << (c >= k ? 1100.0 : 1000.0) << "\n/* commit " << c << " */\n";
    ASSERT_EQ(git("add -A").exit_code, 0);
    ASSERT_EQ(git("commit -q -m 'commit " + std::to_string(c) + "'").exit_code, 0);
    std::string sha = git("rev-parse HEAD").output;
    shas.push_back(sha.substr(0, 40));
  }
  // The nightly's uploads: 10 repetitions around the commit's level, 1% noise.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  int run = 0;
  for (int c = 0; c <= n; c += 8) {
    json values = json::array();
    for (int i = 0; i < 10; ++i) values.push_back((c >= k ? 1100.0 : 1000.0) * (1 + noise(rng)));
    char id[40];
    std::snprintf(id, sizeof id, "00000000-0000-4000-8000-%012d", ++run);
    const json upload = {
        {"id", id},
        {"project", "proj"},
        {"branch", "main"},
        {"commit", {{"sha", shas[static_cast<std::size_t>(c)]}, {"subject", "nightly"}}},
        {"testbed", {{"name", "nightly"}, {"fingerprint", {{"cpu_model", "x"}}}}},
        {"results",
         {{{"suite", "micro"},
           {"benchmark", "BM_Work"},
           {"metric", "real_time"},
           {"unit", "ns"},
           {"direction", "lower"},
           {"values", values}}}}};
    ASSERT_EQ(http_->Post("/api/v1/projects/proj/runs", upload.dump(), admin_).status, 201);
  }
  json alerts;
  for (int i = 0; i < 600; ++i) {
    alerts = json::parse(http_->Get("/api/v1/projects/proj/alerts", admin_).body)["alerts"];
    if (!alerts.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0]["range"]["last_good"]["sha"], shas[96]);
  EXPECT_EQ(alerts[0]["range"]["first_bad"]["sha"], shas[104]);
  const std::string id = std::to_string(alerts[0]["id"].get<int64_t>());
  const testing::ShellOutcome out = testing::RunShell(
      "(cd " + repo.string() + " && PERFWARDEN_TOKEN=" + admin_ + testing::AsanEnv() + " " +
      PERFWARDEN_BIN_DIR + "/perfwarden bisect --alert " + id +
      " --build 'cc -O1 bench.c -o bench -lm' --format json 2>" + repo.string() + ".log)");
  std::ifstream log(repo.string() + ".log");
  const std::string progress(std::istreambuf_iterator<char>(log), {});
  ASSERT_EQ(out.exit_code, 0) << out.output << progress;
  const json r = json::parse(out.output);
  EXPECT_EQ(r["good"], shas[96]);
  EXPECT_EQ(r["bad"], shas[104]);
  EXPECT_EQ(r["suite"], "micro");
  EXPECT_EQ(r["metric"], "real_time");
  ASSERT_EQ(r["culprits"].size(), 1u) << r.dump(2);
  EXPECT_EQ(r["culprits"][0]["sha"], shas[k]);
  EXPECT_NE(progress.find("alert " + id), std::string::npos) << progress;
  // The answer was stored with the alert.
  const json alert = json::parse(http_->Get("/api/v1/projects/proj/alerts/" + id, admin_).body);
  ASSERT_EQ(alert["bisects"].size(), 1u) << alert.dump(2);
  EXPECT_EQ(alert["bisects"][0]["culprit"], shas[k]);
  EXPECT_EQ(alert["bisects"][0]["state"], "succeeded");
  const std::string bisect = std::to_string(alert["bisects"][0]["id"].get<int64_t>());
  const json stored =
      json::parse(http_->Get("/api/v1/projects/proj/bisects/" + bisect, admin_).body);
  EXPECT_EQ(stored["bisect"]["report"]["culprits"][0]["sha"], shas[k]);
  EXPECT_EQ(stored["bisect"]["alert_id"], alerts[0]["id"]);
  EXPECT_EQ(http_->Post("/api/v1/projects/proj/bisects", json{{"good", "x"}}.dump(), admin_).status,
            400);
  // Every commit it measured went to the server too, as runs of branch perfwarden-bisect.
  const json runs = json::parse(
      http_->Get("/api/v1/projects/proj/runs?branch=perfwarden-bisect&limit=100", admin_).body);
  EXPECT_EQ(runs["runs"].size(), r["posted"].get<std::size_t>());
  EXPECT_GE(runs["runs"].size(), r["probes"].size() + 2);  // the probes and the two ends
  bool culprit_posted = false;
  for (const json& stored_run : runs["runs"]) culprit_posted |= stored_run["commit"] == shas[k];
  EXPECT_TRUE(culprit_posted) << runs.dump(2);
}

}  // namespace
}  // namespace perfwarden
