// The search and the decisions of `perfgate bisect` (bisect/), without git or processes:
// a clean search over 64 commits takes log2(64) probes to the culprit, skipped and unknown
// commits are stepped around (or widen the answer when nothing else is left), noisy verdicts
// never leave the window, and probes are judged against the two ends with U tests.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "bisect/decide.h"
#include "bisect/search.h"

namespace perfgate::bisect {
namespace {

// Runs a search where every position >= culprit is BAD, except those in `skipped`.
std::size_t Probes(std::size_t last, std::size_t culprit, const std::vector<std::size_t>& skipped,
                   Search* out) {
  Search search(last);
  std::size_t probes = 0;
  while (auto next = search.Next()) {
    ++probes;
    const bool skip = std::find(skipped.begin(), skipped.end(), *next) != skipped.end();
    search.Set(*next, skip ? Mark::kSkip : *next >= culprit ? Mark::kBad : Mark::kGood);
    EXPECT_LT(probes, 2 * last) << "the search does not end";
    if (probes >= 2 * last) break;
  }
  *out = search;
  return probes;
}

TEST(BisectSearch, FindsEveryCulpritOfSixtyFourCommitsInLogTwoProbes) {
  EXPECT_EQ(Search::ExpectedProbes(64), 6u);
  for (std::size_t culprit = 1; culprit <= 64; ++culprit) {
    Search search(64);
    const std::size_t probes = Probes(64, culprit, {}, &search);
    EXPECT_LE(probes, 6u) << culprit;
    EXPECT_TRUE(search.Exact());
    EXPECT_EQ(search.FirstBad(), culprit);
    EXPECT_EQ(search.LastGood(), culprit - 1);
  }
}

TEST(BisectSearch, SteppingAroundASkippedCommit) {
  // Commit 32 does not build: the search measures its neighbours instead.
  Search search(64);
  Probes(64, 40, {32}, &search);
  EXPECT_EQ(search.Get(32), Mark::kSkip);
  EXPECT_TRUE(search.Exact());
  EXPECT_EQ(search.FirstBad(), 40u);
  // The culprit itself does not build: the answer is the range (last good, first bad].
  Probes(64, 40, {40}, &search);
  EXPECT_FALSE(search.Exact());
  EXPECT_EQ(search.LastGood(), 39u);
  EXPECT_EQ(search.FirstBad(), 41u);
}

TEST(BisectSearch, AWindowOfOnlyUnmeasurableCommitsIsTheAnswer) {
  Search search(4);
  search.Set(1, Mark::kUnknown);
  search.Set(2, Mark::kSkip);
  search.Set(3, Mark::kSkip);
  EXPECT_FALSE(search.Next().has_value());
  EXPECT_FALSE(search.Exact());
  EXPECT_EQ(search.LastGood(), 0u);
  EXPECT_EQ(search.FirstBad(), 4u);
  EXPECT_EQ(MarkName(Mark::kSkip), "skip");
}

TEST(BisectSearch, AGoodAfterABadDoesNotLeaveTheWindow) {
  Search search(10);
  search.Set(5, Mark::kBad);
  search.Set(8, Mark::kGood);  // noise
  EXPECT_EQ(search.FirstBad(), 5u);
  EXPECT_EQ(search.LastGood(), 0u);
  ASSERT_TRUE(search.Next().has_value());
  EXPECT_LT(*search.Next(), 5u);
  EXPECT_EQ(Search(1).Next(), std::nullopt);  // a range of one commit: it is the culprit
  EXPECT_TRUE(Search(1).Exact());
}

std::vector<double> Sample(double level, double cv, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, cv);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(level * (1 + noise(rng)));
  return out;
}

TEST(BisectDecide, ProbesNearAnEndAreThatEnd) {
  const auto good = Sample(100, 0.02, 10, 1);
  const auto bad = Sample(110, 0.02, 10, 2);
  const Decision g = Decide(good, bad, Sample(100, 0.02, 10, 3), {});
  EXPECT_EQ(g.side, Side::kGood) << g.reason;
  EXPECT_NEAR(g.fraction, 0, 0.2);
  const Decision b = Decide(good, bad, Sample(110, 0.02, 10, 4), {});
  EXPECT_EQ(b.side, Side::kBad) << b.reason;
  EXPECT_FALSE(b.partial);
}

TEST(BisectDecide, TooFewRepetitionsForTheNoiseIsUnknown) {
  const auto good = Sample(100, 0.10, 3, 5);
  const auto bad = Sample(110, 0.10, 3, 6);
  const Decision d = Decide(good, bad, Sample(105, 0.10, 3, 7), {});
  EXPECT_EQ(d.side, Side::kUnknown) << d.reason;
  EXPECT_NE(d.reason.find("more repetitions"), std::string::npos);
}

TEST(BisectDecide, AProbeBetweenTwoStepsIsPartialAndTakesItsNearerSide) {
  const auto good = Sample(100, 0.005, 20, 8);
  const auto bad = Sample(112, 0.005, 20, 9);
  const Decision d = Decide(good, bad, Sample(104, 0.005, 20, 10), {});
  EXPECT_TRUE(d.partial);
  EXPECT_EQ(d.side, Side::kGood);
  EXPECT_NEAR(d.fraction, 1.0 / 3, 0.1);
}

TEST(BisectDecide, EndpointsMustShowTheRegression) {
  const auto good = Sample(100, 0.01, 10, 11);
  EXPECT_TRUE(CheckEndpoints(good, Sample(110, 0.01, 10, 12), Direction::kLowerIsBetter, 0.05, 0.01)
                  .reproduced);
  const EndpointCheck same =
      CheckEndpoints(good, Sample(100, 0.01, 10, 13), Direction::kLowerIsBetter, 0.05, 0.01);
  EXPECT_FALSE(same.reproduced);
  EXPECT_NE(same.reason.find("no regression"), std::string::npos) << same.reason;
  // Faster is not a regression of a time; it is one of a throughput.
  EXPECT_FALSE(CheckEndpoints(good, Sample(90, 0.01, 10, 14), Direction::kLowerIsBetter, 0.05, 0.01)
                   .reproduced);
  EXPECT_TRUE(CheckEndpoints(good, Sample(90, 0.01, 10, 14), Direction::kHigherIsBetter, 0.05, 0.01)
                  .reproduced);
}

}  // namespace
}  // namespace perfgate::bisect
