// SPDX-License-Identifier: Apache-2.0
// History analysis end to end: a real server and PostgreSQL, main-branch runs posted
// over HTTP, the background worker taking them into history. A planted 8% step raises exactly
// one alert with the right commit range; triage needs the triage scope, records who/when/note
// and re-baselines the series, after which a later step raises a new alert; an improvement is
// recorded; a step where the testbed fingerprint changed is labelled an environment change; the
// webhook receives the new alerts; change points of a whole series come on demand.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "server/app.h"
#include "server/auth/tokens.h"
#include "tests/testing/history_wait.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/level_results.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/shell.h"
#include "tests/testing/test_server.h"
#include "tests/testing/webhook_sink.h"

namespace perfwarden {
namespace {

using nlohmann::json;
using testing::HttpClient;
using testing::HttpResponse;

std::string RunId(int n) { return testing::TestRunId(n); }

std::string Sha(int n) { return testing::TestSha(n, 0xc0de); }

// Run-to-run noise of about 1% (a fixed pseudo-random sequence), and 10 repetitions with
// 0.5% spread inside a run.
double RunNoise(int run, int benchmark) {
  uint64_t x = static_cast<uint64_t>(run) * 2654435761u + static_cast<uint64_t>(benchmark) * 97u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (static_cast<double>(x % 2001) / 1000.0 - 1.0) * 0.01;
}

struct Levels {
  double a = 1000, b = 2000, c = 3000;
  std::string cpu = "cpu-a";
};

json Upload(int run, int commit, const Levels& levels, const std::string& project = "proj") {
  std::vector<std::pair<std::string, double>> centers = {
      {"BM_A", levels.a}, {"BM_B", levels.b}, {"BM_C", levels.c}};
  int k = 0;
  for (auto& [name, center] : centers) center *= 1 + RunNoise(run, k++);
  const json results = testing::LevelResults(centers);
  return {{"id", RunId(run)},
          {"project", project},
          {"branch", "main"},
          {"commit",
           {{"sha", Sha(commit)},
            {"subject", "commit " + std::to_string(commit)},
            {"parents", json::array({Sha(commit - 1)})}}},
          {"testbed", {{"name", "bed"}, {"fingerprint", {{"cpu_model", levels.cpu}}}}},
          {"results", results}};
}

class HistoryE2eTest : public testing::ServerTest {
 protected:
  void Customize(config::ServerConfig& config) override {
    config.history.webhook_url = sink_.url();
    config.history.public_url = "http://perfwarden.example";
  }
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* project : {"proj", "envproj"}) {
      CreateProject(project);
      if (HasFatalFailure()) return;
    }
    ci_ = Token("proj", "ci", {"ingest", "read"});
    triager_ = Token("proj", "triager", {"triage", "read"});
    reader_ = Token("proj", "reader", {"read"});
  }

  std::string Token(const std::string& project, const std::string& name,
                    const std::vector<std::string>& scopes) {
    HttpResponse r = http_->Post("/api/v1/projects/" + project + "/tokens",
                                 json{{"name", name}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body).value("token", "");
  }

  void Post(int run, int commit, const Levels& levels, const std::string& project = "proj") {
    HttpResponse r = http_->Post("/api/v1/projects/" + project + "/runs",
                                 Upload(run, commit, levels, project).dump(), admin_);
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // Waits until the worker has taken every stored run into history.
  void WaitForHistory() { testing::WaitForHistory(dsn_); }

  json Alerts(const std::string& query, const std::string& token) {
    HttpResponse r = http_->Get("/api/v1/projects/proj/alerts" + query, token);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }

  HttpResponse Patch(int64_t id, const json& body, const std::string& token) {
    return http_->Request("PATCH", "/api/v1/projects/proj/alerts/" + std::to_string(id), token,
                          body.dump());
  }

  testing::WebhookSink sink_;
  std::string ci_, triager_, reader_;
};

TEST_F(HistoryE2eTest, PlantedStepAlertTriageRebaselineAndANewStep) {
  // 40 commits: BM_A steps up 8% at commit 20 (a regression), BM_C down 10% at commit 30 (an
  // improvement), BM_B stays.
  int run = 0;
  for (int commit = 1; commit <= 40; ++commit) {
    Levels levels;
    if (commit >= 20) levels.a *= 1.08;
    if (commit >= 30) levels.c *= 0.90;
    Post(++run, commit, levels);
  }
  WaitForHistory();

  json regressions = Alerts("?kind=regression", reader_);
  ASSERT_EQ(regressions["alerts"].size(), 1u) << regressions.dump(2);
  const json& alert = regressions["alerts"][0];
  EXPECT_EQ(alert["series"]["benchmark"], "BM_A");
  EXPECT_EQ(alert["state"], "open");
  EXPECT_EQ(alert["cause"], "code");
  EXPECT_EQ(alert["range"]["last_good"]["sha"], Sha(19));
  EXPECT_EQ(alert["range"]["first_bad"]["sha"], Sha(20));
  EXPECT_EQ(alert["range"]["first_bad"]["subject"], "commit 20");
  EXPECT_EQ(alert["range"]["first_bad"]["run_id"], RunId(20));
  EXPECT_NEAR(alert["magnitude"].get<double>(), 0.08, 0.01);
  ASSERT_TRUE(alert["ci"].is_array());
  EXPECT_LT(alert["ci"][0].get<double>(), alert["magnitude"].get<double>());
  EXPECT_GT(alert["ci"][1].get<double>(), alert["magnitude"].get<double>());
  EXPECT_LT(alert["p_value"].get<double>(), 0.001);
  EXPECT_GE(alert["q_value"].get<double>(), alert["p_value"].get<double>());
  EXPECT_EQ(alert["detectors"][0], "e-divisive");
  EXPECT_EQ(alert["group"], Sha(19).substr(0, 12) + ".." + Sha(20).substr(0, 12));

  json improvements = Alerts("?kind=improvement", reader_);
  ASSERT_EQ(improvements["alerts"].size(), 1u) << improvements.dump(2);
  EXPECT_EQ(improvements["alerts"][0]["series"]["benchmark"], "BM_C");
  EXPECT_EQ(improvements["alerts"][0]["range"]["first_bad"]["sha"], Sha(30));
  EXPECT_NEAR(improvements["alerts"][0]["magnitude"].get<double>(), -0.10, 0.01);

  const int64_t id = alert["id"].get<int64_t>();
  HttpResponse detail = http_->Get("/api/v1/projects/proj/alerts/" + std::to_string(id), reader_);
  ASSERT_EQ(detail.status, 200) << detail.body;
  const json one = json::parse(detail.body);
  ASSERT_EQ(one["excerpt"].size(), 20u);
  EXPECT_EQ(one["excerpt"][10]["sha"], Sha(20));
  EXPECT_TRUE(one["excerpt"][10]["first_bad"].get<bool>());
  EXPECT_EQ(one["excerpt"][10]["values"].size(), 10u);
  ASSERT_EQ(one["history"].size(), 1u);
  EXPECT_EQ(one["history"][0]["state"], "open");

  // Triage: the scope, the body, then an acknowledgement with a note.
  EXPECT_EQ(Patch(id, {{"state", "acknowledged"}}, reader_).status, 403);
  EXPECT_EQ(Patch(id, {{"state", "acknowledged"}}, ci_).status, 403);
  EXPECT_EQ(Patch(id, {{"state", "acknowledged"}}, "").status, 401);
  HttpResponse bad = Patch(id, {{"state", "closed"}}, triager_);
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("\"state\""), std::string::npos) << bad.body;
  EXPECT_EQ(Patch(id, {{"colour", "red"}}, triager_).status, 400);
  EXPECT_EQ(Patch(999999, {{"state", "resolved"}}, triager_).status, 404);
  // A duplicate key (no "last one wins") and a NUL in the note (it used to be stored truncated
  // to "a") are refused whole: the alert is still open with nothing noted.
  for (const std::string raw :
       {R"({"state":"resolved","state":"acknowledged"})", R"({"note":"a\u0000b"})"}) {
    HttpResponse refused = http_->Request(
        "PATCH", "/api/v1/projects/proj/alerts/" + std::to_string(id), triager_, raw);
    EXPECT_EQ(refused.status, 400) << raw << ": " << refused.body;
    EXPECT_EQ(json::parse(refused.body)["error"]["code"], "INVALID_ARGUMENT") << refused.body;
  }
  const json untouched =
      json::parse(http_->Get("/api/v1/projects/proj/alerts/" + std::to_string(id), reader_).body);
  EXPECT_EQ(untouched["state"], "open") << untouched.dump();
  EXPECT_NE(untouched["note"], "a") << untouched.dump();
  EXPECT_EQ(untouched["history"].size(), 1u) << untouched.dump();
  HttpResponse acked =
      Patch(id, {{"state", "acknowledged"}, {"note", "known: new allocator"}}, triager_);
  ASSERT_EQ(acked.status, 200) << acked.body;
  const json ack = json::parse(acked.body);
  EXPECT_EQ(ack["state"], "acknowledged");
  EXPECT_EQ(ack["note"], "known: new allocator");
  EXPECT_EQ(ack["state_changed_by"], "triager");
  EXPECT_TRUE(ack["state_changed_at"].is_string());
  EXPECT_EQ(Alerts("?kind=regression", reader_)["alerts"].size(), 0u);  // open only
  EXPECT_EQ(Alerts("?kind=regression&state=acknowledged", reader_)["alerts"].size(), 1u);

  // After the acknowledgement the new level is the baseline: 30 more commits at it raise
  // nothing; then a second step (+10%) raises a new alert with its own range.
  for (int commit = 41; commit <= 70; ++commit) {
    Levels levels;
    levels.a *= 1.08;
    levels.c *= 0.90;
    Post(++run, commit, levels);
  }
  WaitForHistory();
  EXPECT_EQ(Alerts("?kind=regression&state=all", reader_)["alerts"].size(), 1u);
  for (int commit = 71; commit <= 95; ++commit) {
    Levels levels;
    levels.a *= 1.08 * 1.10;
    levels.c *= 0.90;
    Post(++run, commit, levels);
  }
  WaitForHistory();
  json later = Alerts("?kind=regression", reader_);
  ASSERT_EQ(later["alerts"].size(), 1u) << later.dump(2);
  EXPECT_EQ(later["alerts"][0]["range"]["first_bad"]["sha"], Sha(71));
  EXPECT_NEAR(later["alerts"][0]["magnitude"].get<double>(), 0.10, 0.01);

  // Paging over every alert, newest first.
  json page1 = Alerts("?state=all&limit=2", reader_);
  ASSERT_EQ(page1["alerts"].size(), 2u);
  ASSERT_TRUE(page1["next_cursor"].is_string());
  json page2 =
      Alerts("?state=all&limit=2&cursor=" + page1["next_cursor"].get<std::string>(), reader_);
  ASSERT_EQ(page2["alerts"].size(), 1u);
  EXPECT_TRUE(page2["next_cursor"].is_null());
  EXPECT_GT(page1["alerts"][1]["id"].get<int64_t>(), page2["alerts"][0]["id"].get<int64_t>());
  EXPECT_EQ(http_->Get("/api/v1/projects/proj/alerts?state=bogus", reader_).status, 400);

  // The whole series on demand: both steps of BM_A, whatever the triage.
  HttpResponse cps =
      http_->Get("/api/v1/projects/proj/change-points?benchmark=BM_A&metric=real_time", reader_);
  ASSERT_EQ(cps.status, 200) << cps.body;
  const json points = json::parse(cps.body);
  EXPECT_EQ(points["points"], 95);
  ASSERT_EQ(points["change_points"].size(), 2u) << points.dump(2);
  EXPECT_EQ(points["change_points"][0]["first_bad"]["sha"], Sha(20));
  EXPECT_EQ(points["change_points"][1]["first_bad"]["sha"], Sha(71));
  EXPECT_EQ(
      http_->Get("/api/v1/projects/proj/change-points?benchmark=BM_Z&metric=real_time", reader_)
          .status,
      404);

  // The webhook heard of every alert, as JSON with Slack's "text".
  int announced = 0;
  for (int i = 0; i < 100 && announced < 3; ++i) {
    announced = 0;
    for (const std::string& body : sink_.bodies()) {
      const json hook = json::parse(body);
      EXPECT_NE(hook["text"].get<std::string>().find("perfwarden:"), std::string::npos);
      // Links go to the alert on the dashboard (history.public_url is set above).
      EXPECT_NE(hook["text"].get<std::string>().find(
                    "<http://perfwarden.example/#/p/proj/alerts?state=all&alert="),
                std::string::npos)
          << hook["text"];
      announced += static_cast<int>(hook["alerts"].size());
    }
    if (announced < 3) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(announced, 3);
}

TEST_F(HistoryE2eTest, AStepWhereTheFingerprintChangedIsAnEnvironmentChange) {
  for (int commit = 1; commit <= 30; ++commit) {
    Levels levels;
    if (commit >= 15) {
      levels.cpu = "cpu-b";
      levels.b *= 1.12;
    }
    Post(commit, commit, levels, "envproj");
  }
  WaitForHistory();
  HttpResponse r = http_->Get("/api/v1/projects/envproj/alerts", admin_);
  ASSERT_EQ(r.status, 200) << r.body;
  const json alerts = json::parse(r.body)["alerts"];
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump(2);
  EXPECT_EQ(alerts[0]["series"]["benchmark"], "BM_B");
  EXPECT_EQ(alerts[0]["cause"], "environment");
  EXPECT_EQ(alerts[0]["range"]["first_bad"]["sha"], Sha(15));
  EXPECT_EQ(alerts[0]["environment_change"]["changed"], json::array({"cpu_model"}));
  EXPECT_EQ(alerts[0]["environment_change"]["after"]["cpu_model"], "cpu-b");
}

// `perfwarden alerts` as an on-call engineer uses it, against the real server.
TEST_F(HistoryE2eTest, TheAlertsCommandListsShowsAndTriages) {
  for (int commit = 1; commit <= 36; ++commit) {
    Levels levels;
    if (commit >= 18) levels.a *= 1.08;
    Post(commit, commit, levels);
  }
  WaitForHistory();
  auto dir = testing::MakePgTempDir("perfwarden-alerts-cli");
  ASSERT_TRUE(dir.has_value());
  const std::string config = (*dir / "perfwarden.yaml").string();
  {
    std::ofstream out(config);
    out << "version: 1\nserver: {url: \"http://127.0.0.1:" << app_->port()
        << "\", project: proj}\nsuites:\n  - {name: s, type: command, command: [\"true\"]}\n";
  }
  auto perfwarden = [&](const std::string& token, const std::string& args) {
    return testing::RunShell("PERFWARDEN_TOKEN=" + token + " " + PERFWARDEN_BIN_DIR +
                             "/perfwarden alerts " + args + " --config " + config);
  };
  testing::ShellOutcome list = perfwarden(reader_, "list");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("BM_A"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find(Sha(17).substr(0, 12)), std::string::npos) << list.output;
  testing::ShellOutcome json_list = perfwarden(reader_, "list --format json");
  ASSERT_EQ(json_list.exit_code, 0) << json_list.output;
  const json listed = json::parse(json_list.output);
  ASSERT_EQ(listed["alerts"].size(), 1u);
  const std::string id = std::to_string(listed["alerts"][0]["id"].get<int64_t>());

  testing::ShellOutcome show = perfwarden(reader_, "show " + id);
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("perfwarden bisect --good " + Sha(17) + " --bad " + Sha(18)),
            std::string::npos)
      << show.output;

  testing::ShellOutcome denied = perfwarden(reader_, "ack " + id);
  EXPECT_EQ(denied.exit_code, 2) << denied.output;
  EXPECT_NE(denied.output.find("403"), std::string::npos) << denied.output;
  testing::ShellOutcome missing = perfwarden(triager_, "resolve 999999");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  testing::ShellOutcome ack = perfwarden(triager_, "ack " + id + " --note 'bisecting'");
  ASSERT_EQ(ack.exit_code, 0) << ack.output;
  testing::ShellOutcome fp = perfwarden(triager_, "false-positive " + id + " --note 'noisy host'");
  ASSERT_EQ(fp.exit_code, 0) << fp.output;
  HttpResponse after = http_->Get("/api/v1/projects/proj/alerts/" + id, reader_);
  const json alert = json::parse(after.body);
  EXPECT_EQ(alert["state"], "false_positive");
  EXPECT_EQ(alert["note"], "noisy host");
  ASSERT_EQ(alert["history"].size(), 3u);
  EXPECT_EQ(alert["history"][1]["state"], "acknowledged");
  EXPECT_EQ(alert["history"][1]["note"], "bisecting");
  EXPECT_EQ(alert["history"][1]["by"], "triager");
  testing::ShellOutcome empty = perfwarden(reader_, "list");
  EXPECT_EQ(empty.exit_code, 0) << empty.output;
  testing::ShellOutcome summary = perfwarden(reader_, "summary");
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("false positive 1"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("triaged regressions: 1, false positives: 100.0%"),
            std::string::npos)
      << summary.output;
  const json counts =
      json::parse(http_->Get("/api/v1/projects/proj/alert-summary?kind=regression", reader_).body);
  EXPECT_EQ(counts["total"], 1);
  EXPECT_EQ(counts["by_state"]["false_positive"], 1);
  EXPECT_EQ(counts["false_positive_rate"], 1.0);
  std::filesystem::remove_all(*dir);
}

}  // namespace
}  // namespace perfwarden
