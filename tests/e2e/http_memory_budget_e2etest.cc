// SPDX-License-Identifier: Apache-2.0
// The server's memory budget for request bodies (memory_budget.h) over a real loopback socket:
// with one large body held in a handler, a request whose Content-Length does not fit in what is
// left is answered 503 with Retry-After before its body is read, one that fits and one without
// a body are served, and the place is given back once the held answer is written. The handler
// is held by a latch the test opens, so the order of events is the test's, not the clock's.
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "server/http/memory_budget.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/http/server.h"
#include "tests/testing/http_client.h"

namespace perfwarden::http {
namespace {

using testing::HttpClient;
using testing::HttpResponse;

constexpr std::size_t kMiB = std::size_t{1} << 20;

class MemoryBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Router router;
    router.Add(
        "POST", "/held", "held",
        [this](const Request& request, const PathParams&) {
          std::unique_lock lock(mutex_);
          entered_ = true;
          changed_.notify_all();
          changed_.wait(lock, [this] { return open_; });
          return Response::Text(200, std::to_string(request.body.size()));
        },
        Router::Cost::kHeavy);
    router.Add("POST", "/light", "light", [](const Request& request, const PathParams&) {
      return Response::Text(200, std::to_string(request.body.size()));
    });
    router.Add("GET", "/metrics", "metrics", [this](const Request&, const PathParams&) {
      return Response::Text(200, metrics_.Render());
    });
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = 2;
    options.body_limit = 2 * kMiB;
    options.request_memory_bytes = 3 * kMiB;
    server_ = std::make_unique<Server>(options, std::move(router), &metrics_);
    auto started = server_->Start();
    ASSERT_TRUE(started.has_value()) << started.error().ToString();
  }
  void TearDown() override {
    Open();  // a failed test must not leave a handler held
    server_.reset();
  }

  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void WaitForEntered() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return entered_; });
  }
  HttpResponse Post(const std::string& path, std::size_t bytes) {
    return HttpClient(server_->port()).Post(path, std::string(bytes, 'x'));
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false;
  bool open_ = false;
  Metrics metrics_;
  std::unique_ptr<Server> server_;
};

TEST_F(MemoryBudgetTest, ABodyThatDoesNotFitIsRefusedUntilTheHeldOneIsAnswered) {
  std::future<HttpResponse> held = std::async(std::launch::async, [this] {
    return HttpClient(server_->port()).Post("/held", std::string(2 * kMiB, 'x'));
  });
  WaitForEntered();  // 2 MiB of the 3 are held

  HttpResponse refused = Post("/light", kMiB + 1);
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(refused.headers["retry-after"], "1");
  EXPECT_EQ(refused.ErrorCode(), "UNAVAILABLE");
  EXPECT_NE(refused.body.find("request_memory_bytes"), std::string::npos) << refused.body;
  // What fits is served, and a request without a body needs no place.
  EXPECT_EQ(Post("/light", kMiB).body, std::to_string(kMiB));
  EXPECT_EQ(HttpClient(server_->port()).Get("/metrics").status, 200);

  Open();
  EXPECT_EQ(held.get().body, std::to_string(2 * kMiB));
  // The held body's place was given back once its answer was written.
  EXPECT_EQ(Post("/light", 2 * kMiB).status, 200);
  const std::string text = HttpClient(server_->port()).Get("/metrics").body;
  EXPECT_NE(text.find("perfwarden_http_memory_refused_total 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("perfwarden_http_request_memory_bytes{state=\"in_use\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("perfwarden_http_request_memory_bytes{state=\"limit\"} 3145728\n"),
            std::string::npos)
      << text;
}

TEST(MemoryBudget, ReservesUpToItsLimitAndGivesBackOnRelease) {
  MemoryBudget budget(100);
  std::optional<MemoryBudget::Reservation> a = budget.TryReserve(60);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(budget.TryReserve(41).has_value());
  EXPECT_FALSE(budget.TryReserve(101).has_value());
  std::optional<MemoryBudget::Reservation> b = budget.TryReserve(40);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(budget.InUse(), 100u);
  EXPECT_TRUE(budget.TryReserve(0).has_value());  // no body, no place
  MemoryBudget::Reservation moved = std::move(*a);
  a.reset();
  EXPECT_EQ(budget.InUse(), 100u);  // the moved-from one gives nothing back
  moved.Release();
  moved.Release();  // idempotent
  EXPECT_EQ(budget.InUse(), 40u);
  MemoryBudget::Reservation refused_into;
  std::optional<Response> answer = budget.Admit(61, &refused_into);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->status, 503);
  EXPECT_EQ(refused_into.bytes(), 0u);
  EXPECT_FALSE(budget.Admit(60, &refused_into).has_value());
  EXPECT_EQ(refused_into.bytes(), 60u);
  EXPECT_EQ(budget.InUse(), 100u);
}

}  // namespace
}  // namespace perfwarden::http
