// SPDX-License-Identifier: Apache-2.0
// Heavy-route admission in the whole server (server::App, real PostgreSQL): with server.yaml's
// limits.heavy_requests_per_caller 1 and limits.heavy_requests 2, GET .../series calls held in
// the database (the test locks the table they read) take the places: the same token's next call
// is 429 with Retry-After at once, another token is still admitted, and a third caller gets
// 503. The test waits for PostgreSQL to report the held calls waiting for its lock, so the order
// of events is the test's, not the clock's.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <string>
#include <thread>

#include "tests/testing/test_server.h"

namespace perfwarden::testing {
namespace {

using nlohmann::json;

constexpr char kSeries[] =
    "/api/v1/projects/proj/series?benchmark=BM_None&metric=real_time&branch=main";

class HeavyLimitsE2eTest : public ServerTest {
 protected:
  void Customize(config::ServerConfig& config) override {
    config.limits.heavy_requests = 2;
    config.limits.heavy_requests_per_caller = 1;
    config.history.enabled = false;  // nothing else reads the locked table
  }

  std::string ReadToken() {
    HttpResponse made = http_->Post("/api/v1/projects/proj/tokens",
                                    json{{"name", "reader"}, {"scopes", {"read"}}}.dump(), admin_);
    EXPECT_EQ(made.status, 201) << made.body;
    return made.Json().value("token", "");
  }

  std::future<HttpResponse> GetLater(const std::string& token) {
    const std::uint16_t port = static_cast<std::uint16_t>(app_->port());
    return std::async(std::launch::async,
                      [port, token] { return HttpClient(port).Get(kSeries, token); });
  }

  // Until `n` statements wait for the test's lock on benchmarks (polled; the pause between
  // looks only spares the CPU, nothing depends on its length).
  void WaitForHeld(int n) {
    pqxx::connection conn(dsn_);
    for (;;) {
      pqxx::nontransaction tx(conn);
      if (tx.exec("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = "
                  "'benchmarks'::regclass")[0][0]
              .as<int>() >= n) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
};

TEST_F(HeavyLimitsE2eTest, ATokenOverItsShareGets429WhileAnotherIsAdmitted) {
  CreateProject("proj");
  const std::string reader = ReadToken();
  pqxx::connection locker(dsn_);
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE benchmarks IN ACCESS EXCLUSIVE MODE");

  std::future<HttpResponse> held_admin = GetLater(admin_);
  WaitForHeld(1);
  HttpResponse again = HttpClient(static_cast<std::uint16_t>(app_->port())).Get(kSeries, admin_);
  EXPECT_EQ(again.status, 429) << again.body;
  EXPECT_EQ(again.ErrorCode(), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(again.headers["retry-after"], "1");

  std::future<HttpResponse> held_reader = GetLater(reader);
  WaitForHeld(2);
  HttpResponse anonymous = HttpClient(static_cast<std::uint16_t>(app_->port())).Get(kSeries);
  EXPECT_EQ(anonymous.status, 503) << anonymous.body;
  EXPECT_FALSE(anonymous.headers["retry-after"].empty());

  lock.abort();
  // Both held calls ran to their handler's answer: the series does not exist.
  EXPECT_EQ(held_admin.get().status, 404);
  EXPECT_EQ(held_reader.get().status, 404);
  EXPECT_EQ(http_->Get(kSeries, admin_).status, 404);  // its place was given back
  const std::string metrics = http_->Get("/metrics").body;
  EXPECT_NE(metrics.find("perfwarden_http_requests_total{route=\"series.get\",status=\"429\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("perfwarden_http_heavy_requests{state=\"limit\"} 2\n"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::testing
