// SPDX-License-Identifier: Apache-2.0
// The verdict with attribution and environment notes, as VerdictService computes, stores and
// replays it: the utilisation hint of a training run, the noisy_environment outcome of a
// throttled one, nothing added without neighbours, the keys in sorted position, and a replay
// that matches.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "judge/attribution.h"
#include "server/gate/verdict.h"
#include "tests/testing/json_keys.h"
#include "tests/testing/merge_base_verdicts.h"

namespace perfwarden::server::gate {
namespace {

using judge::kHintClock;
using judge::kHintStarved;
using nlohmann::json;

using perfwarden::testing::KeysSorted;

std::vector<double> Around(double center, int n, int salt) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(center * (1 + 0.002 * ((i * 7 + salt) % 5 - 2)));
  return out;
}

store::SampleSet Series(std::string benchmark, std::string metric, std::string unit,
                        Direction direction, std::vector<double> values) {
  return {{"train", std::move(benchmark), std::move(metric)},
          std::move(unit),
          direction,
          std::move(values)};
}

// A PR run of a training suite against its merge-base: step time +10%, GPU utilisation -20%
// (one value per run), and the contender's throttled fraction as given.
class TrainRuns : public testing::MergeBaseVerdicts {
 public:
  explicit TrainRuns(double throttled, bool gpu = true) : throttled_(throttled), gpu_(gpu) {}
  std::vector<store::SampleSet> Sets(bool base) override {
    const auto lower = Direction::kLowerIsBetter;
    std::vector<store::SampleSet> sets = {
        Series("train", "step_time", "s", lower, Around(base ? 0.1 : 0.11, 30, base ? 1 : 2)),
        Series("BM_Loader", "real_time", "ns", lower, Around(500, 20, 3))};
    if (gpu_) {
      sets.push_back(Series("train", "gpu_utilization", "%", Direction::kHigherIsBetter,
                            base ? std::vector<double>{80, 81, 79} : std::vector<double>{64}));
      sets.push_back(Series("train", "gpu_throttled_fraction", "ratio", lower,
                            base ? std::vector<double>{0, 0, 0} : std::vector<double>{throttled_}));
    }
    return sets;
  }

 private:
  double throttled_;
  bool gpu_;
};

const store::Project kProject{1, "proj", false, "2024-05-01T10:00:00Z"};

// The verdict object and the text of its results as stored.
json ComputeVerdict(TrainRuns& runs, std::string* results_text = nullptr,
                    const VerdictRequest& request = {}) {
  VerdictService service(runs);
  auto body = service.Compute(kProject, "pr", request);
  EXPECT_TRUE(body.has_value()) << (body ? "" : body.error().ToString());
  if (!body) return json();
  if (results_text != nullptr) *results_text = runs.saved.back().verdict.results_json;
  auto replay = service.Replay(kProject, "pr");
  EXPECT_TRUE(replay.has_value());
  if (replay) {
    EXPECT_TRUE(json::parse(*replay)["replay"]["matches"].get<bool>()) << *replay;
  }
  return json::parse(*body)["verdict"];
}

const json& Row(const json& verdict, const std::string& metric) {
  for (const json& r : verdict["results"]) {
    if (r["metric"] == metric) return r;
  }
  static const json none;
  ADD_FAILURE() << "no row " << metric;
  return none;
}

TEST(VerdictAttribution, TheUtilisationHintInTheVerdict) {
  TrainRuns runs(/*throttled=*/0.0);
  std::string text;
  const json v = ComputeVerdict(runs, &text);
  EXPECT_EQ(v["outcome"], "regression");
  const json& step = Row(v, "step_time");
  ASSERT_EQ(step["verdict"], "REGRESSION");
  EXPECT_EQ(step["attribution"]["hint"], kHintStarved);
  ASSERT_EQ(step["attribution"]["moved"].size(), 1u);
  EXPECT_EQ(step["attribution"]["moved"][0]["metric"], "gpu_utilization");
  EXPECT_EQ(step["attribution"]["moved"][0]["verdict"], "INCONCLUSIVE");
  EXPECT_NEAR(step["attribution"]["moved"][0]["change"].get<double>(), -0.2, 1e-9);
  EXPECT_FALSE(step.contains("environment"));
  EXPECT_FALSE(step["attribution"].contains("roofline"));
  // In sorted position, before "base", in the first row (the contender's order).
  EXPECT_TRUE(KeysSorted(nlohmann::ordered_json::parse(text))) << text;
  EXPECT_EQ(text.rfind("[{\"attribution\":{\"hint\":", 0), 0u) << text;
  for (const json& r : v["results"]) {
    if (r["metric"] != "step_time") {
      EXPECT_FALSE(r.contains("attribution")) << r.dump();
    }
  }
}

// docs/gpu.md's example ignores the telemetry so that it does not gate: it still explains.
TEST(VerdictAttribution, TelemetryIgnoredByARuleStillExplains) {
  TrainRuns runs(/*throttled=*/0.0);
  VerdictRequest request;
  request.rules.push_back({.metric = "gpu_*", .ignore = true});
  const json v = ComputeVerdict(runs, nullptr, request);
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(Row(v, "gpu_utilization")["verdict"], "IGNORED");
  const json& step = Row(v, "step_time");
  EXPECT_EQ(step["attribution"]["hint"], kHintStarved);
  EXPECT_EQ(step["attribution"]["moved"][0]["verdict"], "IGNORED");
  EXPECT_NEAR(step["attribution"]["moved"][0]["change"].get<double>(), -0.2, 1e-9);
}

TEST(VerdictAttribution, AThrottledRunIsANoisyEnvironment) {
  TrainRuns runs(/*throttled=*/0.2);
  std::string text;
  const json v = ComputeVerdict(runs, &text);
  EXPECT_EQ(v["outcome"], "noisy_environment");
  EXPECT_EQ(v["counts"]["regression"], 1);
  const json& step = Row(v, "step_time");
  EXPECT_EQ(step["verdict"], "REGRESSION");
  EXPECT_EQ(step["environment"],
            "the GPUs were throttled in 20% of the samples (power or thermal caps): this run "
            "measures the host, not the code");
  EXPECT_EQ(step["attribution"]["hint"], kHintClock);
  // "environment" between "direction" and "metric".
  EXPECT_TRUE(KeysSorted(nlohmann::ordered_json::parse(text))) << text;
}

TEST(VerdictAttribution, WithoutNeighboursNothingIsAdded) {
  TrainRuns runs(0.0, /*gpu=*/false);
  std::string text;
  const json v = ComputeVerdict(runs, &text);
  EXPECT_EQ(v["outcome"], "regression");
  EXPECT_EQ(text.find("attribution"), std::string::npos);
  EXPECT_EQ(text.find("environment"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::server::gate
