// The confirmation's rule: a regression the side-by-side measurement cannot rule out stands.
#include "runner/cli/confirm.h"

#include <gtest/gtest.h>

namespace perfgate::cli {
namespace {

TEST(ConfirmCallTest, OnlyARuledOutRegressionIsWithdrawn) {
  EXPECT_EQ(CallOf(stats::Verdict::kRegression), ConfirmCall::kConfirmed);
  // The main job's planted +10% re-measured at +4.9% [+4.1%, +9.1%]: INCONCLUSIVE, so it stands.
  EXPECT_EQ(CallOf(stats::Verdict::kInconclusive), ConfirmCall::kUndecided);
  EXPECT_EQ(CallOf(stats::Verdict::kEquivalent), ConfirmCall::kWithdrawn);
  EXPECT_EQ(CallOf(stats::Verdict::kImprovement), ConfirmCall::kWithdrawn);
}

}  // namespace
}  // namespace perfgate::cli
