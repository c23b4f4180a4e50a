// SPDX-License-Identifier: Apache-2.0
// The renderings of a bisect's answer when it has no culprit: the ends did not reproduce the
// regression, or stayed undecided at the repetition cap (shown with its figures: the change, its
// interval, p, the repetitions used and those that would decide), in text and in a remote
// bisect's progress.
#include "runner/report/bisect_format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace perfwarden::report {
namespace {

bisect::Report NoCulpritReport(bisect::Reproduction outcome) {
  bisect::Report r;
  r.good_sha = std::string(40, 'a');
  r.bad_sha = std::string(40, 'b');
  r.suite = "micro";
  r.benchmarks = {"BM_Work"};
  r.metric = "real_time";
  r.commits = 64;
  r.endpoints.outcome = outcome;
  r.endpoints.change = 0.037;
  r.endpoints.ci_low = -0.008;
  r.endpoints.ci_high = 0.092;
  r.endpoints.confidence = 0.98;
  r.endpoints.p_value = 0.031;
  r.endpoints.repetitions = 80;
  r.endpoints.repetitions_needed = 145;
  r.endpoints.reason = "bad vs good: +3.7% [-0.8%, +9.2%] (98% CI, p 0.031); threshold 5.0%";
  return r;
}

TEST(BisectFormat, UndecidedIsShownWithItsFigures) {
  const std::string text = FormatBisectText(NoCulpritReport(bisect::Reproduction::kUndecided));
  EXPECT_NE(text.find("no culprit: undecided at 80 repetitions per end: bad vs good +3.7% "
                      "[-0.8%, +9.2%] (98% CI, p 0.031); about 145 per end would decide\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("does not reproduce"), std::string::npos) << text;
}

TEST(BisectFormat, NotReproducedSaysSo) {
  const std::string text = FormatBisectText(NoCulpritReport(bisect::Reproduction::kNotReproduced));
  EXPECT_NE(text.find("no culprit: the regression does not reproduce\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("undecided"), std::string::npos) << text;
}

TEST(BisectFormat, ProgressShowsTheEndsCheck) {
  wire::Bisect b;
  b.id = 7;
  b.state = "running";
  b.remote = wire::BisectRemote{"gpu-1"};
  b.progress = nlohmann::json{
      {"endpoints",
       {{"outcome", "undecided"},
        {"reason",
         "bad vs good: +3.7% [-0.8%, +9.2%] (98% CI, p 0.031); threshold 5.0%: undecided at 10 "
         "repetitions per end"}}}};
  EXPECT_NE(FormatBisectProgress(b).find("ends: bad vs good: +3.7% [-0.8%, +9.2%] (98% CI, p "
                                         "0.031); threshold 5.0%: undecided at 10"),
            std::string::npos)
      << FormatBisectProgress(b);
}

}  // namespace
}  // namespace perfwarden::report
