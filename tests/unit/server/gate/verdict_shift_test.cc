// SPDX-License-Identifier: Apache-2.0
// The unpaired verdict flags a run whose metrics moved together (stats/environment_shift.h):
// the evidence in "environment_shift" and a warning, stored and served, the outcome decided as
// without it; a run where one benchmark moved has neither.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/gate/verdict.h"
#include "tests/testing/merge_base_verdicts.h"
#include "wire/verdict.h"

namespace perfwarden::server::gate {
namespace {

using nlohmann::json;

std::vector<double> Around(double center, int salt) {
  std::vector<double> out;
  for (int i = 0; i < 10; ++i) out.push_back(center * (1 + 0.004 * ((i * 7 + salt) % 5 - 2)));
  return out;
}

// Six benchmarks; the contender's levels are the base's times `factors`.
class SixBenchmarks : public testing::MergeBaseVerdicts {
 public:
  explicit SixBenchmarks(std::vector<double> factors) : factors_(std::move(factors)) {}
  std::vector<store::SampleSet> Sets(bool base) override {
    std::vector<store::SampleSet> sets;
    for (size_t i = 0; i < factors_.size(); ++i) {
      const double level = 100.0 * static_cast<double>(i + 1);
      sets.push_back({{"core", "BM_" + std::to_string(i), "real_time"},
                      "ns",
                      Direction::kLowerIsBetter,
                      Around(base ? level : level * factors_[i], static_cast<int>(i))});
    }
    return sets;
  }

 private:
  std::vector<double> factors_;
};

const store::Project kProject{1, "proj", false, "2026-11-26T10:00:00Z"};

wire::Verdict Compute(SixBenchmarks& runs) {
  VerdictService service(runs);
  auto body = service.Compute(kProject, "pr", VerdictRequest{});
  EXPECT_TRUE(body.has_value()) << (body ? "" : body.error().ToString());
  auto decoded = wire::DecodeVerdict(body ? *body : "{}");
  EXPECT_TRUE(decoded.has_value()) << (decoded ? "" : decoded.error().ToString());
  auto replay = service.Replay(kProject, "pr");
  EXPECT_TRUE(replay.has_value() && json::parse(*replay)["replay"]["matches"].get<bool>());
  // The stored verdict, read back, says the same.
  auto latest = service.Latest(kProject, "pr");
  EXPECT_TRUE(latest.has_value());
  if (latest && body) {
    EXPECT_EQ(*latest, *body);
  }
  return decoded ? *decoded : wire::Verdict{};
}

TEST(VerdictShift, AllBenchmarksTwentyPercentSlowerIsFlaggedWithItsEvidence) {
  SixBenchmarks runs({1.2, 1.21, 1.19, 1.22, 1.18, 1.2});
  const wire::Verdict verdict = Compute(runs);
  ASSERT_TRUE(verdict.environment_shift.has_value());
  EXPECT_EQ(verdict.environment_shift->metrics, 6);
  EXPECT_NEAR(verdict.environment_shift->median_change, 0.2, 0.01);
  EXPECT_DOUBLE_EQ(verdict.environment_shift->same_sign_share, 1.0);
  EXPECT_EQ(verdict.outcome, wire::Outcome::kRegression);  // decided as without it
  bool warned = false;
  for (const std::string& w : verdict.warnings) {
    warned =
        warned || w.rfind("environment shift: the run's metrics moved together (6 of 6", 0) == 0;
  }
  EXPECT_TRUE(warned);
  const json stored = json::parse(runs.saved.back().verdict.summary_json);
  EXPECT_TRUE(stored.contains("environment_shift"));
}

TEST(VerdictShift, OneSlowerBenchmarkIsNoShift) {
  SixBenchmarks runs({1.2, 1.0, 1.0, 1.0, 1.0, 1.0});
  const wire::Verdict verdict = Compute(runs);
  EXPECT_FALSE(verdict.environment_shift.has_value());
  EXPECT_EQ(verdict.outcome, wire::Outcome::kRegression);
  for (const std::string& w : verdict.warnings) {
    EXPECT_EQ(w.find("environment shift"), std::string::npos) << w;
  }
  const json stored = json::parse(runs.saved.back().verdict.summary_json);
  EXPECT_FALSE(stored.contains("environment_shift"));
}

}  // namespace
}  // namespace perfwarden::server::gate
