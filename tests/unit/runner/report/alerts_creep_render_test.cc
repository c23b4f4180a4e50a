// SPDX-License-Identifier: Apache-2.0
// `perfwarden alerts` on a creep alert (a drift, kind "creep"): its kind label and its change with
// the range and the slope per point, as the list and `show` print them.
#include <gtest/gtest.h>

#include "runner/report/alerts_render.h"
#include "tests/testing/alert_samples.h"

namespace perfwarden::report {
namespace {

TEST(AlertsCreepRenderTest, KindAndChangeSayCreepWithRangeAndSlope) {
  wire::Alert creep = testing::SampleCreepAlert();
  EXPECT_EQ(AlertKindLabel(creep), "creep");
  EXPECT_EQ(FormatAlertChange(creep), "+9.0% over points 17-75, +0.15%/point [+0.14%, +0.16%]");
  creep.cause = "environment";  // the kind still says what it is
  EXPECT_EQ(AlertKindLabel(creep), "creep");
  // A drop per point reads negative.
  creep.magnitude = -0.06;
  creep.creep->slope = -0.001;
  creep.creep->slope_low = -0.0012;
  creep.creep->slope_high = -0.0008;
  EXPECT_EQ(FormatAlertChange(creep), "-6.0% over points 17-75, -0.1%/point [-0.12%, -0.08%]");
  // A step alert is unchanged.
  EXPECT_EQ(FormatAlertChange(testing::SampleAlert()), "+8.1% [+7.2%, +9.0%]");
}

}  // namespace
}  // namespace perfwarden::report
