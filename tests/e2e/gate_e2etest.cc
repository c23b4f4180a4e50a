// SPDX-License-Identifier: Apache-2.0
// `perfwarden run` + `perfwarden gate` end to end, as a CI job runs them: the perfwarden binary as
// a subprocess with a clean environment, a real server and PostgreSQL, and a real git repository
// made by the test whose perfwarden.yaml (committed with the code) decides how slow each commit is.
// Suites are commands that sleep, so that the planted changes are exact and the noise is the
// machine's scheduling, not its CPU speed: A/A passes, +10% fails on that suite only, +2% passes,
// the merge-base is the baseline after main moved on, NO_BASELINE passes unless --require-baseline,
// and the spool keeps a run while the server is down.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/http_client.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/shell.h"
#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using Outcome = testing::ShellOutcome;
using testing::RunShell;

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  close(fd);
  return ntohs(addr.sin_port);
}

class GateE2eTest : public testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto admin = auth::GenerateToken();
    ASSERT_TRUE(admin.has_value());
    admin_ = *admin;
    port_ = FreePort();
    StartServer();
    testing::HttpClient http(static_cast<std::uint16_t>(port_));
    ASSERT_EQ(http.Post("/api/v1/projects", json{{"name", "demo"}}.dump(), admin_).status, 201);
    auto token = http.Post("/api/v1/projects/demo/tokens",
                           json{{"name", "ci"}, {"scopes", {"ingest", "read"}}}.dump(), admin_);
    ASSERT_EQ(token.status, 201) << token.body;
    token_ = token.Json()["token"].get<std::string>();

    char pattern[] = "/tmp/perfwarden-gate-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    repo_ = pattern;
    ASSERT_EQ(Git("init -q -b main .").exit_code, 0);
  }
  void TearDown() override {
    if (app_) app_->Stop();
    std::error_code ec;
    if (!repo_.empty()) fs::remove_all(repo_, ec);
  }

  void StartServer() {
    auto app = server::App::Start(
        testing::TestServerConfig(dsn_, admin_, static_cast<std::uint16_t>(port_)));
    ASSERT_TRUE(app.has_value()) << app.error().ToString();
    app_ = std::move(*app);
  }

  Outcome Git(const std::string& args) {
    return RunShell("cd " + repo_.string() + " && GIT_CONFIG_NOSYSTEM=1 HOME=" + repo_.string() +
                    " git -c user.name=Test -c user.email=test@example.com -c "
                    "init.defaultBranch=main " +
                    args);
  }

  // perfwarden.yaml with one command suite per name, each sleeping the given seconds.
  void WriteConfig(const std::vector<std::pair<std::string, double>>& suites) {
    std::ofstream out(repo_ / "perfwarden.yaml");
    out << "version: 1\nserver: {url: \"http://127.0.0.1:" << port_
        << "\", project: demo}\ntarget_branch: main\ntestbed: e2e\nsuites:\n";
    for (const auto& [name, seconds] : suites) {
      out << "  - {name: " << name << ", type: command, command: [\"sleep\", \"" << seconds
          << "\"], repetitions: 10, warmup: 1}\n";
    }
    out << "thresholds:\n  - {benchmark: \"*\", percent: 5}\n";
    if (!gate_yaml_.empty()) out << "gate: " << gate_yaml_ << "\n";
  }
  void Commit(const std::string& message) {
    std::ofstream(repo_ / ".gitignore") << ".perfwarden/\n";
    ASSERT_EQ(Git("add -A").exit_code, 0);
    ASSERT_EQ(Git("commit -q -m '" + message + "'").exit_code, 0);
  }

  // The perfwarden binary in the repository, with a CI-free environment.
  Outcome Perfwarden(const std::string& args) {
    std::string asan;
    if (const char* a = std::getenv("ASAN_OPTIONS")) asan = std::string(" ASAN_OPTIONS=") + a;
    return RunShell(
        "cd " + repo_.string() + " && env -i PATH=/usr/bin:/bin HOME=" + repo_.string() + asan +
        " PERFWARDEN_TOKEN=" + token_ + " " + PERFWARDEN_BIN_DIR + "/perfwarden " + args);
  }

  // The three suites at their base speeds, times the factors. Sleeps of 0.2 s and more: a busy
  // machine delays a wake-up by a few milliseconds, which must stay well under 5%.
  void Suites(double a, double b, double c) {
    WriteConfig({{"alpha", 0.20 * a}, {"beta", 0.25 * b}, {"gamma", 0.30 * c}});
  }

  // The run's newest verdict as GET .../verdict answers it.
  json StoredVerdict() {
    testing::HttpClient http(static_cast<std::uint16_t>(port_));
    std::ifstream in(repo_ / ".perfwarden" / "last-run.json");
    const json last = json::parse(in, nullptr, false);
    if (!last.is_object()) return json::object();
    auto got =
        http.Get("/api/v1/projects/demo/runs/" + last.value("run_id", "") + "/verdict", admin_);
    if (got.status != 200) return json::object();
    return got.Json()["verdict"];
  }

  // A small paired design for sleeping suites (their noise is the scheduler's: ~1%).
  static constexpr const char* kSmallDesign = "--block-repetitions 2 --min-blocks 3 --max-blocks 6";

  std::string admin_, token_;
  std::string gate_yaml_;  // perfwarden.yaml's `gate:` map, when not empty
  int port_ = 0;
  std::unique_ptr<server::App> app_;
  fs::path repo_;
};

TEST_F(GateE2eTest, APlantedTenPercentFailsThatSuiteOnlyAndAnAaRunPasses) {
  Suites(1, 1, 1);
  Commit("base");
  Outcome base = Perfwarden("run");
  ASSERT_EQ(base.exit_code, 0) << base.output;

  // A/A: a PR that changes nothing.
  ASSERT_EQ(Git("checkout -q -b aa").exit_code, 0);
  std::ofstream(repo_ / "README") << "docs only\n";
  Commit("docs");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  Outcome aa = Perfwarden("gate --color never");
  EXPECT_EQ(aa.exit_code, 0) << aa.output;

  // +10% in alpha only.
  ASSERT_EQ(Git("checkout -q main").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -b slow").exit_code, 0);
  Suites(1.10, 1, 1);
  Commit("slower alpha");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  const std::string junit = (repo_ / "junit.xml").string();
  const std::string comment = (repo_ / "comment.md").string();
  Outcome slow = Perfwarden("gate --color never --junit " + junit + " --comment-file " + comment);
  EXPECT_EQ(slow.exit_code, 1) << slow.output;
  EXPECT_NE(slow.output.find("REGRESSION"), std::string::npos) << slow.output;
  std::stringstream xml;
  xml << std::ifstream(junit).rdbuf();
  // One failing testcase: alpha's.
  size_t failures = 0;
  for (size_t at = xml.str().find("<failure"); at != std::string::npos;
       at = xml.str().find("<failure", at + 1)) {
    ++failures;
  }
  EXPECT_EQ(failures, 1u) << xml.str();
  EXPECT_NE(xml.str().find("classname=\"alpha\""), std::string::npos);
  std::stringstream md;
  md << std::ifstream(comment).rdbuf();
  EXPECT_NE(md.str().find("<!-- perfwarden:gate"), std::string::npos) << md.str();
  // The reviewer's link lands on the dashboard's page of this verdict.
  const std::string link = "[Full report](<http://127.0.0.1:" + std::to_string(port_) + "/#/p/";
  EXPECT_NE(md.str().find(link), std::string::npos) << md.str();
  EXPECT_NE(md.str().find("/verdict>)"), std::string::npos) << md.str();

  // +2% everywhere: under the threshold, passes.
  ASSERT_EQ(Git("checkout -q main").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -b small").exit_code, 0);
  Suites(1.02, 1.02, 1.02);
  Commit("a little slower");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  Outcome small = Perfwarden("gate --format json");
  EXPECT_EQ(small.exit_code, 0) << small.output;
}

TEST_F(GateE2eTest, TheMergeBaseIsTheBaselineWhenMainMovedOn) {
  Suites(1, 1, 1);
  Commit("base");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -b feature").exit_code, 0);
  std::ofstream(repo_ / "feature.txt") << "feature\n";
  Commit("feature work");
  // main moves on and gets 30% slower everywhere after the branch point.
  ASSERT_EQ(Git("checkout -q main").exit_code, 0);
  Suites(1.3, 1.3, 1.3);
  Commit("main got slower");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  // The feature branch is compared with the merge-base (the fast base), so it passes; against
  // main's tip it would look 23% faster, and against nothing it would pass anyway, so check
  // the baseline commit too.
  ASSERT_EQ(Git("checkout -q feature").exit_code, 0);
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  Outcome gate = Perfwarden("gate --color never");
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  const std::string merge_base = Git("merge-base feature main").output.substr(0, 7);
  EXPECT_NE(gate.output.find(merge_base), std::string::npos) << merge_base << "\n" << gate.output;
}

TEST_F(GateE2eTest, ConfirmWithdrawsARegressionThatDoesNotReproduceSideBySide) {
  Suites(1, 1, 1);
  Commit("base");
  // The baseline run of main measures alpha 20% faster than the committed code is (as when the
  // machine was faster at that time): the working tree differs from the commit it records.
  Suites(0.8, 1, 1);
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -- perfwarden.yaml").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -b unchanged").exit_code, 0);
  std::ofstream(repo_ / "notes.txt") << "no code change\n";
  Commit("notes");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  // Against the stored baseline alpha looks 25% slower...
  Outcome plain = Perfwarden("gate --color never");
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  // ...but side by side with the baseline commit it is not: withdrawn, the gate passes, and the
  // server stores the amended verdict.
  Outcome confirmed = Perfwarden("gate --confirm " + std::string(kSmallDesign) + " --format json");
  EXPECT_EQ(confirmed.exit_code, 0) << confirmed.output;
  EXPECT_NE(confirmed.output.find("alpha wall_time: not confirmed"), std::string::npos)
      << confirmed.output;
  const json stored = StoredVerdict();
  EXPECT_EQ(stored["outcome"], "pass") << stored.dump();
  EXPECT_FALSE(stored["paired"]["amends"].is_null()) << stored.dump();
  EXPECT_NE(confirmed.output.find("\"verdict_id\": " + std::to_string(stored["id"].get<int>())),
            std::string::npos)
      << confirmed.output;

  // A real +15% in beta on top is confirmed and still fails the gate.
  Suites(1, 1.15, 1);
  Commit("slower beta");
  ASSERT_EQ(Perfwarden("run").exit_code, 0);
  Outcome real = Perfwarden("gate --confirm " + std::string(kSmallDesign) + " --color never");
  EXPECT_EQ(real.exit_code, 1) << real.output;
  EXPECT_NE(real.output.find("beta wall_time: confirmed"), std::string::npos) << real.output;
  EXPECT_EQ(StoredVerdict()["outcome"], "regression");
}

TEST_F(GateE2eTest, APairedGatePrintsTheVerdictTheServerStored) {
  Suites(1, 1, 1);
  Commit("base");
  // No run of main on the server at all: the paired gate measures its own baseline.
  ASSERT_EQ(Git("checkout -q -b slow").exit_code, 0);
  Suites(1.10, 1, 1);
  Commit("slower alpha");
  ASSERT_EQ(Perfwarden("run --repetitions 3").exit_code, 0);
  const std::string junit = (repo_ / "junit.xml").string();
  Outcome gate =
      Perfwarden("gate --paired " + std::string(kSmallDesign) + " --format json --junit " + junit);
  ASSERT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("paired: block 1 of 3"), std::string::npos) << gate.output;
  const json stored = StoredVerdict();
  ASSERT_TRUE(stored.contains("paired")) << stored.dump();
  EXPECT_EQ(stored["outcome"], "regression");
  EXPECT_EQ(stored["baseline"]["selection"], "paired");
  EXPECT_EQ(stored["baseline"]["commit"], Git("rev-parse main").output.substr(0, 40));
  // What the gate printed is the stored verdict: its id, outcome and counts.
  const size_t brace = gate.output.rfind("{\n");
  ASSERT_NE(brace, std::string::npos) << gate.output;
  const json printed = json::parse(gate.output.substr(brace));
  EXPECT_EQ(printed["verdict_id"], stored["id"]);
  EXPECT_EQ(printed["outcome"], stored["outcome"]);
  EXPECT_EQ(printed["mode"], "paired");
  EXPECT_EQ(printed["regressions"], stored["counts"]["regression"]);
  EXPECT_EQ(printed["unstable"], stored["counts"]["unstable"]);
  // Its JUnit fails exactly the rows the stored verdict calls a REGRESSION: alpha's.
  std::stringstream xml;
  xml << std::ifstream(junit).rdbuf();
  size_t regressions = 0;
  for (const json& row : stored["results"]) {
    if (row["verdict"] != "REGRESSION") continue;
    ++regressions;
    EXPECT_EQ(row["suite"], "alpha") << row.dump();
    EXPECT_NE(xml.str().find("classname=\"alpha\""), std::string::npos) << xml.str();
  }
  EXPECT_EQ(regressions, 1u) << stored.dump();
  // The baseline side never became a run: the server holds this run only.
  testing::HttpClient http(static_cast<std::uint16_t>(port_));
  EXPECT_EQ(http.Get("/api/v1/projects/demo/runs", admin_).Json()["runs"].size(), 1u);
}

TEST_F(GateE2eTest, ASlowBaselineCannotMaskARegression) {
  // Four suites: a shift is told from a change of a few benchmarks only with four or more.
  auto four = [&](double a, double rest) {
    WriteConfig({{"alpha", 0.20 * a},
                 {"beta", 0.25 * rest},
                 {"gamma", 0.30 * rest},
                 {"delta", 0.22 * rest}});
  };
  four(1, 1);
  Commit("base");
  // main's run measured while the machine was 40% slower than when the PR runs.
  four(1.4, 1.4);
  ASSERT_EQ(Perfwarden("run --repetitions 3").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -- perfwarden.yaml").exit_code, 0);
  ASSERT_EQ(Git("checkout -q -b slow").exit_code, 0);
  four(1.10, 1);
  Commit("slower alpha");
  ASSERT_EQ(Perfwarden("run --repetitions 3").exit_code, 0);
  // Unpaired, every metric looks 21-29% faster: alpha's +10% would pass as an improvement. The
  // verdict says the metrics moved together; without re-measuring, that is neither a pass nor
  // a failure.
  Outcome held = Perfwarden("gate --no-shift-remeasure --color never");
  EXPECT_EQ(held.exit_code, 3) << held.output;
  EXPECT_NE(held.output.find("moved together"), std::string::npos) << held.output;
  // The gate re-measures side by side and finds the regression.
  Outcome gate = Perfwarden("gate " + std::string(kSmallDesign) + " --color never");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("re-measuring every gated metric side by side"), std::string::npos)
      << gate.output;
  const json stored = StoredVerdict();
  EXPECT_EQ(stored["outcome"], "regression");
  EXPECT_TRUE(stored.contains("paired")) << stored.dump();
}

TEST_F(GateE2eTest, NoBaselinePassesWithAWarningUnlessRequired) {
  Suites(1, 1, 1);
  Commit("base");
  ASSERT_EQ(Git("checkout -q -b lonely").exit_code, 0);
  std::ofstream(repo_ / "x") << "x\n";
  Commit("x");
  ASSERT_EQ(Perfwarden("run --repetitions 3").exit_code, 0);
  Outcome gate = Perfwarden("gate --color never");
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  EXPECT_NE(gate.output.find("--require-baseline"), std::string::npos) << gate.output;
  EXPECT_EQ(Perfwarden("gate --require-baseline").exit_code, 1);
}

TEST_F(GateE2eTest, TheSpoolKeepsARunWhileTheServerIsDown) {
  Suites(1, 1, 1);
  Commit("base");
  app_->Stop();
  app_.reset();
  Outcome run = Perfwarden("run --repetitions 3");
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_EQ(Perfwarden("gate").exit_code, 3);
  size_t spooled = 0;
  for (const auto& entry : fs::directory_iterator(repo_ / ".perfwarden" / "spool")) {
    if (entry.path().extension() == ".json") ++spooled;
  }
  EXPECT_EQ(spooled, 1u);

  StartServer();
  Outcome push = Perfwarden("push --format json");
  ASSERT_EQ(push.exit_code, 0) << push.output;
  EXPECT_NE(push.output.find("\"sent\": 1"), std::string::npos) << push.output;
  EXPECT_EQ(Perfwarden("push --format json").output.find("\"sent\": 1"), std::string::npos);
  testing::HttpClient http(static_cast<std::uint16_t>(port_));
  auto runs = http.Get("/api/v1/projects/demo/runs", admin_);
  ASSERT_EQ(runs.status, 200);
  EXPECT_EQ(runs.Json()["runs"].size(), 1u);
}

TEST_F(GateE2eTest, UsageErrorsExitTwo) {
  std::ofstream(repo_ / "perfwarden.yaml") << "version: 1\nsuites: []\nbogus: 1\n";
  Commit("bad config");
  Outcome bad = Perfwarden("run");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("perfwarden.yaml:"), std::string::npos) << bad.output;
  EXPECT_EQ(Perfwarden("gate --run not-a-run").exit_code, 2);
  EXPECT_EQ(Perfwarden("frobnicate").exit_code, 2);
}

}  // namespace
TEST_F(GateE2eTest, APairedRunMeasuresThisBuildOnceAndTheGateJudgesIt) {
  gate_yaml_ = "{block_repetitions: 2, min_blocks: 3, max_blocks: 6}";
  Suites(1, 1, 1);
  Commit("base");
  ASSERT_EQ(Git("checkout -q -b slow").exit_code, 0);
  Suites(1.10, 1, 1);
  Commit("slower alpha");
  Outcome run = Perfwarden("run --paired");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("paired: block 1 of 3"), std::string::npos) << run.output;
  // The run posted is this build's side: every repetition of every block it was measured in.
  std::ifstream in(repo_ / ".perfwarden" / "last-run.json");
  const std::string run_id = json::parse(in, nullptr, false).value("run_id", "");
  ASSERT_FALSE(run_id.empty());
  testing::HttpClient http(static_cast<std::uint16_t>(port_));
  auto posted = http.Get("/api/v1/projects/demo/runs/" + run_id, admin_);
  ASSERT_EQ(posted.status, 200) << posted.body;
  std::ifstream kept_file(repo_ / ".perfwarden" / "paired-run.json");
  const json kept = json::parse(kept_file, nullptr, false);
  ASSERT_TRUE(kept.is_object());
  EXPECT_EQ(kept["run_id"], run_id);
  std::map<std::string, size_t> head_values;
  for (const json& series : kept["measurement"]["series"]) {
    size_t n = 0;
    for (const json& block : series["blocks"]) n += block["head"].size();
    head_values[series["suite"].get<std::string>()] += n;
  }
  std::map<std::string, size_t> run_values;
  const json upload = posted.Json()["upload"];
  for (const json& result : upload["results"]) {
    run_values[result["suite"].get<std::string>()] += result["values"].size();
  }
  EXPECT_EQ(run_values, head_values) << posted.body;

  // The gate judges that measurement: nothing is measured again.
  Outcome gate = Perfwarden("gate --paired --color never");
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  EXPECT_NE(gate.output.find("nothing is measured again"), std::string::npos) << gate.output;
  EXPECT_EQ(gate.output.find("paired: block"), std::string::npos) << gate.output;
  const json stored = StoredVerdict();
  ASSERT_TRUE(stored.contains("paired")) << stored.dump();
  EXPECT_EQ(stored["run_id"], run_id);
  EXPECT_EQ(stored["outcome"], "regression");
  for (const json& row : stored["results"]) {
    EXPECT_EQ(row["verdict"] == "REGRESSION", row["suite"] == "alpha") << row.dump();
  }

  // Other settings on the command line than the measurement's: measured again, and said why.
  Outcome again = Perfwarden("gate --paired --min-blocks 4 --max-blocks 6 --color never");
  EXPECT_NE(again.output.find("other gate settings"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("paired: block 1 of 4"), std::string::npos) << again.output;

  // --repetitions has no meaning for a paired run.
  Outcome refused = Perfwarden("run --paired --repetitions 5");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--repetitions does not apply to --paired"), std::string::npos);
}

}  // namespace perfwarden
