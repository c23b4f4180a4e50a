// SPDX-License-Identifier: Apache-2.0
// PgStore's verdicts against a real, migrated PostgreSQL: a paired verdict's measurement saved
// and read back as given (LatestVerdict, GetVerdict), an unpaired verdict without one, and one
// verdict read by id only within its run and project.
#include <gtest/gtest.h>

#include <string>

#include "server/store/pg_stores.h"
#include "tests/testing/store_fixture.h"

namespace perfwarden::store {
namespace {

using ::perfwarden::testing::stores::MakeRun;
using ::perfwarden::testing::stores::StoresTest;
using ::perfwarden::testing::stores::Uuid;

NewVerdict Verdict(const std::string& run_id, const std::string& measurement) {
  NewVerdict v;
  v.run_id = run_id;
  v.contender_run_ids = {run_id};
  v.outcome = "pass";
  v.algorithm_version = "perfwarden-paired/1";
  v.measurement_json = measurement;
  return v;
}

TEST_F(StoresTest, APairedVerdictKeepsItsMeasurement) {
  ASSERT_TRUE(store_->IngestRun(project_, MakeRun(1)));
  ASSERT_TRUE(store_->IngestRun(project_, MakeRun(2)));
  // Stored as the text given (json, not jsonb): key order and spacing kept.
  const std::string measurement = R"({"series":[{"blocks":[]}], "baseline_commit":"ab"})";
  auto unpaired = store_->SaveVerdict(project_, Verdict(Uuid(1), ""));
  ASSERT_TRUE(unpaired) << unpaired.error().ToString();
  auto paired = store_->SaveVerdict(project_, Verdict(Uuid(1), measurement));
  ASSERT_TRUE(paired) << paired.error().ToString();

  auto latest = store_->LatestVerdict(project_, Uuid(1));
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->id, paired->id);
  EXPECT_EQ((*latest)->verdict.measurement_json, measurement);

  auto first = store_->GetVerdict(project_, Uuid(1), unpaired->id);
  ASSERT_TRUE(first && *first) << (first ? "none" : first.error().ToString());
  EXPECT_EQ((*first)->id, unpaired->id);
  EXPECT_EQ((*first)->verdict.measurement_json, "");
  EXPECT_EQ((*first)->created_at, unpaired->created_at);
  auto second = store_->GetVerdict(project_, Uuid(1), paired->id);
  ASSERT_TRUE(second && *second);
  EXPECT_EQ((*second)->verdict.measurement_json, measurement);

  // Only within its run and project; a run id that is not a UUID has none.
  EXPECT_FALSE(*store_->GetVerdict(project_, Uuid(2), paired->id));
  EXPECT_FALSE(*store_->GetVerdict(project_, Uuid(1), paired->id + 100));
  EXPECT_FALSE(*store_->GetVerdict(project_, "not-a-uuid", paired->id));
  auto other = store_->CreateProject("other", false);
  ASSERT_TRUE(other);
  EXPECT_FALSE(*store_->GetVerdict(*other, Uuid(1), paired->id));
  EXPECT_EQ(Count("verdicts"), 2);
}

}  // namespace
}  // namespace perfwarden::store
