// SPDX-License-Identifier: Apache-2.0
// The cache of prepared baselines: one load for concurrent requests of the same runs, failed
// loads not kept, least recently used entries out beyond the byte budget; and the binary
// decoding of the repetitions the store reads (array_send as bytea hex).
#include "server/gate/baseline_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "server/gate/verdict.h"
#include "server/store/pg_util.h"
#include "wire/verdict_text.h"

namespace perfwarden::server::gate {
namespace {

std::vector<store::SampleSet> Sets(int series, int repetitions) {
  std::vector<store::SampleSet> out;
  for (int s = 0; s < series; ++s) {
    store::SampleSet set;
    set.key = {"suite", "BM_" + std::to_string(s), "real_time"};
    set.unit = "ns";
    for (int r = 0; r < repetitions; ++r) set.values.push_back(100.0 + s + 0.25 * (r % 7));
    out.push_back(set);
  }
  return out;
}

TEST(BaselineCacheTest, PreparesOnceAndServesHits) {
  BaselineCache cache(64u << 20);
  int loads = 0;
  auto load = [&]() -> Result<std::vector<store::SampleSet>> {
    ++loads;
    return Sets(3, 20);
  };
  auto a = cache.Get(1, {"r1", "r2"}, load);
  auto b = cache.Get(1, {"r1", "r2"}, load);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(loads, 1);
  ASSERT_EQ((*a)->sets.size(), 3u);
  ASSERT_EQ((*a)->prepared.size(), 3u);
  EXPECT_EQ((*a)->prepared[1]->median(), 101.75);
  EXPECT_NE((*a)->prepared[0]->bootstrap(), nullptr);
  // Each set as the judge pairs it: its key and unit, viewing its values, with its preparation.
  EXPECT_EQ((*a)->series[2].key, (SeriesKey{"suite", "BM_2", "real_time"}));
  EXPECT_EQ((*a)->series[2].unit, "ns");
  EXPECT_EQ((*a)->series[2].values.data(), (*a)->sets[2].values.data());
  EXPECT_EQ((*a)->series[2].prepared, (*a)->prepared[2]);
  // Another project, or other runs, is another baseline.
  ASSERT_TRUE(cache.Get(2, {"r1", "r2"}, load));
  ASSERT_TRUE(cache.Get(1, {"r2", "r1"}, load));
  EXPECT_EQ(loads, 3);
  const BaselineCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 3u);
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_GT(stats.bytes, 3 * (*a)->bytes - 1);
}

TEST(BaselineCacheTest, ConcurrentRequestsShareOneLoad) {
  BaselineCache cache(64u << 20);
  std::atomic<int> loads{0};
  auto load = [&]() -> Result<std::vector<store::SampleSet>> {
    ++loads;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // others arrive meanwhile
    return Sets(10, 100);
  };
  std::vector<std::thread> threads;
  std::vector<const PreparedBaseline*> got(8, nullptr);
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i]() {
      auto r = cache.Get(7, {"a"}, load);
      if (r) got[i] = r->get();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(loads.load(), 1);
  for (const PreparedBaseline* p : got) EXPECT_EQ(p, got[0]);
  EXPECT_NE(got[0], nullptr);
}

TEST(BaselineCacheTest, FailedLoadIsNotKept) {
  BaselineCache cache(64u << 20);
  bool fail = true;
  auto load = [&]() -> Result<std::vector<store::SampleSet>> {
    if (fail) return MakeError(ErrorCode::kUnavailable, "database down");
    return Sets(1, 5);
  };
  auto first = cache.Get(1, {"r"}, load);
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().code, ErrorCode::kUnavailable);
  fail = false;
  EXPECT_TRUE(cache.Get(1, {"r"}, load));
  EXPECT_EQ(cache.GetStats().entries, 1u);
}

// The tables of a baseline too large for the budget are not kept (a 100,000-series main run
// once made the warm-up after its ingest hold 4 GB of them); preparing stops as the running
// total passes the budget, and the judge's answer is the same without them.
TEST(BaselineCacheTest, ABaselineBeyondTheBudgetIsNotPreparedAndJudgesAlike) {
  const auto full = PrepareBaseline(Sets(40, 100), SIZE_MAX);
  ASSERT_TRUE(full->prepared[0]);
  const size_t tables = full->bytes - PrepareBaseline(Sets(40, 100), 0)->bytes;
  ASSERT_GT(tables, 0u);

  const auto bounded = PrepareBaseline(Sets(40, 100), tables / 2);
  for (size_t i = 0; i < bounded->prepared.size(); ++i) {
    EXPECT_FALSE(bounded->prepared[i]) << i;
    EXPECT_FALSE(bounded->series[i].prepared) << i;
  }
  EXPECT_EQ(bounded->bytes, full->bytes - tables);
  EXPECT_TRUE(PrepareBaseline(Sets(40, 100), tables)->prepared[39]);  // exactly fits

  std::vector<store::SampleSet> contender = Sets(40, 10);
  for (auto& set : contender) {
    for (double& v : set.values) v *= 1.08;
  }
  const auto with_tables = Judge(contender, full.get(), {});
  const auto without = Judge(contender, bounded.get(), {});
  ASSERT_TRUE(with_tables && without);
  EXPECT_EQ(wire::EncodeResultsText(with_tables->results),
            wire::EncodeResultsText(without->results));
  EXPECT_EQ(with_tables->outcome, wire::Outcome::kRegression);

  BaselineCache cache(tables / 2);
  ASSERT_TRUE(
      cache.Get(1, {"a"}, [] { return Result<std::vector<store::SampleSet>>(Sets(40, 100)); }));
  EXPECT_EQ(cache.GetStats().bytes, full->bytes - tables);  // kept, unprepared
}

TEST(BaselineCacheTest, EvictsLeastRecentlyUsedBeyondBudget) {
  const size_t one = PrepareBaseline(Sets(20, 100), SIZE_MAX)->bytes;
  BaselineCache cache(2 * one + one / 2);  // room for two
  int loads = 0;
  auto load = [&]() -> Result<std::vector<store::SampleSet>> {
    ++loads;
    return Sets(20, 100);
  };
  ASSERT_TRUE(cache.Get(1, {"a"}, load));
  ASSERT_TRUE(cache.Get(1, {"b"}, load));
  ASSERT_TRUE(cache.Get(1, {"a"}, load));  // a is now the most recent
  ASSERT_TRUE(cache.Get(1, {"c"}, load));  // b leaves
  EXPECT_EQ(cache.GetStats().entries, 2u);
  EXPECT_LE(cache.GetStats().bytes, 2 * one + one / 2);
  ASSERT_TRUE(cache.Get(1, {"a"}, load));
  EXPECT_EQ(loads, 3);
  ASSERT_TRUE(cache.Get(1, {"b"}, load));
  EXPECT_EQ(loads, 4);

  BaselineCache none(0);  // keeps nothing
  ASSERT_TRUE(none.Get(1, {"a"}, load));
  ASSERT_TRUE(none.Get(1, {"a"}, load));
  EXPECT_EQ(loads, 6);
  EXPECT_EQ(none.GetStats().entries, 0u);
}

// array_send's layout: ndim, has-nulls flag, element type oid, then per dimension its size and
// lower bound, then per element a 4-byte length and the big-endian value.
std::string ArraySendHex(const std::vector<double>& values) {
  std::string bytes;
  auto put = [&bytes](uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(values.empty() ? 0 : 1, 4);
  put(0, 4);
  put(701, 4);
  if (!values.empty()) {
    put(values.size(), 4);
    put(1, 4);
  }
  for (double v : values) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    put(8, 4);
    put(bits, 8);
  }
  static const char* kHex = "0123456789abcdef";
  std::string out = "\\x";
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

TEST(Float8ArraySendTest, DecodesExactlyAndRejectsOtherShapes) {
  const std::vector<double> values{1.5, -0.0, 1e-310, 1.7976931348623157e308, 0.1 + 0.2};
  std::vector<double> out{42};
  ASSERT_TRUE(store::pgutil::AppendFloat8ArraySend(ArraySendHex(values), out));
  ASSERT_EQ(out.size(), 6u);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::memcmp(&out[i + 1], &values[i], sizeof(double)), 0) << i;
  }
  std::vector<double> empty;
  EXPECT_TRUE(store::pgutil::AppendFloat8ArraySend(ArraySendHex({}), empty));
  EXPECT_TRUE(empty.empty());

  std::string text = ArraySendHex({1, 2});
  std::vector<double> sink;
  EXPECT_FALSE(store::pgutil::AppendFloat8ArraySend("{1,2}", sink));
  EXPECT_FALSE(store::pgutil::AppendFloat8ArraySend(text.substr(0, text.size() - 2), sink));
  std::string int_array = text;
  int_array.replace(2 + 2 * 8, 8, "00000017");  // int4's oid
  EXPECT_FALSE(store::pgutil::AppendFloat8ArraySend(int_array, sink));
  std::string not_hex = text;
  not_hex[text.size() - 1] = 'g';
  EXPECT_FALSE(store::pgutil::AppendFloat8ArraySend(not_hex, sink));
}

}  // namespace
}  // namespace perfwarden::server::gate
