// SPDX-License-Identifier: Apache-2.0
// net/'s retries on a fake clock: which statuses retry, Retry-After, the backoff's growth and
// cap, seeded full jitter, and the loop (attempts, waits, notices, the last outcome returned).
#include "net/retry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "net/http_client.h"
#include "tests/testing/no_jitter.h"

namespace perfwarden::net {
namespace {

using std::chrono::milliseconds;
using testing::NoJitter;

TEST(Retry, RetryableStatuses) {
  for (int status : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableStatus(status));
  for (int status : {200, 201, 301, 400, 401, 403, 404, 409, 413, 422, 501, 505}) {
    EXPECT_FALSE(IsRetryableStatus(status)) << status;
  }
}

TEST(Retry, ParseRetryAfter) {
  EXPECT_EQ(ParseRetryAfter("120"), milliseconds(120'000));
  EXPECT_EQ(ParseRetryAfter(" 3 "), milliseconds(3'000));
  EXPECT_EQ(ParseRetryAfter("0"), milliseconds(0));
  for (const char* bad : {"", " ", "-1", "1.5", "3s", "Wed, 21 Oct 2015 07:28:00 GMT"}) {
    EXPECT_EQ(ParseRetryAfter(bad), std::nullopt) << bad;
  }
  EXPECT_GT(ParseRetryAfter("99999999999999999999").value(), milliseconds(0));  // saturates
}

TEST(Retry, BackoffWithoutJitterGrowsAndIsCapped) {
  RetryPolicy policy;
  policy.jitter = false;
  Backoff backoff(policy, 1);
  std::vector<int64_t> delays;
  for (int i = 0; i < 9; ++i) delays.push_back(backoff.Next().count());
  EXPECT_EQ(delays,
            (std::vector<int64_t>{500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000}));
  EXPECT_EQ(backoff.Next(milliseconds(7000)), milliseconds(7000));
  EXPECT_EQ(backoff.Next(milliseconds(100'000)), milliseconds(30'000));
}

TEST(Retry, JitterIsSeededUniformAndWithinTheEnvelope) {
  RetryPolicy policy;  // jitter on
  const auto draw = [&](uint64_t seed) {
    Backoff backoff(policy, seed);
    std::vector<int64_t> delays;
    for (int i = 0; i < 8; ++i) delays.push_back(backoff.Next().count());
    return delays;
  };
  EXPECT_EQ(draw(42), draw(42));
  EXPECT_NE(draw(42), draw(43));
  const std::vector<int64_t> envelope = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto delays = draw(seed);
    for (size_t i = 0; i < delays.size(); ++i) {
      EXPECT_GE(delays[i], 0);
      EXPECT_LE(delays[i], envelope[i]) << "seed " << seed << " step " << i;
    }
  }
  // Full jitter: uniform over [0, envelope], so the mean is near half of it.
  policy.factor = 1;
  policy.initial = milliseconds(1000);
  Backoff flat(policy, 7);
  double sum = 0;
  for (int i = 0; i < 4000; ++i) sum += static_cast<double>(flat.Next().count());
  EXPECT_NEAR(sum / 4000, 500, 25);
}

// A scripted server: each call returns the next outcome; the fake sleeper records the waits.
struct Script {
  explicit Script(std::vector<Result<HttpResponse>> script) : outcomes(std::move(script)) {}

  std::vector<Result<HttpResponse>> outcomes;
  size_t calls = 0;
  std::vector<int64_t> slept;

  std::function<Result<HttpResponse>()> Fn() {
    return [this] { return outcomes.at(calls++); };
  }
  RetryContext Context() {
    RetryContext context;
    context.sleep = [this](milliseconds delay) { slept.push_back(delay.count()); };
    context.seed = 1;
    return context;
  }
};

HttpResponse Status(int status, std::string retry_after = "") {
  HttpResponse response;
  response.status = status;
  if (!retry_after.empty()) response.headers["retry-after"] = retry_after;
  return response;
}

TEST(Retry, RetriesUntilASuccess) {
  Script script{{Status(503), MakeError(ErrorCode::kUnavailable, "refused"), Status(201)}};
  std::vector<RetryNotice> notices;
  RetryContext context = script.Context();
  context.on_retry = [&](const RetryNotice& notice) { notices.push_back(notice); };
  auto result = CallWithRetry(NoJitter(), script.Fn(), context);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, 201);
  EXPECT_EQ(script.calls, 3u);
  EXPECT_EQ(script.slept, (std::vector<int64_t>{500, 1000}));
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0].attempt, 1);
  EXPECT_EQ(notices[0].reason, "HTTP 503");
  EXPECT_EQ(notices[1].reason, "refused");
  EXPECT_EQ(notices[1].delay, milliseconds(1000));
}

TEST(Retry, HonoursRetryAfterCappedAtMaxDelay) {
  Script script{{Status(429, "7"), Status(503, "3600"), Status(503, "soon"), Status(200)}};
  auto result = CallWithRetry(NoJitter(), script.Fn(), script.Context());
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, 200);
  // An unparsable Retry-After falls back to the schedule (third step: 2000 ms).
  EXPECT_EQ(script.slept, (std::vector<int64_t>{7000, 30000, 2000}));
}

TEST(Retry, NeverRetriesOtherClientErrors) {
  for (int status : {400, 401, 403, 404, 409, 413}) {
    Script script{{Status(status), Status(201)}};
    auto result = CallWithRetry(NoJitter(), script.Fn(), script.Context());
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->status, status);
    EXPECT_EQ(script.calls, 1u) << status;
    EXPECT_TRUE(script.slept.empty());
  }
  Script bad_url{{InvalidArgument("malformed", "url"), Status(201)}};
  auto result = CallWithRetry(NoJitter(), bad_url.Fn(), bad_url.Context());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad_url.calls, 1u);
}

TEST(Retry, StopsAtMaxAttemptsWithTheLastOutcome) {
  Script busy{std::vector<Result<HttpResponse>>(9, Status(503))};
  auto last = CallWithRetry(NoJitter(), busy.Fn(), busy.Context());
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->status, 503);
  EXPECT_EQ(busy.calls, 5u);
  EXPECT_EQ(busy.slept, (std::vector<int64_t>{500, 1000, 2000, 4000}));

  Script down{std::vector<Result<HttpResponse>>(9, MakeError(ErrorCode::kUnavailable, "down"))};
  RetryPolicy three = NoJitter();
  three.max_attempts = 3;
  auto error = CallWithRetry(three, down.Fn(), down.Context());
  EXPECT_EQ(error.error().message, "down");
  EXPECT_EQ(down.calls, 3u);

  Script once{std::vector<Result<HttpResponse>>(2, Status(503))};
  RetryPolicy zero = NoJitter();
  zero.max_attempts = 0;  // means one attempt
  EXPECT_EQ(CallWithRetry(zero, once.Fn(), once.Context())->status, 503);
  EXPECT_EQ(once.calls, 1u);
}

}  // namespace
}  // namespace perfwarden::net
