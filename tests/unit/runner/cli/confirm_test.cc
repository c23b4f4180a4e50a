// SPDX-License-Identifier: Apache-2.0
// What `--confirm` reports of an amended verdict: each regression confirmed, withdrawn or kept.
#include "runner/cli/confirm.h"

#include <gtest/gtest.h>

namespace perfwarden::cli {
namespace {

wire::MetricResult Row(const std::string& benchmark, wire::ResultKind kind) {
  wire::MetricResult r;
  r.key = {"core", benchmark, "real_time"};
  r.kind = kind;
  r.change = 0.1;
  return r;
}

TEST(ConfirmReportTest, EachRegressionIsConfirmedWithdrawnOrKept) {
  wire::Verdict before;
  before.results = {
      Row("BM_A", wire::ResultKind::kRegression), Row("BM_B", wire::ResultKind::kRegression),
      Row("BM_C", wire::ResultKind::kRegression), Row("BM_D", wire::ResultKind::kEquivalent)};
  wire::Verdict after = before;
  after.results[0].paired.emplace();
  after.results[0].paired->blocks = 9;
  after.results[0].change_ci = wire::Interval{0.07, 0.12};
  after.results[1].kind = wire::ResultKind::kUnstable;  // not decided: not gating
  after.results[1].paired.emplace();
  after.results[1].paired->blocks = 30;
  after.results[1].change = 0.02;
  // BM_C was not measured again (its suite failed to report it): it stands unpaired.
  const ConfirmReport report = DescribeConfirmation(before, after);
  EXPECT_EQ(report.checked, 2);
  EXPECT_EQ(report.confirmed, 2);  // BM_A paired, BM_C kept
  EXPECT_EQ(report.withdrawn, 1);
  ASSERT_EQ(report.lines.size(), 3u);
  EXPECT_EQ(report.lines[0],
            "BM_A real_time: confirmed, +10.0% [+7.0%, +12.0%] side by side in 9 blocks");
  EXPECT_EQ(report.lines[1],
            "BM_B real_time: not confirmed, +2.0% side by side in 30 blocks (UNSTABLE)");
  EXPECT_EQ(report.lines[2], "BM_C real_time: not measured again; kept");
}

}  // namespace
}  // namespace perfwarden::cli
