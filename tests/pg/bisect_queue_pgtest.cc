// SPDX-License-Identifier: Apache-2.0
// PgStore's remote bisect queue against a real, migrated PostgreSQL: a queued bisect's step 0
// is claimed by one agent at a time, concurrent claimers never share a step (SKIP LOCKED), a
// step whose lease ran out is reclaimed and its first agent is refused, a result is stored with
// the replay's decision (or rolled back with its error), error reports requeue a step until the
// third fails the job, leases that keep running out fail it too, and cancelling closes it all.
// The replay here is a fake decision callback: the real one is server/bisect's.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "server/store/bisect_store.h"
#include "server/store/pg_stores.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

using nlohmann::json;

std::string Sha(int n) { return std::string(39, 'a') + static_cast<char>('0' + n % 10); }

std::string StepJson(std::vector<int> targets, int repetitions = 10) {
  return json{{"targets", targets}, {"repetitions", repetitions}}.dump();
}

NewRemoteBisect MakeBisect(const std::string& testbed = "gpu-1") {
  NewRemoteBisect bisect;
  bisect.good_sha = Sha(0);
  bisect.bad_sha = Sha(9);
  bisect.testbed = testbed;
  bisect.request_json = json{{"benchmarks", {"BM_A"}}, {"commits", json::array()}}.dump();
  bisect.first_step_json = StepJson({0, 9});
  bisect.created_by = "ci";
  return bisect;
}

StepClaimRequest Claim(const std::string& agent, const std::string& token_hash,
                       const std::string& testbed = "gpu-1") {
  return {testbed, agent, token_hash, 60};
}

StepReport Measured(const std::string& measurement = R"({"m": 1})") {
  StepReport report;
  report.measurement_json = measurement;
  report.builds = 2;
  report.runs = 4;
  return report;
}

StepReport Failed(const std::string& error) {
  StepReport report;
  report.error = error;
  return report;
}

// Asks for a next measurement (targets {n} after n done steps) until `steps` are done, then
// finishes with a culprit.
BisectReplay Scripted(int steps, std::vector<BisectReplayInput>* seen = nullptr) {
  return [steps, seen](const BisectReplayInput& input) -> Result<BisectDecision> {
    if (seen != nullptr) seen->push_back(input);
    BisectDecision decision;
    if (static_cast<int>(input.done.size()) < steps) {
      decision.state = "running";
      decision.next_request_json = StepJson({static_cast<int>(input.done.size())}, 20);
    } else {
      decision.state = "succeeded";
      decision.report_json =
          json{{"probes", {{{"position", 5}}}}, {"culprits", json::array()}}.dump();
      decision.culprit_sha = Sha(5);
    }
    return decision;
  };
}

class BisectQueueTest : public testing::PgStoreTest {
 protected:
  int64_t Queue(const NewRemoteBisect& bisect = MakeBisect()) {
    auto queued = store_->QueueRemoteBisect(project_, bisect, Scripted(1));
    EXPECT_TRUE(queued.has_value()) << queued.error().ToString();
    return queued ? queued->id : 0;
  }

  ClaimedStep MustClaim(const std::string& agent, const std::string& token_hash) {
    auto claimed = store_->ClaimStep(project_, Claim(agent, token_hash));
    EXPECT_TRUE(claimed.has_value()) << claimed.error().ToString();
    EXPECT_TRUE(claimed && claimed->has_value()) << "nothing claimable";
    return claimed && *claimed ? **claimed : ClaimedStep{};
  }

  bool NothingToClaim(const std::string& testbed = "gpu-1") {
    auto claimed = store_->ClaimStep(project_, Claim("idle", Hash('z'), testbed));
    EXPECT_TRUE(claimed.has_value()) << claimed.error().ToString();
    return claimed && !claimed->has_value();
  }

  // Makes the step's lease run out without waiting for it.
  void ExpireLease(int64_t step_id) {
    auto done = pool_->WithTransaction<bool>([&](pqxx::work& tx) -> Result<bool> {
      tx.exec_params(
          "UPDATE bisect_steps SET lease_expires_at = now() - interval '1 second' WHERE id = $1",
          step_id);
      return true;
    });
    ASSERT_TRUE(done.has_value()) << done.error().ToString();
  }

  BisectRecord Get(int64_t id) {
    auto bisect = store_->GetBisect(project_, id);
    EXPECT_TRUE(bisect.has_value()) << bisect.error().ToString();
    return bisect ? *bisect : BisectRecord{};
  }

  static std::string Hash(char c) { return std::string(64, c); }
};

TEST_F(BisectQueueTest, QueuedStepZeroIsClaimedByOneAgentAtATime) {
  auto queued = store_->QueueRemoteBisect(project_, MakeBisect(), Scripted(1));
  ASSERT_TRUE(queued.has_value()) << queued.error().ToString();
  EXPECT_EQ(queued->state, "pending");
  EXPECT_EQ(queued->testbed, "gpu-1");
  ASSERT_EQ(queued->steps.size(), 1u);
  EXPECT_EQ(queued->steps[0].state, "queued");
  EXPECT_TRUE(NothingToClaim("cpu-1"));  // another testbed's agents do not see it

  ClaimedStep step = MustClaim("agent-a", Hash('a'));
  EXPECT_EQ(step.bisect_id, queued->id);
  EXPECT_EQ(step.ordinal, 0);
  EXPECT_EQ(step.attempt, 1);
  EXPECT_EQ(step.lease_seconds, 60);
  EXPECT_FALSE(step.lease_expires_at.empty());
  EXPECT_EQ(json::parse(step.request_json), json::parse(StepJson({0, 9})));
  EXPECT_EQ(json::parse(step.bisect_request_json)["benchmarks"], json({"BM_A"}));
  EXPECT_EQ(step.good_sha, Sha(0));
  EXPECT_EQ(step.bad_sha, Sha(9));

  EXPECT_TRUE(NothingToClaim());  // held by agent-a
  BisectRecord record = Get(queued->id);
  EXPECT_EQ(record.state, "running");
  ASSERT_EQ(record.steps.size(), 1u);
  EXPECT_EQ(record.steps[0].state, "claimed");
  EXPECT_EQ(record.steps[0].agent, "agent-a");
  EXPECT_EQ(record.steps[0].attempts, 1);
}

TEST_F(BisectQueueTest, ConcurrentClaimersNeverGetTheSameStep) {
  constexpr int kBisects = 12;
  for (int i = 0; i < kBisects; ++i) Queue();
  std::mutex mutex;
  std::vector<int64_t> claimed;
  std::vector<std::string> errors;
  auto agent = [&](int n) {
    for (;;) {
      auto step = store_->ClaimStep(project_, Claim("agent-" + std::to_string(n), Hash('b')));
      std::lock_guard lock(mutex);
      if (!step) {
        errors.push_back(step.error().ToString());
        return;
      }
      if (!step->has_value()) return;
      claimed.push_back((*step)->id);
    }
  };
  std::vector<std::thread> threads;
  for (int n = 0; n < 4; ++n) threads.emplace_back(agent, n);
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  std::set<int64_t> distinct(claimed.begin(), claimed.end());
  EXPECT_EQ(distinct.size(), claimed.size()) << "a step was claimed twice";
  EXPECT_EQ(claimed.size(), static_cast<std::size_t>(kBisects));
}

TEST_F(BisectQueueTest, ExpiredLeaseIsReclaimedAndTheFirstAgentIsRefused) {
  const int64_t id = Queue();
  ClaimedStep first = MustClaim("agent-a", Hash('a'));
  auto beat = store_->HeartbeatStep(project_, first.id, Hash('a'), 0);
  ASSERT_TRUE(beat.has_value()) << beat.error().ToString();
  EXPECT_EQ(beat->lease_seconds, 60);  // the claim's

  ExpireLease(first.id);
  ClaimedStep second = MustClaim("agent-b", Hash('b'));
  EXPECT_EQ(second.id, first.id);
  EXPECT_EQ(second.attempt, 2);

  auto late_beat = store_->HeartbeatStep(project_, first.id, Hash('a'), 0);
  ASSERT_FALSE(late_beat.has_value());
  EXPECT_EQ(late_beat.error().code, ErrorCode::kConflict);
  auto late_result = store_->CompleteStep(project_, first.id, Hash('a'), Measured(), Scripted(1));
  ASSERT_FALSE(late_result.has_value());
  EXPECT_EQ(late_result.error().code, ErrorCode::kConflict);

  auto result = store_->CompleteStep(project_, second.id, Hash('b'), Measured(), Scripted(2));
  ASSERT_TRUE(result.has_value()) << result.error().ToString();
  ASSERT_EQ(result->steps.size(), 2u);
  EXPECT_EQ(result->steps[0].state, "done");
  EXPECT_EQ(result->steps[0].agent, "agent-b");
  EXPECT_EQ(result->steps[1].state, "queued");
  EXPECT_EQ(Get(id).steps.size(), 2u);
}

TEST_F(BisectQueueTest, ResultsQueueTheNextStepsUntilTheReplayFinishes) {
  const int64_t id = Queue();
  std::vector<BisectReplayInput> seen;
  for (int ordinal = 0; ordinal < 3; ++ordinal) {
    ClaimedStep step = MustClaim("agent-a", Hash('a'));
    EXPECT_EQ(step.ordinal, ordinal);
    if (ordinal > 0) {
      EXPECT_EQ(json::parse(step.request_json), json::parse(StepJson({ordinal}, 20)));
    }
    auto done = store_->CompleteStep(project_, step.id, Hash('a'),
                                     Measured(json{{"step", ordinal}}.dump()), Scripted(3, &seen));
    ASSERT_TRUE(done.has_value()) << done.error().ToString();
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(ordinal + 1));
    const BisectReplayInput& input = seen.back();
    EXPECT_EQ(input.bisect_id, id);
    EXPECT_EQ(json::parse(input.request_json)["benchmarks"], json({"BM_A"}));
    ASSERT_EQ(input.done.size(), static_cast<std::size_t>(ordinal + 1));
    for (int i = 0; i <= ordinal; ++i) {
      EXPECT_EQ(input.done[i].ordinal, i);
      EXPECT_EQ(json::parse(input.done[i].result_json), json({{"step", i}}));
      EXPECT_EQ(input.done[i].builds, 2);
      EXPECT_EQ(input.done[i].runs, 4);
    }
    EXPECT_EQ(json::parse(input.done[0].request_json), json::parse(StepJson({0, 9})));
  }
  BisectRecord finished = Get(id);
  EXPECT_EQ(finished.state, "succeeded");
  EXPECT_EQ(finished.culprit_sha, Sha(5));
  EXPECT_FALSE(finished.finished_at.empty());
  ASSERT_FALSE(finished.report_json.empty());
  EXPECT_EQ(json::parse(finished.report_json)["probes"][0]["position"], 5);
  ASSERT_EQ(finished.steps.size(), 3u);
  for (const BisectStepRecord& step : finished.steps) {
    EXPECT_EQ(step.state, "done");
    EXPECT_FALSE(step.result_json.empty());
  }
  EXPECT_TRUE(NothingToClaim());
}

// A measurement is its commits measured side by side, so a later bisect on the same testbed
// with the same benchmarks, suite, metric and build takes it instead of measuring again, even
// over another range (positions differ, shas match); only original measurements are reused, and
// each at most once per bisect.
TEST_F(BisectQueueTest, AnotherBisectsMeasurementOfTheSameCommitsIsReused) {
  auto bisect_over = [&](int first, int last) {
    NewRemoteBisect b = MakeBisect();
    json commits = json::array();
    for (int k = first; k <= last; ++k) commits.push_back({{"sha", Sha(k)}});
    b.good_sha = Sha(first);
    b.bad_sha = Sha(last);
    b.request_json = json{
        {"benchmarks", {"BM_A"}},
        {"suite", ""},
        {"metric", ""},
        {"build", "make"},
        {"commits",
         commits}}.dump();
    b.first_step_json = StepJson({0, last - first});
    return b;
  };
  // A over commits 0..9 measures its ends (0 and 9) once.
  auto a = store_->QueueRemoteBisect(project_, bisect_over(0, 9), Scripted(5));
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  ClaimedStep step = MustClaim("agent-a", Hash('a'));
  const json measurement = {{"request", json::parse(StepJson({0, 9}))}, {"samples", 1}};
  ASSERT_TRUE(
      store_->CompleteStep(project_, step.id, Hash('a'), Measured(measurement.dump()), Scripted(5))
          .has_value());
  // B over the same ends (another alert's copy of the range): its step 0 is A's measurement,
  // with B's request, and nobody measures it; its step 1 is queued.
  std::vector<BisectReplayInput> seen;
  auto b = store_->QueueRemoteBisect(project_, bisect_over(0, 9), Scripted(5, &seen));
  ASSERT_TRUE(b.has_value()) << b.error().ToString();
  ASSERT_EQ(b->steps.size(), 2u);
  EXPECT_EQ(b->steps[0].state, "done");
  EXPECT_EQ(b->steps[0].reused_from, step.id);
  EXPECT_EQ(b->steps[0].builds, 0);
  EXPECT_EQ(json::parse(b->steps[0].result_json)["samples"], 1);
  EXPECT_EQ(b->steps[1].state, "queued");
  ASSERT_EQ(seen.size(), 1u);  // the replay decided once, on the reused step
  // A copy is not a source: C takes A's original again, not B's copy.
  auto c = store_->QueueRemoteBisect(project_, bisect_over(0, 9), Scripted(5));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->steps[0].reused_from, step.id);
  // Another build, or other commits at the ends: measured anew.
  NewRemoteBisect other_build = bisect_over(0, 9);
  other_build.request_json = json{{"benchmarks", {"BM_A"}},
                                  {"suite", ""},
                                  {"metric", ""},
                                  {"build", "make -j8"},
                                  {"commits", json::parse(other_build.request_json)["commits"]}}
                                 .dump();
  auto d = store_->QueueRemoteBisect(project_, other_build, Scripted(5));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->steps[0].state, "queued");
  auto e = store_->QueueRemoteBisect(project_, bisect_over(1, 9), Scripted(5));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->steps[0].state, "queued");
  // Within one bisect a measurement is used once: a replay that asks for the same ends again
  // (as a doubling would) gets them measured.
  BisectReplay again = [](const BisectReplayInput& input) -> Result<BisectDecision> {
    BisectDecision decision;
    decision.state = "running";
    decision.next_request_json = input.done.back().request_json;
    return decision;
  };
  auto f = store_->QueueRemoteBisect(project_, bisect_over(0, 9), again);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->steps.size(), 2u);
  EXPECT_EQ(f->steps[0].reused_from, step.id);
  EXPECT_EQ(f->steps[1].state, "queued");
  EXPECT_FALSE(f->steps[1].reused_from.has_value());
}

TEST_F(BisectQueueTest, AReplayErrorStoresNothingAndKeepsTheClaim) {
  const int64_t id = Queue();
  ClaimedStep step = MustClaim("agent-a", Hash('a'));
  BisectReplay refuse = [](const BisectReplayInput&) -> Result<BisectDecision> {
    return InvalidArgument("the measurement is not the step's", "measurement.request");
  };
  auto refused = store_->CompleteStep(project_, step.id, Hash('a'), Measured(), refuse);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().field, "measurement.request");
  BisectRecord record = Get(id);
  ASSERT_EQ(record.steps.size(), 1u);
  EXPECT_EQ(record.steps[0].state, "claimed");
  EXPECT_TRUE(record.steps[0].result_json.empty());

  auto accepted = store_->CompleteStep(project_, step.id, Hash('a'), Measured(), Scripted(0));
  ASSERT_TRUE(accepted.has_value()) << accepted.error().ToString();
  EXPECT_EQ(accepted->state, "succeeded");
}

TEST_F(BisectQueueTest, ThreeErrorReportsFailTheBisect) {
  const int64_t id = Queue();
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ClaimedStep step = MustClaim("agent-" + std::to_string(attempt), Hash('a'));
    EXPECT_EQ(step.attempt, attempt);
    auto reported =
        store_->CompleteStep(project_, step.id, Hash('a'),
                             Failed("build failed " + std::to_string(attempt)), Scripted(5));
    ASSERT_TRUE(reported.has_value()) << reported.error().ToString();
    ASSERT_EQ(reported->steps.size(), 1u);
    const BisectStepRecord& stored = reported->steps[0];
    EXPECT_EQ(stored.last_error, attempt < 3 ? "build failed " + std::to_string(attempt)
                                             : "step 0 failed 3 times; last: build failed 3");
    EXPECT_EQ(stored.state, attempt < 3 ? "queued" : "failed");
    EXPECT_EQ(reported->state, attempt < 3 ? "running" : "failed");
  }
  BisectRecord failed = Get(id);
  EXPECT_EQ(failed.error, "step 0 failed 3 times; last: build failed 3");
  EXPECT_FALSE(failed.finished_at.empty());
  EXPECT_TRUE(NothingToClaim());
}

TEST_F(BisectQueueTest, LeasesThatKeepRunningOutFailTheBisect) {
  const int64_t id = Queue();
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ClaimedStep step = MustClaim("agent-" + std::to_string(attempt), Hash('a'));
    EXPECT_EQ(step.attempt, attempt);
    ExpireLease(step.id);
  }
  EXPECT_TRUE(NothingToClaim());
  BisectRecord failed = Get(id);
  EXPECT_EQ(failed.state, "failed");
  EXPECT_NE(failed.error.find("ran out 3 times"), std::string::npos) << failed.error;
  ASSERT_EQ(failed.steps.size(), 1u);
  EXPECT_EQ(failed.steps[0].state, "failed");
  EXPECT_EQ(failed.steps[0].last_error, "the lease of agent agent-3 ran out");
}

TEST_F(BisectQueueTest, CancelClosesTheBisectAndRefusesItsAgent) {
  const int64_t id = Queue();
  ClaimedStep step = MustClaim("agent-a", Hash('a'));
  auto cancelled = store_->CancelBisect(project_, id);
  ASSERT_TRUE(cancelled.has_value()) << cancelled.error().ToString();
  EXPECT_EQ(cancelled->state, "cancelled");
  ASSERT_EQ(cancelled->steps.size(), 1u);
  EXPECT_EQ(cancelled->steps[0].state, "cancelled");

  auto beat = store_->HeartbeatStep(project_, step.id, Hash('a'), 0);
  ASSERT_FALSE(beat.has_value());
  EXPECT_EQ(beat.error().code, ErrorCode::kConflict);
  auto result = store_->CompleteStep(project_, step.id, Hash('a'), Measured(), Scripted(1));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kConflict);
  EXPECT_TRUE(NothingToClaim());

  auto again = store_->CancelBisect(project_, id);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(again->state, "cancelled");

  NewBisect local;
  local.good_sha = Sha(0);
  local.bad_sha = Sha(9);
  local.state = "failed";
  local.report_json = "{}";
  auto saved = store_->SaveBisect(project_, local);
  ASSERT_TRUE(saved.has_value()) << saved.error().ToString();
  auto finished = store_->CancelBisect(project_, saved->id);
  ASSERT_FALSE(finished.has_value());
  EXPECT_EQ(finished.error().code, ErrorCode::kConflict);
  BisectRecord read = Get(saved->id);
  EXPECT_TRUE(read.testbed.empty());
  EXPECT_TRUE(read.steps.empty());
  EXPECT_EQ(store_->CancelBisect(project_, 987654).error().code, ErrorCode::kNotFound);
}

TEST_F(BisectQueueTest, StepsOfAnotherProjectAreNotFound) {
  Queue();
  ClaimedStep step = MustClaim("agent-a", Hash('a'));
  auto other = store_->CreateProject("other", false);
  ASSERT_TRUE(other.has_value()) << other.error().ToString();
  auto beat = store_->HeartbeatStep(*other, step.id, Hash('a'), 0);
  ASSERT_FALSE(beat.has_value());
  EXPECT_EQ(beat.error().code, ErrorCode::kNotFound);
  auto result = store_->CompleteStep(*other, step.id, Hash('a'), Measured(), Scripted(1));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
  auto claimed = store_->ClaimStep(*other, Claim("agent-b", Hash('b')));
  ASSERT_TRUE(claimed.has_value()) << claimed.error().ToString();
  EXPECT_FALSE(claimed->has_value());

  NewRemoteBisect bad_alert = MakeBisect();
  bad_alert.alert_id = 424242;
  auto refused = store_->QueueRemoteBisect(project_, bad_alert, Scripted(1));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(refused.error().field, "alert_id");
}

TEST_F(BisectQueueTest, HeartbeatExtendsTheLease) {
  Queue();
  ClaimedStep step = MustClaim("agent-a", Hash('a'));
  auto beat = store_->HeartbeatStep(project_, step.id, Hash('a'), 600);
  ASSERT_TRUE(beat.has_value()) << beat.error().ToString();
  EXPECT_EQ(beat->lease_seconds, 600);
  auto longer = pool_->WithTransaction<bool>([&](pqxx::work& tx) -> Result<bool> {
    return tx
        .exec_params(
            "SELECT lease_expires_at > now() + interval '300 seconds' AND lease_seconds = 600 "
            "FROM bisect_steps WHERE id = $1",
            step.id)[0][0]
        .as<bool>();
  });
  ASSERT_TRUE(longer.has_value()) << longer.error().ToString();
  EXPECT_TRUE(*longer);
  auto wrong = store_->HeartbeatStep(project_, step.id, Hash('b'), 0);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code, ErrorCode::kConflict);
  EXPECT_EQ(wrong.error().field, "token");
}

}  // namespace
}  // namespace perfwarden::store
