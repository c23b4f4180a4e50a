// SPDX-License-Identifier: Apache-2.0
// Pins the creep figures of docs/statistics.md, "Creep" (tests/testing/creep_quality.h): on the
// labelled corpus with the default options, drifts caught as creeps, by steps only, missed; false
// creeps; confirmed steps a creep replaced, and those that were planted steps. A change of the
// detector or of the corpus shows here first, with the table to copy into the docs.
#include "tests/testing/creep_quality.h"

#include <gtest/gtest.h>

namespace perfwarden::quality {
namespace {

TEST(CreepQualityTest, CorpusFiguresAsDocumented) {
  auto corpus = LoadCorpus(std::string(PERFWARDEN_FIXTURES_DIR) + "/history");
  ASSERT_TRUE(corpus) << corpus.error().ToString();
  auto scores = EvaluateCreeps(*corpus);
  ASSERT_TRUE(scores) << scores.error().ToString();
  const std::string table = FormatCreepTable(*scores);
  const CreepScore& drift = scores->at("drift");
  EXPECT_EQ(drift.drifts, 40u) << table;
  EXPECT_EQ(drift.drifts_by_creep, 19u) << table;
  EXPECT_EQ(drift.drifts_by_step, 12u) << table;
  EXPECT_EQ(drift.drifts_missed, 9u) << table;
  EXPECT_EQ(drift.false_creeps, 0u) << table;
  EXPECT_EQ(drift.steps_replaced, 19u) << table;
  // Pure noise, synthetic and recorded: no creep at all.
  EXPECT_EQ(scores->at("noise").creeps, 0u) << table;
  EXPECT_EQ(scores->at("real-noise").creeps, 0u) << table;
  const CreepScore& all = scores->at("all");
  EXPECT_EQ(all.false_creeps, 5u) << table;
  EXPECT_EQ(all.real_steps_lost, 8u) << table;
}

}  // namespace
}  // namespace perfwarden::quality
