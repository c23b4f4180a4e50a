// SPDX-License-Identifier: Apache-2.0
// Two perfwarden-server processes (the built binary) on ONE database, as a scale-out deployment
// behind a proxy runs them (docs/operations.md, "Run several servers"). Both start at the same
// moment and the migrations are applied once; runs posted alternately to both are stored once;
// both history workers together raise one alert per planted step; concurrent verdict requests
// for one run through both servers make one verdict each; concurrent step claims through both
// servers hand every remote-bisect step to exactly one claimer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/version.h"
#include "server/auth/tokens.h"
#include "server/store/migrator.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/level_results.h"
#include "tests/testing/pg_cluster.h"
#include "tests/testing/server_process.h"

namespace perfwarden::testing {
namespace {

using nlohmann::json;

// A main-branch run of three benchmarks at `scale` (BM_A times a) with ~1% run-to-run noise.
json Upload(int run, int commit, double a_factor, double c_factor) {
  std::vector<std::pair<std::string, double>> levels = {
      {"BM_A", 1000 * a_factor}, {"BM_B", 2000}, {"BM_C", 3000 * c_factor}};
  int k = 0;
  for (auto& [name, level] : levels) level *= 1 + 0.001 * ((run * 37 + k++ * 11) % 21 - 10);
  const json results = testing::LevelResults(levels);
  return {{"id", TestRunId(run)},
          {"project", "proj"},
          {"branch", "main"},
          {"commit",
           {{"sha", TestSha(commit, 0x2)},
            {"subject", "commit " + std::to_string(commit)},
            {"parents", json::array({TestSha(commit - 1, 0x2)})}}},
          {"testbed", {{"name", "bed"}, {"fingerprint", {{"cpu_model", "cpu-a"}}}}},
          {"results", results},
          {"runner_version", "v9.8.7-6-gabcdef0"}};
}

class TwoServersE2eTest : public PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto admin = auth::GenerateToken();
    ASSERT_TRUE(admin.has_value());
    admin_ = *admin;
    // Both processes are started before either is waited for: they migrate and create the
    // configured admin token at the same moment.
    servers_[0] = std::make_unique<ServerProcess>(dsn_, admin_);
    servers_[1] = std::make_unique<ServerProcess>(dsn_, admin_);
    for (int i = 0; i < 2; ++i) {
      const int port = servers_[i]->Port();
      ASSERT_GT(port, 0) << "server " << i << " did not start";
      http_[i] = std::make_unique<HttpClient>(static_cast<std::uint16_t>(port));
    }
    ASSERT_EQ(http_[0]->Post("/api/v1/projects", json{{"name", "proj"}}.dump(), admin_).status,
              201);
    HttpResponse made =
        http_[1]->Post("/api/v1/projects/proj/tokens",
                       json{{"name", "ci"}, {"scopes", {"ingest", "read"}}}.dump(), admin_);
    ASSERT_EQ(made.status, 201) << made.body;
    ci_ = made.Json().value("token", "");
  }
  void TearDown() override {
    for (int i = 0; i < 2; ++i) {
      http_[i].reset();
      if (servers_[i]) {
        EXPECT_EQ(servers_[i]->Stop(), 0) << "server " << i << " stopped badly";
      }
    }
  }

  int64_t Count(const std::string& sql) {
    pqxx::connection conn(dsn_);
    pqxx::nontransaction tx(conn);
    return tx.exec(sql)[0][0].as<int64_t>();
  }

  // Waits until the history workers have taken every stored run into history.
  void WaitForHistory() {
    for (int i = 0; i < 1200; ++i) {
      if (Count("SELECT count(*) FROM runs WHERE history_analysed_at IS NULL") == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "history analysis did not finish within 60 s";
  }

  std::string admin_, ci_;
  std::array<std::unique_ptr<ServerProcess>, 2> servers_;
  std::array<std::unique_ptr<HttpClient>, 2> http_;
};

TEST_F(TwoServersE2eTest, StartTogetherMigrateOnceAndReportTheirVersion) {
  const int64_t applied = Count("SELECT count(*) FROM schema_migrations");
  EXPECT_GT(applied, 0);
  EXPECT_EQ(Count("SELECT count(DISTINCT version) FROM schema_migrations"), applied);
  // Every file applied once, none skipped (the numbers need not be consecutive).
  Result<std::vector<store::Migration>> files =
      store::LoadMigrations(store::MigratorOptions::DefaultMigrationsDir());
  ASSERT_TRUE(files.has_value()) << files.error().ToString();
  EXPECT_EQ(applied, static_cast<int64_t>(files->size()));
  EXPECT_EQ(Count("SELECT max(version) FROM schema_migrations"), files->back().version);
  // The configured admin token, stored by whichever server came first, is the only one.
  EXPECT_EQ(Count("SELECT count(*) FROM tokens WHERE 'admin' = ANY(scopes)"), 1);
  for (int i = 0; i < 2; ++i) {
    HttpResponse health = http_[i]->Get("/healthz");
    ASSERT_EQ(health.status, 200) << health.body;
    EXPECT_EQ(health.Json()["version"], std::string(Version()));
    HttpResponse metrics = http_[i]->Get("/metrics");
    ASSERT_EQ(metrics.status, 200);
    EXPECT_NE(
        metrics.body.find("perfwarden_build_info{version=\"" + std::string(Version()) + "\"} 1"),
        std::string::npos)
        << metrics.body;
  }
}

TEST_F(TwoServersE2eTest, RunsPostedToBothAreStoredOnceWithOneAlertPerStep) {
  // 40 main-branch commits: BM_A 8% slower from commit 20, BM_C 10% faster from commit 30.
  // Each run goes to one server and is retried through the other (a proxy's retry).
  for (int n = 1; n <= 40; ++n) {
    const std::string body = Upload(n, n, n >= 20 ? 1.08 : 1.0, n >= 30 ? 0.90 : 1.0).dump();
    HttpResponse first = http_[n % 2]->Post("/api/v1/projects/proj/runs", body, ci_);
    ASSERT_EQ(first.status, 201) << first.body;
    HttpResponse again = http_[(n + 1) % 2]->Post("/api/v1/projects/proj/runs", body, ci_);
    ASSERT_EQ(again.status, 200) << again.body;
  }
  WaitForHistory();
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 40);
  EXPECT_EQ(Count("SELECT count(*) FROM history_points"), 40 * 3);
  for (int i = 0; i < 2; ++i) {
    HttpResponse regressions = http_[i]->Get("/api/v1/projects/proj/alerts?kind=regression", ci_);
    ASSERT_EQ(regressions.status, 200) << regressions.body;
    const json alerts = regressions.Json()["alerts"];
    ASSERT_EQ(alerts.size(), 1u) << alerts.dump(2);
    EXPECT_EQ(alerts[0]["series"]["benchmark"], "BM_A");
    EXPECT_EQ(alerts[0]["range"]["first_bad"]["sha"], TestSha(20, 0x2));
    HttpResponse improvements = http_[i]->Get("/api/v1/projects/proj/alerts?kind=improvement", ci_);
    ASSERT_EQ(improvements.status, 200) << improvements.body;
    ASSERT_EQ(improvements.Json()["alerts"].size(), 1u) << improvements.body;
    EXPECT_EQ(improvements.Json()["alerts"][0]["range"]["first_bad"]["sha"], TestSha(30, 0x2));
  }
  EXPECT_EQ(Count("SELECT count(*) FROM alerts"), 2);
  // Each run was analysed by exactly one of the two workers: their counts add up to the runs.
  int64_t analysed = 0;
  for (int i = 0; i < 2; ++i) {
    const std::string text = http_[i]->Get("/metrics").body;
    const std::string marker = "perfwarden_history{stat=\"runs\"} ";
    const size_t at = text.find(marker);
    ASSERT_NE(at, std::string::npos) << text;
    analysed += std::atoll(text.c_str() + at + marker.size());
  }
  EXPECT_EQ(analysed, 40);
}

// The same verdict question asked 16 times at once through both servers (CI retries): each
// request is answered, all with the one verdict stored (201 for the request that stored it, 200
// for the others), not one stored per request that raced the first.
TEST_F(TwoServersE2eTest, ConcurrentSameVerdictRequestsThroughBothStoreOneVerdict) {
  for (int n = 1; n <= 6; ++n) {
    HttpResponse posted =
        http_[n % 2]->Post("/api/v1/projects/proj/runs", Upload(n, n, 1.0, 1.0).dump(), ci_);
    ASSERT_EQ(posted.status, 201) << posted.body;
  }
  constexpr int kPerThread = 4;
  std::mutex mutex;
  std::vector<int64_t> ids;
  int created = 0;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      HttpClient client(static_cast<std::uint16_t>(servers_[t % 2]->Port()));
      for (int i = 0; i < kPerThread; ++i) {
        HttpResponse r =
            client.Post("/api/v1/projects/proj/runs/" + TestRunId(6) + "/verdict", "{}", ci_);
        std::lock_guard lock(mutex);
        if (r.status != 201 && r.status != 200) {
          failures.push_back(std::to_string(r.status) + " " + r.body);
          continue;
        }
        if (r.status == 201) ++created;
        const json verdict = r.Json()["verdict"];
        ids.push_back(verdict["id"].get<int64_t>());
        if (verdict.value("runner_version", "") != "v9.8.7-6-gabcdef0") {
          failures.push_back("runner_version missing: " + r.body.substr(0, 400));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(ids.size(), static_cast<size_t>(4 * kPerThread));
  const std::set<int64_t> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), 1u) << "verdicts stored for one question: " << distinct.size();
  EXPECT_EQ(created, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM verdicts WHERE run_id = '" + TestRunId(6) + "'"), 1);
  // Stored, the verdict still names the runner that measured the run (GET from the other one).
  HttpResponse got = http_[1]->Get("/api/v1/projects/proj/runs/" + TestRunId(6) + "/verdict", ci_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["verdict"]["runner_version"], "v9.8.7-6-gabcdef0");
}

std::string BisectSha(int position) {
  char buffer[41];
  std::snprintf(buffer, sizeof(buffer), "%040x", 0xb15ec700 + position);
  return buffer;
}

TEST_F(TwoServersE2eTest, EveryBisectStepIsClaimedByExactlyOneClaimer) {
  for (int good = 0; good < 4; ++good) {
    json commits = json::array();
    for (int i = good; i < 16; ++i) commits.push_back({{"sha", BisectSha(i)}, {"subject", "c"}});
    const json body = {{"remote", true},
                       {"testbed", "gpu-1"},
                       {"good", BisectSha(good)},
                       {"bad", BisectSha(15)},
                       {"commits", commits},
                       {"benchmarks", {"BM_Train"}},
                       {"suite", "train"},
                       {"metric", "real_time"},
                       {"build", ""},
                       {"options", {{"repetitions", 8}}}};
    HttpResponse queued = http_[good % 2]->Post("/api/v1/projects/proj/bisects", body.dump(), ci_);
    ASSERT_EQ(queued.status, 201) << queued.body;
  }
  const int64_t queued_steps = Count("SELECT count(*) FROM bisect_steps WHERE state = 'queued'");
  ASSERT_GE(queued_steps, 4);

  // Three claimers per server race until both answer 204 (nothing left).
  std::mutex mutex;
  std::vector<int64_t> claimed;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      HttpClient client(static_cast<std::uint16_t>(servers_[t % 2]->Port()));
      const std::string claim =
          json{{"testbed", "gpu-1"}, {"agent", "agent-" + std::to_string(t)}}.dump();
      while (true) {
        HttpResponse r = client.Post("/api/v1/projects/proj/bisect-steps/claim", claim, ci_);
        std::lock_guard lock(mutex);
        if (r.status == 204) return;
        if (r.status != 200) {
          failures.push_back(std::to_string(r.status) + " " + r.body);
          return;
        }
        claimed.push_back(r.Json()["step"]["id"].get<int64_t>());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  const std::set<int64_t> distinct(claimed.begin(), claimed.end());
  EXPECT_EQ(distinct.size(), claimed.size()) << "a step was handed to two claimers";
  EXPECT_EQ(static_cast<int64_t>(claimed.size()), queued_steps);
  EXPECT_EQ(Count("SELECT count(*) FROM bisect_steps WHERE state = 'claimed'"), queued_steps);
}

}  // namespace
}  // namespace perfwarden::testing
