// SPDX-License-Identifier: Apache-2.0
// Creep end to end: a real server and PostgreSQL, main-branch runs posted over HTTP, the history
// worker taking them in. A benchmark that drifts 0.15% per commit over 60 commits (9% in all, no
// step beyond 5%) raises exactly one alert of kind "creep", with its range and slope, and no step
// alert; a steady benchmark beside it raises nothing; `perfwarden alerts list` and `show` print it
// as a creep; the alerts filter takes kind=creep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/testing/history_wait.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/level_results.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/shell.h"
#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

using nlohmann::json;
using testing::HttpResponse;

std::string Sha(int n) { return testing::TestSha(n, 0xc4ee); }

// About 0.5% run-to-run noise, a fixed pseudo-random sequence.
double RunNoise(int run, int benchmark) {
  uint64_t x = static_cast<uint64_t>(run) * 2654435761u + static_cast<uint64_t>(benchmark) * 97u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (static_cast<double>(x % 2001) / 1000.0 - 1.0) * 0.005;
}

constexpr int kCommits = 150;
constexpr int kRampFrom = 50;  // commits 50..109 each 0.15% of the start level slower
constexpr int kRampTo = 110;

double Drift(int commit) {
  const int steps = std::clamp(commit - kRampFrom + 1, 0, kRampTo - kRampFrom);
  return 1000 * (1 + 0.0015 * steps);
}

class CreepE2eTest : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("proj");
    if (HasFatalFailure()) return;
    HttpResponse r = http_->Post("/api/v1/projects/proj/tokens",
                                 json{{"name", "reader"}, {"scopes", {"read"}}}.dump(), admin_);
    ASSERT_EQ(r.status, 201) << r.body;
    reader_ = json::parse(r.body).value("token", "");
  }

  json Alerts(const std::string& query) {
    HttpResponse r = http_->Get("/api/v1/projects/proj/alerts" + query, reader_);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }

  std::string reader_;
};

TEST_F(CreepE2eTest, ADriftIsOneCreepAlertAndNoStepAlert) {
  for (int commit = 1; commit <= kCommits; ++commit) {
    const json results =
        testing::LevelResults({{"BM_Leak", Drift(commit) * (1 + RunNoise(commit, 0))},
                               {"BM_Steady", 2000 * (1 + RunNoise(commit, 1))}});
    const json upload = {{"id", testing::TestRunId(commit)},
                         {"project", "proj"},
                         {"branch", "main"},
                         {"commit",
                          {{"sha", Sha(commit)},
                           {"subject", "commit " + std::to_string(commit)},
                           {"parents", json::array({Sha(commit - 1)})}}},
                         {"testbed", {{"name", "bed"}, {"fingerprint", {{"cpu_model", "c"}}}}},
                         {"results", results}};
    HttpResponse r = http_->Post("/api/v1/projects/proj/runs", upload.dump(), admin_);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  testing::WaitForHistory(dsn_);

  const json all = Alerts("?state=all");
  ASSERT_EQ(all["alerts"].size(), 1u) << all.dump(2);
  const json& alert = all["alerts"][0];
  EXPECT_EQ(alert["kind"], "creep");
  EXPECT_EQ(alert["series"]["benchmark"], "BM_Leak");
  EXPECT_EQ(alert["cause"], "code");
  EXPECT_EQ(alert["state"], "open");
  EXPECT_NEAR(alert["magnitude"].get<double>(), 0.09, 0.015);
  EXPECT_LT(alert["p_value"].get<double>(), 1e-4);
  EXPECT_EQ(alert["detectors"], json::array({"mann-kendall", "theil-sen"}));
  ASSERT_TRUE(alert.contains("creep")) << alert.dump(2);
  const json& creep = alert["creep"];
  EXPECT_EQ(creep["start"], alert["position"]);
  // Positions are 0-based: commit c is position c - 1; the range overlaps the ramp.
  EXPECT_LT(creep["start"].get<int>(), kRampTo - 1);
  EXPECT_GT(creep["end"].get<int>(), kRampFrom - 1);
  EXPECT_NEAR(creep["slope"].get<double>(), 0.0015, 0.0004);
  EXPECT_LT(creep["slope_low"].get<double>(), creep["slope"].get<double>());
  EXPECT_GT(creep["slope_high"].get<double>(), creep["slope"].get<double>());
  const int start = creep["start"].get<int>();
  EXPECT_EQ(alert["range"]["first_bad"]["sha"], Sha(start + 1));
  EXPECT_EQ(alert["range"]["last_good"]["sha"], Sha(start));

  EXPECT_EQ(Alerts("?kind=creep")["alerts"].size(), 1u);
  EXPECT_TRUE(Alerts("?kind=regression&state=all")["alerts"].empty());
  EXPECT_TRUE(Alerts("?kind=improvement&state=all")["alerts"].empty());
  EXPECT_EQ(http_->Get("/api/v1/projects/proj/alerts?kind=drift", reader_).status, 400);
  const json summary = json::parse(http_->Get("/api/v1/projects/proj/alert-summary", reader_).body);
  EXPECT_EQ(summary["by_kind"], json({{"regression", 0}, {"improvement", 0}, {"creep", 1}}));

  // The CLI prints it as a creep with its range and slope.
  auto dir = testing::MakePgTempDir("perfwarden-creep-cli");
  ASSERT_TRUE(dir.has_value());
  const std::string config = (*dir / "perfwarden.yaml").string();
  {
    std::ofstream out(config);
    out << "version: 1\nserver: {url: \"http://127.0.0.1:" << app_->port()
        << "\", project: proj}\nsuites:\n  - {name: s, type: command, command: [\"true\"]}\n";
  }
  auto perfwarden = [&](const std::string& args) {
    return testing::RunShell("PERFWARDEN_TOKEN=" + reader_ + " " + PERFWARDEN_BIN_DIR +
                             "/perfwarden alerts " + args + " --config " + config);
  };
  const std::string range = " over points " + std::to_string(start) + "-" +
                            std::to_string(creep["end"].get<int>()) + ", +0.1";
  testing::ShellOutcome list = perfwarden("list --kind creep");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("creep"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find(range), std::string::npos) << list.output;
  testing::ShellOutcome show = perfwarden("show " + std::to_string(alert["id"].get<int64_t>()));
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find(range), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("%/point ["), std::string::npos) << show.output;
}

}  // namespace
}  // namespace perfwarden
