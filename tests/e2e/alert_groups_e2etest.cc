// SPDX-License-Identifier: Apache-2.0
// Alert groups end to end (issue 28): a real server and PostgreSQL, main-branch runs of two
// testbeds that measure different commits, the history worker, a webhook receiver. One culprit
// that moves five benchmarks on both testbeds gives alerts whose ranges differ but overlap:
// exactly one group (with the narrowest common range), one webhook message and one bisect (a
// second request for another member answers the first); the group is triaged at once. A step
// that reverts a few points later closes its alert as went_away, recorded in its history.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <thread>
#include <vector>

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
using testing::HttpResponse;

std::string Sha(int n) { return testing::TestSha(n, 0x96f0); }

// Run-to-run noise of about 1% (a fixed pseudo-random sequence).
double RunNoise(int run, int benchmark) {
  uint64_t x = static_cast<uint64_t>(run) * 2654435761u + static_cast<uint64_t>(benchmark) * 97u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (static_cast<double>(x % 2001) / 1000.0 - 1.0) * 0.01;
}

class AlertGroupsE2eTest : public testing::ServerTest {
 protected:
  void Customize(config::ServerConfig& config) override {
    config.history.webhook_url = sink_.url();
    config.history.public_url = "http://perfwarden.example";
  }
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    CreateProject("grp");
    if (HasFatalFailure()) return;
    triager_ = Token("triager", {"triage", "read"});
    reader_ = Token("reader", {"read"});
    ci_ = Token("ci", {"ingest", "read"});
  }

  std::string Token(const std::string& name, const std::vector<std::string>& scopes) {
    HttpResponse r = http_->Post("/api/v1/projects/grp/tokens",
                                 json{{"name", name}, {"scopes", scopes}}.dump(), admin_);
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body).value("token", "");
  }

  // A run of `testbed` at `commit`: each benchmark at its level (1000 * (k + 1)) times `factor`
  // when it is among `moved`, with the run's noise.
  void Post(const std::string& testbed, int commit, const std::vector<std::string>& benchmarks,
            const std::set<std::string>& moved, double factor) {
    std::vector<std::pair<std::string, double>> levels;
    for (std::size_t k = 0; k < benchmarks.size(); ++k) {
      double level = 1000.0 * static_cast<double>(k + 1) * (1 + RunNoise(++run_, int(k)));
      if (moved.count(benchmarks[k]) > 0) level *= factor;
      levels.emplace_back(benchmarks[k], level);
    }
    const json upload = {{"id", testing::TestRunId(run_)},
                         {"project", "grp"},
                         {"branch", "main"},
                         {"commit",
                          {{"sha", Sha(commit)},
                           {"subject", "commit " + std::to_string(commit)},
                           {"parents", json::array({Sha(commit - 1)})}}},
                         {"testbed", {{"name", testbed}, {"fingerprint", {{"cpu_model", "x"}}}}},
                         {"results", testing::LevelResults(levels)}};
    HttpResponse r = http_->Post("/api/v1/projects/grp/runs", upload.dump(), admin_);
    ASSERT_EQ(r.status, 201) << r.body;
  }

  json Get(const std::string& path, const std::string& token) {
    HttpResponse r = http_->Get("/api/v1/projects/grp" + path, token);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body, nullptr, false);
  }

  // A remote bisect of `alert`'s range on its testbed.
  HttpResponse Bisect(const json& alert, int good, int bad) {
    json commits = json::array();
    for (int c = good; c <= bad; ++c) {
      commits.push_back({{"sha", Sha(c)}, {"subject", "commit " + std::to_string(c)}});
    }
    const json body = {{"remote", true},     {"testbed", alert["series"]["testbed"]},
                       {"good", Sha(good)},  {"bad", Sha(bad)},
                       {"commits", commits}, {"benchmarks", {alert["series"]["benchmark"]}},
                       {"suite", "s"},       {"metric", "real_time"},
                       {"build", ""},        {"alert_id", alert["id"]}};
    return http_->Post("/api/v1/projects/grp/bisects", body.dump(), ci_);
  }

  // The webhook's messages once the worker has had its say: at least `at_least`, then a moment
  // for any further one (the messages go out right after each run's commit).
  std::vector<json> Messages(std::size_t at_least) {
    for (int i = 0; i < 200 && sink_.bodies().size() < at_least; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::vector<json> out;
    for (const std::string& body : sink_.bodies()) out.push_back(json::parse(body));
    return out;
  }

  // Commit 20 makes BM_A..BM_E 10% slower; BM_F does not move. bed-1 measures the odd commits
  // (its range is 19..21), bed-2 every commit but 19..21 (its range is 18..22): the group's
  // range is their intersection, 19..21.
  void PostOneCulpritOnTwoTestbeds() {
    const std::vector<std::string> bed1 = {"BM_A", "BM_B", "BM_C", "BM_F"};
    const std::vector<std::string> bed2 = {"BM_C", "BM_D", "BM_E"};
    const std::set<std::string> moved = {"BM_A", "BM_B", "BM_C", "BM_D", "BM_E"};
    for (int commit = 1; commit <= 40; ++commit) {
      const double factor = commit >= 20 ? 1.10 : 1.0;
      if (commit % 2 == 1) {
        ASSERT_NO_FATAL_FAILURE(Post("bed-1", commit, bed1, moved, factor));
      }
      if (commit < 19 || commit > 21) {
        ASSERT_NO_FATAL_FAILURE(Post("bed-2", commit, bed2, moved, factor));
      }
    }
    testing::WaitForHistory(dsn_);
  }

  testing::WebhookSink sink_;
  std::string triager_, reader_, ci_;
  int run_ = 0;
};

TEST_F(AlertGroupsE2eTest, OneCulpritOnTwoTestbedsIsOneGroupOneMessageOneBisect) {
  ASSERT_NO_FATAL_FAILURE(PostOneCulpritOnTwoTestbeds());
  const json alerts = Get("/alerts?state=all", reader_)["alerts"];
  ASSERT_EQ(alerts.size(), 6u) << alerts.dump(2);  // BM_C on both testbeds
  std::set<int64_t> group_ids;
  for (const json& a : alerts) {
    EXPECT_EQ(a["kind"], "regression");
    group_ids.insert(a["group_id"].get<int64_t>());
    const std::string good = a["range"]["last_good"]["sha"];
    EXPECT_TRUE(a["series"]["testbed"] == "bed-1" ? good == Sha(19) : good == Sha(18)) << a;
  }
  ASSERT_EQ(group_ids.size(), 1u);
  const int64_t group_id = *group_ids.begin();

  const json groups = Get("/alert-groups", reader_);
  ASSERT_EQ(groups["groups"].size(), 1u) << groups.dump(2);
  const json& group = groups["groups"][0];
  EXPECT_EQ(group["id"], group_id);
  EXPECT_EQ(group["state"], "open");
  EXPECT_EQ(group["member_count"], 6);
  EXPECT_EQ(group["states"]["open"], 6);
  EXPECT_EQ(group["range"]["last_good"]["sha"], Sha(19));
  EXPECT_EQ(group["range"]["first_bad"]["sha"], Sha(21));
  EXPECT_TRUE(group["bisect_id"].is_null());

  // One webhook message, for the group, naming its range and members.
  const std::vector<json> messages = Messages(1);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["group"]["id"], group_id);
  const std::string text = messages[0]["text"];
  EXPECT_NE(text.find("alert group " + std::to_string(group_id)), std::string::npos) << text;
  EXPECT_NE(text.find(Sha(19).substr(0, 12) + ".." + Sha(21).substr(0, 12)), std::string::npos)
      << text;
  EXPECT_NE(text.find("/#/p/grp/alerts?state=all&group=" + std::to_string(group_id)),
            std::string::npos)
      << text;

  // One bisect: the most significant member's is queued; another member's request (on the
  // other testbed) answers that one; a posted local answer for a third is refused naming it.
  const json detail = Get("/alert-groups/" + std::to_string(group_id), reader_);
  ASSERT_EQ(detail["members"].size(), 6u);
  EXPECT_EQ(detail["members"][0]["id"], detail["most_significant"]);
  const json& first = detail["members"][0];
  const bool first_on_bed1 = first["series"]["testbed"] == "bed-1";
  HttpResponse queued = Bisect(first, first_on_bed1 ? 19 : 18, first_on_bed1 ? 21 : 22);
  ASSERT_EQ(queued.status, 201) << queued.body;
  const int64_t bisect_id = json::parse(queued.body)["bisect"]["id"];
  const json* other = nullptr;
  for (const json& m : detail["members"]) {
    if ((m["series"]["testbed"] == "bed-1") != first_on_bed1) other = &m;
  }
  ASSERT_NE(other, nullptr);
  HttpResponse again = Bisect(*other, first_on_bed1 ? 18 : 19, first_on_bed1 ? 22 : 21);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body)["bisect"]["id"], bisect_id);
  const json answer = {{"good", Sha(19)},
                       {"bad", Sha(21)},
                       {"culprits", json::array({{{"sha", Sha(20)}}})},
                       {"alert_id", detail["members"][2]["id"]}};
  HttpResponse refused = http_->Post("/api/v1/projects/grp/bisects", answer.dump(), ci_);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_NE(refused.body.find("bisect " + std::to_string(bisect_id)), std::string::npos)
      << refused.body;
  {
    pqxx::connection conn(dsn_);
    pqxx::nontransaction tx(conn);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM bisect_jobs")[0][0].as<int>(), 1);
  }
  const json bisected = Get("/alert-groups/" + std::to_string(group_id), reader_);
  EXPECT_EQ(bisected["bisect_id"], bisect_id);
  ASSERT_EQ(bisected["bisects"].size(), 1u);

  // Triage of the whole group: the scope, the body, then every member at once.
  const std::string path = "/api/v1/projects/grp/alert-groups/" + std::to_string(group_id);
  EXPECT_EQ(http_->Request("PATCH", path, reader_, R"({"state":"acknowledged"})").status, 403);
  HttpResponse bad = http_->Request("PATCH", path, triager_, R"({"state":"closed"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("\"state\""), std::string::npos) << bad.body;
  EXPECT_EQ(http_
                ->Request("PATCH", "/api/v1/projects/grp/alert-groups/999999", triager_,
                          R"({"state":"resolved"})")
                .status,
            404);
  HttpResponse acked =
      http_->Request("PATCH", path, triager_, R"({"state":"acknowledged","note":"bisecting 20"})");
  ASSERT_EQ(acked.status, 200) << acked.body;
  const json triaged = json::parse(acked.body);
  EXPECT_EQ(triaged["state"], "closed");
  EXPECT_EQ(triaged["states"]["acknowledged"], 6);
  for (const json& m : triaged["members"]) {
    EXPECT_EQ(m["state"], "acknowledged");
    EXPECT_EQ(m["note"], "bisecting 20");
    EXPECT_EQ(m["state_changed_by"], "triager");
    const json one = Get("/alerts/" + m["id"].dump(), reader_);
    ASSERT_EQ(one["history"].size(), 2u) << one["history"];
    EXPECT_EQ(one["history"][1]["by"], "triager");
  }
  EXPECT_EQ(Get("/alert-groups", reader_)["groups"].size(), 0u);
  EXPECT_EQ(Get("/alert-groups?state=closed", reader_)["groups"].size(), 1u);
  EXPECT_EQ(http_->Get("/api/v1/projects/grp/alert-groups?state=bogus", reader_).status, 400);
}

TEST_F(AlertGroupsE2eTest, AStepThatRevertsWentAway) {
  // BM_A 10% slower from commit 31 to 37, then back; BM_B never moves.
  const std::vector<std::string> benchmarks = {"BM_A", "BM_B"};
  for (int commit = 1; commit <= 50; ++commit) {
    const double factor = commit >= 31 && commit <= 37 ? 1.10 : 1.0;
    ASSERT_NO_FATAL_FAILURE(Post("bed-1", commit, benchmarks, {"BM_A"}, factor));
  }
  testing::WaitForHistory(dsn_);
  const json alerts = Get("/alerts?state=all", reader_)["alerts"];
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump(2);  // the revert is not an alert of its own
  const json& alert = alerts[0];
  EXPECT_EQ(alert["range"]["first_bad"]["sha"], Sha(31));
  EXPECT_EQ(alert["state"], "went_away");
  EXPECT_EQ(alert["state_changed_by"], "perfwarden");
  const json one = Get("/alerts/" + alert["id"].dump(), reader_);
  ASSERT_EQ(one["history"].size(), 2u) << one["history"];
  EXPECT_EQ(one["history"][1]["state"], "went_away");
  EXPECT_EQ(one["history"][1]["by"], "perfwarden");
  EXPECT_NE(one["history"][1]["note"].get<std::string>().find("level before the step"),
            std::string::npos)
      << one["history"][1];
  EXPECT_EQ(Get("/alert-groups", reader_)["groups"].size(), 0u);  // its group closed
  const json closed = Get("/alert-groups?state=closed", reader_)["groups"];
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0]["states"]["went_away"], 1);
  EXPECT_EQ(Get("/alert-summary", reader_)["by_state"]["went_away"], 1);
}

// `perfwarden alerts groups|group` and a group's triage from the command line.
TEST_F(AlertGroupsE2eTest, TheAlertsCommandListsShowsAndTriagesAGroup) {
  ASSERT_NO_FATAL_FAILURE(PostOneCulpritOnTwoTestbeds());
  auto dir = testing::MakePgTempDir("perfwarden-groups-cli");
  ASSERT_TRUE(dir.has_value());
  const std::string config = (*dir / "perfwarden.yaml").string();
  {
    std::ofstream out(config);
    out << "version: 1\nserver: {url: \"http://127.0.0.1:" << app_->port()
        << "\", project: grp}\nsuites:\n  - {name: s, type: command, command: [\"true\"]}\n";
  }
  auto perfwarden = [&](const std::string& token, const std::string& args) {
    return testing::RunShell("PERFWARDEN_TOKEN=" + token + " " + PERFWARDEN_BIN_DIR +
                             "/perfwarden " + args + " --config " + config);
  };
  testing::ShellOutcome list = perfwarden(reader_, "alerts groups");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("1 alert group"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find(Sha(19).substr(0, 12) + ".." + Sha(21).substr(0, 12)),
            std::string::npos)
      << list.output;
  const json listed = json::parse(perfwarden(reader_, "alerts groups --format json").output);
  ASSERT_EQ(listed["groups"].size(), 1u);
  const std::string id = listed["groups"][0]["id"].dump();
  const std::string most = listed["groups"][0]["most_significant"].dump();

  testing::ShellOutcome show = perfwarden(reader_, "alerts group " + id);
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("6 alerts: open 6"), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("most significant: alert " + most), std::string::npos) << show.output;
  EXPECT_NE(show.output.find("perfwarden bisect --group " + id), std::string::npos) << show.output;

  // Once the group has its bisect (queued here through the API), `perfwarden bisect --group` and
  // `--alert` of another member name it instead of measuring again.
  const json top = Get("/alerts/" + most, reader_);
  const bool on_bed1 = top["series"]["testbed"] == "bed-1";
  HttpResponse queued = Bisect(top, on_bed1 ? 19 : 18, on_bed1 ? 21 : 22);
  ASSERT_EQ(queued.status, 201) << queued.body;
  const std::string bisect_id = json::parse(queued.body)["bisect"]["id"].dump();
  std::string other;
  const json open = Get("/alerts", reader_);
  for (const json& a : open["alerts"]) {
    if (a["id"].dump() != most) other = a["id"].dump();
  }
  ASSERT_FALSE(other.empty()) << open;
  for (const std::string& which : {"--group " + id, "--alert " + other}) {
    testing::ShellOutcome again = perfwarden(ci_, "bisect " + which);
    ASSERT_EQ(again.exit_code, 0) << which << ": " << again.output;
    EXPECT_NE(again.output.find("already has bisect " + bisect_id), std::string::npos)
        << again.output;
  }

  testing::ShellOutcome usage = perfwarden(triager_, "alerts ack " + most + " --group " + id);
  EXPECT_EQ(usage.exit_code, 2) << usage.output;
  testing::ShellOutcome denied = perfwarden(reader_, "alerts resolve --group " + id);
  EXPECT_EQ(denied.exit_code, 2) << denied.output;
  testing::ShellOutcome fixed =
      perfwarden(triager_, "alerts resolve --group " + id + " --note 'reverted in 41'");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.output;
  EXPECT_NE(fixed.output.find("alert group " + id + " is now closed"), std::string::npos)
      << fixed.output;
  EXPECT_NE(fixed.output.find("resolved 6"), std::string::npos) << fixed.output;
  const json after = Get("/alerts/" + most, reader_);
  EXPECT_EQ(after["state"], "resolved");
  EXPECT_EQ(after["note"], "reverted in 41");
  std::filesystem::remove_all(*dir);
}

}  // namespace
}  // namespace perfwarden
