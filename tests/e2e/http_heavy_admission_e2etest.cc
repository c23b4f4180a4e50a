// SPDX-License-Identifier: Apache-2.0
// Heavy requests admitted over a real loopback socket: with one heavy request in flight per
// caller and two in all, a caller's second is answered 429 with Retry-After at once while
// another caller is still served, a third caller gets 503, and every place is given back when
// its handler returns or throws. The heavy handler is held by a latch the test opens, so the
// order of events is the test's, not the clock's; nothing asserts on durations.
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "server/http/errors.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/http/server.h"
#include "tests/testing/http_client.h"

namespace perfwarden::http {
namespace {

using testing::HttpClient;
using testing::HttpResponse;

// Holds the handlers that enter it until Open(); counts them in.
class Latch {
 public:
  void Enter() {
    std::unique_lock lock(mutex_);
    ++entered_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void WaitForEntered(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_ >= n; });
  }
  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int entered_ = 0;
  bool open_ = false;
};

class HeavyAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Router router;
    router.Add(
        "GET", "/held", "held",
        [this](const Request&, const PathParams&) {
          latch_.Enter();
          return Response::Text(200, "done");
        },
        Router::Cost::kHeavy);
    router.Add(
        "GET", "/throws", "throws",
        [](const Request&, const PathParams&) -> Response { throw std::runtime_error("bug"); },
        Router::Cost::kHeavy);
    router.Add("GET", "/light", "light",
               [](const Request&, const PathParams&) { return Response::Text(200, "light"); });
    router.Add("GET", "/metrics", "metrics", [this](const Request&, const PathParams&) {
      return Response::Text(200, metrics_.Render());
    });
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = 2;
    options.compute_threads = 2;  // both held handlers run at once
    options.heavy_requests = 2;
    options.heavy_requests_per_caller = 1;
    server_ = std::make_unique<Server>(options, std::move(router), &metrics_);
    auto started = server_->Start();
    ASSERT_TRUE(started.has_value()) << started.error().ToString();
  }
  void TearDown() override {
    latch_.Open();  // a failed test must not leave a handler held
    server_.reset();
  }

  // GET `path` as `token` ("" for none) on a connection of its own, answered in the background.
  std::future<HttpResponse> GetLater(std::string path, std::string token) {
    return std::async(std::launch::async,
                      [this, path, token] { return HttpClient(server_->port()).Get(path, token); });
  }
  HttpResponse Get(const std::string& path, const std::string& token = "") {
    return HttpClient(server_->port()).Get(path, token);
  }

  Latch latch_;
  Metrics metrics_;
  std::unique_ptr<Server> server_;
};

TEST_F(HeavyAdmissionTest, ACallerOverItsShareGets429WhileAnotherIsServed) {
  std::future<HttpResponse> first_a = GetLater("/held", "token-a");
  latch_.WaitForEntered(1);  // a's one place is taken

  HttpResponse second_a = Get("/held", "token-a");
  EXPECT_EQ(second_a.status, 429) << second_a.body;
  EXPECT_EQ(second_a.headers["retry-after"], "1");  // no run has finished: the least
  EXPECT_EQ(second_a.ErrorCode(), "RESOURCE_EXHAUSTED");
  EXPECT_NE(second_a.body.find("heavy_requests_per_caller"), std::string::npos) << second_a.body;
  EXPECT_EQ(Get("/light", "token-a").status, 200);  // light routes are not counted

  std::future<HttpResponse> first_b = GetLater("/held", "token-b");
  latch_.WaitForEntered(2);  // b is served while a waits for its first

  // Two in flight, the server's bound: a caller with nothing in flight gets 503.
  HttpResponse anonymous = Get("/held");
  EXPECT_EQ(anonymous.status, 503) << anonymous.body;
  EXPECT_EQ(anonymous.headers["retry-after"], "1");
  EXPECT_EQ(anonymous.ErrorCode(), "UNAVAILABLE");
  EXPECT_NE(anonymous.body.find("heavy_requests"), std::string::npos) << anonymous.body;

  latch_.Open();
  EXPECT_EQ(first_a.get().status, 200);
  EXPECT_EQ(first_b.get().status, 200);
  // The places were given back before the answers were sent.
  EXPECT_EQ(Get("/held", "token-a").status, 200);
  EXPECT_EQ(Get("/held").status, 200);

  const std::string text = Get("/metrics").body;
  EXPECT_NE(text.find("perfwarden_http_heavy_refused_caller_total 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfwarden_http_heavy_refused_busy_total 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfwarden_http_heavy_requests{state=\"in_flight\"} 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("perfwarden_http_heavy_requests{state=\"limit\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("perfwarden_http_requests_total{route=\"held\",status=\"429\"} 1\n"),
            std::string::npos)
      << text;
}

TEST_F(HeavyAdmissionTest, AHandlerThatThrowsGivesItsPlaceBack) {
  // One place per caller: a place kept by the first 500 would make the second a 429.
  EXPECT_EQ(Get("/throws", "token-a").status, 500);
  EXPECT_EQ(Get("/throws", "token-a").status, 500);
  latch_.Open();
  EXPECT_EQ(Get("/held", "token-a").status, 200);
}

}  // namespace
}  // namespace perfwarden::http
