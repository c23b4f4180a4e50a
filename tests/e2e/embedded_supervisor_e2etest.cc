// SPDX-License-Identifier: Apache-2.0
// The embedded PostgreSQL heals itself (server/store/embedded_supervisor.h): the built
// perfwarden-server on its own cluster, whose postmaster is killed (SIGKILL) five times, must take
// a run (201) again within 10 s each time with no person involved, saying why in /readyz while it
// is down; and whose disk fills (a small tmpfs, when this process may mount one) must refuse
// writes with a 503 naming the full disk, store nothing of them, say why in /readyz (also once
// PostgreSQL itself stops for want of WAL space), and take writes again once space is freed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/auth/tokens.h"
#include "server/store/embedded_pg.h"
#include "tests/testing/http_client.h"
#include "tests/testing/ids.h"
#include "tests/testing/level_results.h"
#include "tests/testing/server_process.h"

namespace perfwarden::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// perfwarden-server (the built binary) on its embedded cluster under `data_dir`; its log (stderr)
// goes to `log`. As tests/testing/pg_cluster.cc tells this process's LSan: libpq 15 under libpqxx
// 6.4 leaks one PGresult when the server ends a session in use, which a killed postmaster does to
// every statement in flight; the server's own allocations stay checked (ASan builds).
std::unique_ptr<ServerProcess> LaunchServer(const fs::path& data_dir,
                                            const std::string& admin_token, const fs::path& log) {
  ServerLaunch launch;
  launch.args = {"--data-dir", data_dir.string(), "--listen", "127.0.0.1:0", "--threads",
                 "4",          "--log-level",     "info"};
  launch.stderr_log = log.string();
  launch.lsan_suppressions = "leak:libpq.so\n";
  return std::make_unique<ServerProcess>(std::move(launch), admin_token);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int PostmasterPid(const fs::path& pg) {
  std::ifstream in(pg / "postmaster.pid");
  int pid = 0;
  in >> pid;
  return pid;
}

// A main-branch run with `benchmarks` results of 5 values each.
std::string Upload(int n, int benchmarks = 3) {
  std::vector<std::pair<std::string, double>> levels;
  for (int b = 0; b < benchmarks; ++b) levels.emplace_back("BM_" + std::to_string(b), 1000.0 + b);
  return json{{"id", TestRunId(n)},
              {"project", "proj"},
              {"branch", "main"},
              {"commit", {{"sha", TestSha(n, 0x5)}, {"subject", "c"}}},
              {"testbed", {{"name", "bed"}}},
              {"results", LevelResults(levels)}}
      .dump();
}

class EmbeddedSupervisorE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!store::FindPostgresBinDir()) GTEST_SKIP() << "no PostgreSQL binaries installed";
    auto dir = store::MakeClusterTempDir("perfwarden-supervisor-");
    ASSERT_TRUE(dir.has_value()) << dir.error().ToString();
    root_ = *dir;
    ::chmod(root_.c_str(), 0755);
    auto admin = auth::GenerateToken();
    ASSERT_TRUE(admin.has_value());
    admin_ = *admin;
  }
  void TearDown() override {
    if (server_) {
      const int status = server_->Stop();
      const std::string log = ReadFile(root_ / "server.log");
      EXPECT_EQ(status, 0) << "the server stopped badly; its log ends:\n"
                           << log.substr(log.size() > 6000 ? log.size() - 6000 : 0);
    }
    server_.reset();
    http_.reset();
    if (!mounted_.empty()) ::umount2(mounted_.c_str(), MNT_DETACH);
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }

  void StartServer(const fs::path& data_dir) {
    data_dir_ = data_dir;
    server_ = LaunchServer(data_dir, admin_, root_ / "server.log");
    const int port = server_->Port();
    ASSERT_GT(port, 0) << "the server did not start:\n" << ReadFile(root_ / "server.log");
    http_ = std::make_unique<HttpClient>(static_cast<std::uint16_t>(port));
    ASSERT_EQ(http_->Post("/api/v1/projects", json{{"name", "proj"}}.dump(), admin_).status, 201);
    HttpResponse made =
        http_->Post("/api/v1/projects/proj/tokens",
                    json{{"name", "ci"}, {"scopes", {"ingest", "read"}}}.dump(), admin_);
    ASSERT_EQ(made.status, 201) << made.body;
    ci_ = made.Json().value("token", "");
  }

  HttpResponse PostRun(int n, int benchmarks = 3) {
    return http_->Post("/api/v1/projects/proj/runs", Upload(n, benchmarks), ci_);
  }

  fs::path pg() const { return data_dir_ / "pg"; }

  fs::path root_, data_dir_, mounted_;
  std::string admin_, ci_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<HttpClient> http_;
};

TEST_F(EmbeddedSupervisorE2eTest, AKilledPostmasterIsBackWithinTenSecondsWithNoPerson) {
  ASSERT_NO_FATAL_FAILURE(StartServer(root_ / "data"));
  ASSERT_EQ(PostRun(1).status, 201);
  std::vector<double> seconds;
  std::string reason_seen;  // a /readyz body naming the restart
  int run = 2;
  for (int kill = 0; kill < 5; ++kill) {
    const int pid = PostmasterPid(pg());
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    const auto killed = Clock::now();
    // A backend of the killed postmaster may still commit a moment after the kill: only a run
    // taken while a new postmaster runs counts as "back".
    HttpResponse posted;
    bool back = false;
    while (!back && Clock::now() - killed < std::chrono::seconds(30)) {
      HttpResponse ready = http_->Get("/readyz");
      if (ready.status == 503 &&
          ready.body.find("embedded PostgreSQL restarting") != std::string::npos) {
        reason_seen = ready.body;
      }
      EXPECT_EQ(http_->Get("/healthz").status, 200) << "the process answers throughout";
      posted = PostRun(run);
      if (posted.status == 201 || posted.status == 200) {
        ++run;  // stored (200: an earlier try was committed, its answer lost with the kill)
        const int now = PostmasterPid(pg());
        back = posted.status == 201 && now != 0 && now != pid;
        continue;
      }
      EXPECT_EQ(posted.status, 503) << posted.body;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(back) << "no run taken by a new postmaster 30 s after the kill: " << posted.body;
    seconds.push_back(std::chrono::duration<double>(Clock::now() - killed).count());
    // Ready again (the 201 may come a moment before pg_ctl, polling, sees the cluster up).
    int ready = 0;
    for (int i = 0; i < 100 && ready != 200; ++i) {
      ready = http_->Get("/readyz").status;
      if (ready != 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(ready, 200);
    // Up for the backoff's healthy period (10 s), so each kill is measured as a first outage.
    if (kill < 4) std::this_thread::sleep_for(std::chrono::seconds(11));
  }
  std::string figures;
  for (double s : seconds) figures += std::to_string(s).substr(0, 4) + " s ";
  std::printf("kill -9 of the postmaster to the first 201: %s\n", figures.c_str());
  for (double s : seconds) EXPECT_LT(s, 10.0) << figures;
  EXPECT_FALSE(reason_seen.empty()) << "/readyz never said the cluster was restarting";
  EXPECT_NE(reason_seen.find("\"UNAVAILABLE\""), std::string::npos) << reason_seen;
  // Every run posted is stored once (the ones answered 503 were not half-stored).
  for (int n = 1; n < run; ++n) {
    EXPECT_EQ(http_->Get("/api/v1/projects/proj/runs/" + TestRunId(n), ci_).status, 200) << n;
  }
  const std::string metrics = http_->Get("/metrics").body;
  EXPECT_NE(metrics.find("perfwarden_embedded_pg_restarts_total 5"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("perfwarden_embedded_pg_up 1"), std::string::npos) << metrics;
  const std::string log = ReadFile(root_ / "server.log");
  EXPECT_NE(log.find("[error] embedded PostgreSQL: the postmaster of"), std::string::npos) << log;
  EXPECT_NE(log.find("[warn] embedded PostgreSQL: restarted (attempt"), std::string::npos) << log;
}

TEST_F(EmbeddedSupervisorE2eTest, SigtermDuringAnOutageStopsTheServerAndLeavesNoPostmaster) {
  ASSERT_NO_FATAL_FAILURE(StartServer(root_ / "data"));
  const int pid = PostmasterPid(pg());
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(server_->Stop(), 0);
  server_.reset();
  // No postmaster is left running from the data directory (none restarted after the stop).
  std::this_thread::sleep_for(std::chrono::seconds(2));
  store::EmbeddedPostgresOptions options;
  options.data_dir = pg();
  store::EmbeddedPostgres cluster(options);
  EXPECT_EQ(cluster.LivePostmasterPid(), 0) << ReadFile(root_ / "server.log");
}

TEST_F(EmbeddedSupervisorE2eTest, AFullDiskRefusesWritesWith503AndRecoversWhenSpaceIsFreed) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting the small tmpfs this test fills needs root";
  const fs::path disk = root_ / "disk";
  fs::create_directories(disk);
  if (::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=160m,mode=0755") != 0) {
    GTEST_SKIP() << "mount -t tmpfs is not permitted here: " << std::strerror(errno);
  }
  mounted_ = disk;
  ASSERT_NO_FATAL_FAILURE(StartServer(disk / "data"));
  ASSERT_EQ(PostRun(1).status, 201);

  // Fill the filesystem: a file as large as it lets us write.
  const fs::path filler = disk / "filler";
  {
    std::FILE* out = std::fopen(filler.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::vector<char> block(1 << 20, 'x');
    while (std::fwrite(block.data(), 1, block.size(), out) == block.size()) {
    }
    std::fclose(out);
  }
  // /readyz says why within a few probes.
  HttpResponse ready;
  for (int i = 0; i < 100; ++i) {
    ready = http_->Get("/readyz");
    if (ready.status == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(ready.status, 503) << ready.body;
  EXPECT_NE(ready.body.find("disk is full"), std::string::npos) << ready.body;
  EXPECT_EQ(http_->Get("/healthz").status, 200);

  // A run too large for the pages the tables have: refused with 503 naming the disk, not 500.
  HttpResponse refused = PostRun(2, 400);
  EXPECT_EQ(refused.status, 503) << refused.body;
  const bool named = refused.body.find("disk is full") != std::string::npos ||
                     refused.body.find("no space left on device") != std::string::npos;
  EXPECT_TRUE(named) << refused.body;
  // A read needs no disk: served while PostgreSQL keeps running.
  if (http_->Get("/readyz").body.find("restarting") == std::string::npos) {
    EXPECT_EQ(http_->Get("/api/v1/projects/proj/runs/" + TestRunId(1), ci_).status, 200);
  }

  // PostgreSQL itself stops when it cannot make a WAL segment (PANIC, then a recovery that cannot
  // write its checkpoint): a switch to the next segment, then a write, as the superuser.
  {
    const std::string dsn =
        "host=127.0.0.1 port=" + ReadFile(pg() / "perfwarden.port") +
        " user=perfwarden dbname=perfwarden password=" + ReadFile(pg() / "perfwarden.password");
    try {
      pqxx::connection conn(dsn);
      pqxx::nontransaction tx(conn);
      tx.exec("SELECT pg_switch_wal()");
      tx.exec("CREATE TABLE filler AS SELECT generate_series(1, 100000) AS g");
    } catch (const std::exception&) {
      // The PANIC ends this connection; a refused write is enough too.
    }
  }
  std::string down;
  for (int i = 0; i < 200 && down.empty(); ++i) {
    ready = http_->Get("/readyz");
    if (ready.body.find("restarting") != std::string::npos) down = ready.body;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(down.find("no space left on device"), std::string::npos) << down << ready.body;
  HttpResponse while_down = PostRun(2, 400);
  EXPECT_EQ(while_down.status, 503) << while_down.body;

  // Space freed: writes are taken again, with no person involved.
  fs::remove(filler);
  const auto freed = Clock::now();
  HttpResponse posted;
  while (Clock::now() - freed < std::chrono::seconds(60)) {
    posted = PostRun(2, 400);
    if (posted.status == 201) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(posted.status, 201) << posted.body << "\n" << ReadFile(root_ / "server.log");
  std::printf("space freed to the first 201: %.1f s\n",
              std::chrono::duration<double>(Clock::now() - freed).count());
  int ready_again = 0;
  for (int i = 0; i < 100 && ready_again != 200; ++i) {
    ready_again = http_->Get("/readyz").status;
    if (ready_again != 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(ready_again, 200) << "/readyz after the space was freed";
  // The refused upload left nothing: the run now stored has its 400 results, each once.
  HttpResponse stored = http_->Get("/api/v1/projects/proj/runs/" + TestRunId(2), ci_);
  ASSERT_EQ(stored.status, 200);
  const json body = stored.Json();
  EXPECT_EQ(body["upload"]["results"].size(), 400u) << stored.body.substr(0, 400);
  EXPECT_EQ(body["run"]["sample_count"], 400 * body["upload"]["results"][0]["values"].size());
  EXPECT_EQ(http_->Get("/api/v1/projects/proj/runs/" + TestRunId(1), ci_).status, 200);
}

}  // namespace
}  // namespace perfwarden::testing
