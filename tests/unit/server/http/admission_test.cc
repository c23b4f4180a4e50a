// SPDX-License-Identifier: Apache-2.0
// Admission of heavy requests without a server: the bound on all callers, the bound on one,
// tickets that give their place back once (moved, released, destroyed), the Retry-After
// estimate, and the caller keys.
#include "server/http/admission.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace perfwarden::http {
namespace {

// The ticket, failing the test when refused.
Admission::Ticket Admit(Admission& admission, const std::string& caller) {
  auto admitted = admission.TryAdmit(caller);
  EXPECT_TRUE(std::holds_alternative<Admission::Ticket>(admitted)) << caller << " refused";
  if (auto* ticket = std::get_if<Admission::Ticket>(&admitted)) return std::move(*ticket);
  return {};
}

// The refusal, failing the test when admitted.
Admission::Refused Refuse(Admission& admission, const std::string& caller) {
  auto admitted = admission.TryAdmit(caller);
  EXPECT_TRUE(std::holds_alternative<Admission::Refused>(admitted)) << caller << " admitted";
  if (auto* refused = std::get_if<Admission::Refused>(&admitted)) return *refused;
  return {};
}

TEST(Admission, BoundsEachCallerAndThenEveryCaller) {
  Admission admission({.total = 3, .per_caller = 2, .workers = 1});
  Admission::Ticket a1 = Admit(admission, "a");
  Admission::Ticket a2 = Admit(admission, "a");
  EXPECT_EQ(Refuse(admission, "a").reason, Admission::Refusal::kCaller);  // a's share is full
  Admission::Ticket b1 = Admit(admission, "b");                           // b still has room
  EXPECT_EQ(admission.InFlight(), 3u);
  EXPECT_EQ(Refuse(admission, "c").reason, Admission::Refusal::kFull);  // the server's is full
  // A caller at its own bound hears about its own bound first.
  EXPECT_EQ(Refuse(admission, "a").reason, Admission::Refusal::kCaller);
  EXPECT_EQ(admission.InFlight("a"), 2u);
  EXPECT_EQ(admission.InFlight("b"), 1u);
  EXPECT_EQ(admission.InFlight("c"), 0u);

  a1.Release();
  EXPECT_EQ(admission.InFlight("a"), 1u);
  Admission::Ticket c1 = Admit(admission, "c");  // the place a1 gave back
  EXPECT_EQ(Refuse(admission, "a").reason, Admission::Refusal::kFull);
}

TEST(Admission, ATicketGivesItsPlaceBackOnceWhateverHappensToIt) {
  Admission admission({.total = 2, .per_caller = 2, .workers = 1});
  {
    Admission::Ticket first = Admit(admission, "a");
    Admission::Ticket moved = std::move(first);
    first.Release();  // moved from: nothing to give back
    EXPECT_EQ(admission.InFlight(), 1u);
    Admission::Ticket other = Admit(admission, "a");
    other = std::move(moved);  // other's own place is given back, moved's taken over
    EXPECT_EQ(admission.InFlight(), 1u);
    other.Release();
    other.Release();
    EXPECT_EQ(admission.InFlight(), 0u);
    Admission::Ticket kept = Admit(admission, "a");
  }  // destroyed, as when a handler throws
  EXPECT_EQ(admission.InFlight(), 0u);
  EXPECT_EQ(admission.InFlight("a"), 0u);
  std::vector<Admission::Ticket> again;
  again.push_back(Admit(admission, "a"));
  again.push_back(Admit(admission, "a"));
}

TEST(Admission, ZeroLimitsAreTakenAsOne) {
  Admission admission({.total = 0, .per_caller = 0, .workers = 0});
  EXPECT_EQ(admission.limits().total, 1u);
  EXPECT_EQ(admission.limits().per_caller, 1u);
  EXPECT_EQ(admission.limits().workers, 1u);
  Admission::Ticket one = Admit(admission, "a");
  EXPECT_EQ(Refuse(admission, "b").reason, Admission::Refusal::kFull);
}

TEST(Admission, RetryAfterIsTheTimeToRunWhatIsInFlight) {
  Admission admission({.total = 8, .per_caller = 8, .workers = 2});
  EXPECT_EQ(admission.RetryAfterSeconds(), 1);  // nothing observed yet
  std::vector<Admission::Ticket> tickets;
  for (int i = 0; i < 6; ++i) tickets.push_back(Admit(admission, "a"));
  EXPECT_EQ(admission.RetryAfterSeconds(), 1);
  admission.ObserveRun(2.0);  // the first run is the mean: 2 s x 6 / 2 workers
  EXPECT_EQ(admission.RetryAfterSeconds(), 6);
  admission.ObserveRun(12.0);  // 2 + 0.2 x (12 - 2) = 4 s: 4 x 6 / 2
  EXPECT_EQ(admission.RetryAfterSeconds(), 12);
  admission.ObserveRun(-1.0);  // ignored, as a clock going backwards would give
  EXPECT_EQ(admission.RetryAfterSeconds(), 12);
  tickets.resize(1);  // 4 x 1 / 2 = 2
  EXPECT_EQ(admission.RetryAfterSeconds(), 2);
  for (int i = 0; i < 100; ++i) admission.ObserveRun(1000.0);
  EXPECT_EQ(admission.RetryAfterSeconds(), Admission::kMaxRetryAfterSeconds);
  while (admission.InFlight() < admission.limits().total) tickets.push_back(Admit(admission, "a"));
  // A refusal carries the same estimate.
  EXPECT_EQ(Refuse(admission, "a").retry_after_seconds, Admission::kMaxRetryAfterSeconds);
}

TEST(Admission, ShortRunsStillAskForASecond) {
  Admission admission({.total = 1, .per_caller = 1, .workers = 4});
  admission.ObserveRun(0.001);
  Admission::Ticket one = Admit(admission, "a");
  Admission::Refused refused = Refuse(admission, "a");
  EXPECT_EQ(refused.reason, Admission::Refusal::kCaller);
  EXPECT_EQ(refused.retry_after_seconds, 1);
}

Request From(std::string remote, std::string authorization = {}) {
  Request request;
  request.remote_address = std::move(remote);
  if (!authorization.empty()) request.headers.Add("authorization", std::move(authorization));
  return request;
}

TEST(CallerKey, IsTheTokensHashElseTheAddressWithoutItsPort) {
  const std::string token = "Bearer pwt_" + std::string(43, 'x');
  const std::string key = CallerKey(From("10.0.0.1:1000", token));
  EXPECT_EQ(key.rfind("bearer:", 0), 0u);
  EXPECT_EQ(key.size(), std::string("bearer:").size() + 64);  // SHA-256 in hex
  EXPECT_EQ(key.find("pwt_"), std::string::npos);             // the token is not kept
  EXPECT_EQ(CallerKey(From("10.0.0.2:2000", token)), key);    // one token, anywhere
  EXPECT_NE(CallerKey(From("10.0.0.1:1000", "Bearer pwt_" + std::string(43, 'y'))), key);
  // Without a token, each address is one caller, whatever its connections' ports.
  EXPECT_EQ(CallerKey(From("10.0.0.1:1000")), "address:10.0.0.1");
  EXPECT_EQ(CallerKey(From("10.0.0.1:1001")), "address:10.0.0.1");
  EXPECT_EQ(CallerKey(From("::1:54321")), "address:::1");
  EXPECT_EQ(CallerKey(From("")), "address:");
}

}  // namespace
}  // namespace perfwarden::http
