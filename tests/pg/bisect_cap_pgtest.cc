// SPDX-License-Identifier: Apache-2.0
// The cap on a testbed's open remote bisects (NewRemoteBisect::max_open_on_testbed) against a
// real PostgreSQL: the bisect over it is refused naming the testbed and stores nothing, other
// testbeds and finished or cancelled bisects do not count, and concurrent posts, counted under
// the testbed's lock, cannot pass it together.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/store/bisect_store.h"
#include "server/store/pg_stores.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

using nlohmann::json;

NewRemoteBisect Bisect(const std::string& testbed, int64_t max_open) {
  NewRemoteBisect bisect;
  bisect.good_sha = std::string(40, 'a');
  bisect.bad_sha = std::string(40, 'b');
  bisect.testbed = testbed;
  bisect.request_json = json{{"benchmarks", {"BM_A"}}}.dump();  // no commits: nothing reused
  bisect.first_step_json = json{{"targets", {0, 1}}, {"repetitions", 10}}.dump();
  bisect.created_by = "ci";
  bisect.max_open_on_testbed = max_open;
  return bisect;
}

// Step 0 is always measured (nothing to reuse), so the replay is never asked.
Result<BisectDecision> NoReplay(const BisectReplayInput&) {
  return MakeError(ErrorCode::kInternal, "the replay was not expected");
}

class BisectCapTest : public testing::PgStoreTest {
 protected:
  Result<BisectRecord> Queue(const std::string& testbed, int64_t max_open) {
    return store_->QueueRemoteBisect(project_, Bisect(testbed, max_open), NoReplay);
  }

  int64_t Count(const std::string& sql) {
    auto n = pool_->WithTransaction<int64_t>(
        [&](pqxx::work& tx) -> Result<int64_t> { return tx.exec(sql)[0][0].as<int64_t>(); });
    EXPECT_TRUE(n.has_value()) << n.error().ToString();
    return n.value_or(-1);
  }
};

TEST_F(BisectCapTest, TheBisectOverTheCapIsRefusedAndNothingIsStored) {
  auto first = Queue("gpu-1", 2);
  ASSERT_TRUE(first.has_value()) << first.error().ToString();
  ASSERT_TRUE(Queue("gpu-1", 2).has_value());

  auto refused = Queue("gpu-1", 2);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kConflict);
  EXPECT_EQ(refused.error().field, "testbed");
  EXPECT_NE(refused.error().message.find("open_bisects_per_testbed 2"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(Count("SELECT count(*) FROM bisect_jobs"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM bisect_steps"), 2);

  EXPECT_TRUE(Queue("gpu-2", 2).has_value());  // another testbed has its own
  EXPECT_TRUE(Queue("gpu-1", 0).has_value());  // 0: no cap

  // Only pending and running bisects count: a cancelled and a finished one give room back.
  ASSERT_TRUE(store_->CancelBisect(project_, first->id).has_value());
  EXPECT_FALSE(Queue("gpu-1", 2).has_value());  // still 2 open: the uncapped one counts
  ASSERT_TRUE(pool_->WithTransaction<bool>([&](pqxx::work& tx) -> Result<bool> {
    tx.exec(
        "UPDATE bisect_jobs SET state = 'succeeded', finished_at = now() WHERE id = "
        "(SELECT max(id) FROM bisect_jobs WHERE testbed_name = 'gpu-1' AND state = "
        "'pending')");
    return true;
  }));
  EXPECT_TRUE(Queue("gpu-1", 2).has_value());
  EXPECT_EQ(Count("SELECT count(*) FROM bisect_jobs WHERE testbed_name = 'gpu-1' AND state IN "
                  "('pending', 'running')"),
            2);
}

TEST_F(BisectCapTest, ConcurrentPostsCannotPassTheCapTogether) {
  constexpr int kPosts = 8;
  constexpr int64_t kCap = 3;
  std::vector<Result<BisectRecord>> results(kPosts, MakeError(ErrorCode::kInternal, "not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kPosts; ++i) {
    threads.emplace_back([&, i] { results[i] = Queue("gpu-1", kCap); });
  }
  for (std::thread& thread : threads) thread.join();
  int queued = 0;
  for (const auto& result : results) {
    if (result) {
      ++queued;
    } else {
      EXPECT_EQ(result.error().code, ErrorCode::kConflict) << result.error().ToString();
    }
  }
  EXPECT_EQ(queued, kCap);
  EXPECT_EQ(Count("SELECT count(*) FROM bisect_jobs"), kCap);
}

}  // namespace
}  // namespace perfwarden::store
