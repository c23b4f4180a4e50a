// SPDX-License-Identifier: Apache-2.0
// perfwarden's history detector (stats/history_detector.h): planted steps found at the right index
// with the right sign and size, outliers and steps below the threshold not reported, the two
// stages agreeing with DetectSteps, and bad options named.
#include "stats/history_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "stats/bootstrap.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

// base * (1 + cv * z) with Gaussian z from a fixed seed; `steps` multiply the level from an index.
std::vector<double> Series(uint64_t seed, std::size_t n, double cv,
                           std::vector<std::pair<std::size_t, double>> steps = {}) {
  Rng rng(seed);
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) {
    double level = 1000;
    for (const auto& [index, size] : steps) level *= i >= index ? 1 + size : 1.0;
    const double u = 1.0 - rng.Uniform();
    const double z = std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.Uniform());
    x.push_back(level * (1 + cv * z));
  }
  return x;
}

TEST(HistoryDetectorTest, FindsAPlanted8PercentStep) {
  const std::vector<double> x = Series(1, 200, 0.02, {{120, 0.08}});
  auto steps = DetectSteps(x, {});
  ASSERT_TRUE(steps) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 1u);
  const Step& s = (*steps)[0];
  EXPECT_EQ(s.index, 120u);
  EXPECT_NEAR(s.magnitude, 0.08, 0.01);
  EXPECT_NEAR(s.level_before, 1000, 10);
  EXPECT_NEAR(s.level_after, 1080, 10);
  EXPECT_DOUBLE_EQ(s.magnitude, s.level_after / s.level_before - 1);
  EXPECT_LT(s.p_value, 1e-10);
  EXPECT_EQ(s.detectors, (std::vector<std::string>{"e-divisive", "binseg", "mann-whitney"}));
}

// A step among large outliers: e-divisive's t-test on means does not propose it; binary
// segmentation on the
// clipped series does, and the U test confirms it. Its p-value is then the U test's.
TEST(HistoryDetectorTest, MeanShiftProposesAStepHiddenByOutliers) {
  std::vector<double> x = Series(31, 300, 0.02, {{150, 0.1}});
  for (std::size_t i = 5; i < x.size(); i += 13) x[i] *= i % 2 ? 3.0 : 0.4;
  HistoryOptions without;
  without.mean_shift = false;
  auto alone = DetectSteps(x, without);
  ASSERT_TRUE(alone);
  EXPECT_TRUE(alone->empty());
  auto steps = DetectSteps(x, {});
  ASSERT_TRUE(steps) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].index, 150u);
  EXPECT_NEAR((*steps)[0].magnitude, 0.1, 0.015);  // medians of 40 points, 2% CV
  EXPECT_EQ((*steps)[0].detectors, (std::vector<std::string>{"binseg", "mann-whitney"}));
  EXPECT_GT((*steps)[0].p_value, 0.0);
  EXPECT_LT((*steps)[0].p_value, HistoryOptions{}.rank_pvalue);
}

TEST(HistoryDetectorTest, StepsUpAndDown) {
  const std::vector<double> x = Series(2, 300, 0.02, {{80, 0.15}, {200, -0.25}});
  auto steps = DetectSteps(x, {});
  ASSERT_TRUE(steps) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].index, 80u);
  EXPECT_NEAR((*steps)[0].magnitude, 0.15, 0.02);
  EXPECT_EQ((*steps)[1].index, 200u);
  EXPECT_NEAR((*steps)[1].magnitude, -0.25, 0.02);
}

TEST(HistoryDetectorTest, SingleOutliersAreNotSteps) {
  std::vector<double> x = Series(3, 200, 0.02);
  x[60] *= 3;    // a preempted run
  x[61] *= 2.5;  // and the next one: still not a level that holds
  x[150] *= 0.5;
  // With a loose p-value raw e-divisive splits around the outliers; the confirmation drops
  // every candidate, at those options and at the defaults.
  HistoryOptions loose;
  loose.window = 50;
  loose.max_pvalue = 0.05;
  auto analysis = DetectChangePoints(x, EDivisiveOptions(loose));
  ASSERT_TRUE(analysis);
  EXPECT_FALSE(analysis->change_points.empty());
  for (const HistoryOptions& options : {loose, HistoryOptions{}}) {
    auto steps = DetectSteps(x, options);
    ASSERT_TRUE(steps);
    EXPECT_TRUE(steps->empty()) << (*steps)[0].index;
  }
}

TEST(HistoryDetectorTest, StepBelowTheThresholdIsNotReported) {
  const std::vector<double> x = Series(4, 200, 0.005, {{100, 0.03}});
  HistoryOptions options;
  auto steps = DetectSteps(x, options);
  ASSERT_TRUE(steps);
  EXPECT_TRUE(steps->empty());
  options.threshold = 0.02;  // significant, and now large enough
  steps = DetectSteps(x, options);
  ASSERT_TRUE(steps);
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].index, 100u);
  EXPECT_NEAR((*steps)[0].magnitude, 0.03, 0.005);
}

// The threshold filters on the magnitude it prints: a -5.2% step just after a +3.5% one is
// printed with the same magnitude at thresholds of 3, 4 and 5% and not reported at 6%. (Before,
// the +3.5% candidate was dropped at 4% and the -5.2% step re-measured against the level before
// both, -1.9%, and lost.)
TEST(HistoryDetectorTest, ThresholdFiltersThePrintedMagnitude) {
  const std::vector<double> x = Series(11, 140, 0.002, {{60, 0.035}, {75, -0.052}});
  std::vector<Step> at3;
  for (double threshold : {0.03, 0.04, 0.05, 0.06}) {
    HistoryOptions options;
    options.threshold = threshold;
    auto steps = DetectSteps(x, options);
    ASSERT_TRUE(steps) << steps.error().ToString();
    std::vector<Step> big;  // the -5.2% step, wherever the segmentation puts it
    for (const Step& s : *steps) {
      EXPECT_GE(std::fabs(s.magnitude), threshold) << "at " << threshold;
      if (s.index == 75) big.push_back(s);
    }
    if (threshold == 0.03) {
      ASSERT_EQ(steps->size(), 2u);
      EXPECT_EQ((*steps)[0].index, 60u);
      EXPECT_NEAR((*steps)[0].magnitude, 0.035, 0.003);
      at3 = big;
      ASSERT_EQ(big.size(), 1u);
      EXPECT_NEAR(big[0].magnitude, -0.052, 0.002);
    } else if (threshold < 0.06) {
      EXPECT_EQ(steps->size(), 1u) << "at " << threshold;
      EXPECT_EQ(big, at3) << "at " << threshold;
    } else {
      EXPECT_TRUE(steps->empty()) << (*steps)[0].magnitude;
    }
  }
}

// Autocorrelated noise is not a string of steps: around a constant level, AR(1) noise with
// phi 0.9 (a machine that is slow for a while, then fast) wanders in runs; e-divisive cuts it, and
// taken as independent the runs' medians differ significantly on ranks, several by 5% or more. The
// serial correction sees the runs of residuals of one sign and confirms none. A 30% step in
// milder AR(1) noise (phi 0.5) is still found. (At phi 0.9, 40 points a side are worth about 3
// independent ones, and the rank test, which cannot exceed complete separation, no longer
// confirms even that step: docs/statistics.md, limitations.)
TEST(HistoryDetectorTest, AutocorrelatedNoiseIsNotAStringOfSteps) {
  auto ar1 = [](uint64_t seed, std::size_t step_at, double step, double phi = 0.9) {
    Rng rng(seed);
    std::vector<double> x;
    double e = 0;
    for (std::size_t i = 0; i < 400; ++i) {
      const double u = 1.0 - rng.Uniform();
      e = phi * e + 0.015 * std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.Uniform());
      x.push_back(1000 * (i >= step_at ? 1 + step : 1.0) * (1 + e));
    }
    return x;
  };
  HistoryOptions independent;
  independent.serial_correction = false;
  std::size_t without = 0;
  for (uint64_t seed : {21, 22, 23}) {
    auto steps = DetectSteps(ar1(seed, 400, 0), independent);
    ASSERT_TRUE(steps);
    without += steps->size();
    steps = DetectSteps(ar1(seed, 400, 0), {});
    ASSERT_TRUE(steps);
    EXPECT_TRUE(steps->empty()) << "seed " << seed << ": " << (*steps)[0].index;
  }
  EXPECT_GE(without, 3u);  // what the correction is for

  auto step = DetectSteps(ar1(24, 250, 0.3, 0.5), {});
  ASSERT_TRUE(step);
  ASSERT_EQ(step->size(), 1u);
  EXPECT_NEAR(static_cast<double>((*step)[0].index), 250, 2);
}

// Otava's tigerbeetle series (tests/fixtures/oracles/otava): the +19% step at 71 has smaller
// moves inside both of its segments, so the points around their medians run in long stretches;
// the serial correction alone would take the saturated U test (complete separation) below
// significance. The two segments are further apart than the narrower one is wide, so the step
// stands, as Otava's own test expects (15 and 71).
TEST(HistoryDetectorTest, SeparatedSegmentsNeedNoNoiseModel) {
  std::istringstream in(testing::ReadFile(testing::FixturePath("oracles/otava/tigerbeetle.csv")));
  std::string line;
  std::getline(in, line);  // index,value
  std::vector<double> x;
  while (std::getline(in, line)) x.push_back(std::stod(line.substr(line.find(',') + 1)));
  ASSERT_EQ(x.size(), 365u);
  auto steps = DetectSteps(x, {});
  ASSERT_TRUE(steps) << steps.error().ToString();
  std::vector<std::size_t> found;
  for (const Step& s : *steps) found.push_back(s.index);
  EXPECT_EQ(found, (std::vector<std::size_t>{15, 71}));
}

// 12 points against 9, all above: the exact U test gives 2 / C(21, 9) = 6.8e-6; the normal
// approximation could not go below 1.4e-4, so a short series' clean step was never confirmed.
TEST(HistoryDetectorTest, ShortSeriesUseTheExactRankTest) {
  auto steps = DetectSteps(Series(13, 21, 0.01, {{12, 0.15}}), {});
  ASSERT_TRUE(steps) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].index, 12u);
  EXPECT_NEAR((*steps)[0].magnitude, 0.15, 0.02);
}

TEST(HistoryDetectorTest, NewLevelMustHoldMinSegmentPoints) {
  // A clean 20% step 2 points before the end is not a level yet; 5 points are.
  auto found = [](const std::vector<double>& x, const HistoryOptions& options) {
    auto steps = DetectSteps(x, options);
    EXPECT_TRUE(steps);
    std::vector<std::size_t> out;
    for (const Step& s : steps ? *steps : std::vector<Step>{}) out.push_back(s.index);
    return out;
  };
  EXPECT_TRUE(found(Series(5, 100, 0.01, {{98, 0.2}}), {}).empty());
  EXPECT_EQ(found(Series(5, 100, 0.01, {{95, 0.2}}), {}), (std::vector<std::size_t>{95}));
  HistoryOptions options;
  options.min_segment = 6;
  EXPECT_TRUE(found(Series(5, 100, 0.01, {{95, 0.2}}), options).empty());
}

// The confirmation on hand-made candidates: the rank test needs enough points to reach
// max_pvalue (5 against 5 cannot: the smallest two-sided U p-value is 2/252), the threshold and
// min_segment apply without it, and a dropped candidate's neighbour is measured again.
TEST(HistoryDetectorTest, ConfirmStepsOnGivenCandidates) {
  std::vector<double> x = {100, 101, 99, 100, 100, 110, 111, 109, 110, 110};
  ChangePointAnalysis analysis;
  analysis.change_points.push_back(ChangePoint{5, 1e-6});
  HistoryOptions options;
  options.mean_shift = false;  // these candidates only
  EXPECT_TRUE(ConfirmSteps(x, analysis, options).empty());
  options.rank_test = false;
  std::vector<Step> steps = ConfirmSteps(x, analysis, options);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].index, 5u);
  EXPECT_DOUBLE_EQ(steps[0].level_before, 100);
  EXPECT_DOUBLE_EQ(steps[0].level_after, 110);
  EXPECT_DOUBLE_EQ(steps[0].magnitude, 0.1);
  EXPECT_DOUBLE_EQ(steps[0].p_value, 1e-6);
  EXPECT_EQ(steps[0].detectors, (std::vector<std::string>{"e-divisive"}));
  options.threshold = 0.11;
  EXPECT_TRUE(ConfirmSteps(x, analysis, options).empty());
  options.threshold = 0.05;
  options.min_segment = 6;
  EXPECT_TRUE(ConfirmSteps(x, analysis, options).empty());

  // An outlier at 20 proposed as two candidates (20, 21) besides a real step at 40: both edges
  // of the outlier go, the step stays, measured from 0 once the outlier's edges are gone.
  std::vector<double> y(80, 100.0);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += static_cast<double>(i % 3);
  y[20] = 300;
  for (std::size_t i = 40; i < y.size(); ++i) y[i] *= 1.2;
  ChangePointAnalysis three;
  for (std::size_t index : {20u, 21u, 40u}) three.change_points.push_back(ChangePoint{index, 1e-9});
  HistoryOptions given;
  given.mean_shift = false;
  steps = ConfirmSteps(y, three, given);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].index, 40u);
  EXPECT_NEAR(steps[0].magnitude, 0.2, 1e-12);
}

TEST(HistoryDetectorTest, TwoStagesEqualDetectSteps) {
  const std::vector<std::vector<double>> cases = {
      Series(6, 500, 0.05, {{100, 0.1}, {250, -0.07}, {400, 0.3}}),
      Series(7, 1000, 0.1),
      Series(8, 60, 0.02, {{30, -0.2}}),
      Series(9, 30, 0.01),
  };
  HistoryOptions loose;
  loose.threshold = 0.02;
  loose.window = 50;
  loose.max_pvalue = 0.001;
  loose.level_points = 20;
  loose.rank_test = false;
  for (const HistoryOptions& options : {HistoryOptions{}, loose}) {
    for (const auto& x : cases) {
      auto analysis = DetectChangePoints(x, EDivisiveOptions(options));
      ASSERT_TRUE(analysis);
      auto steps = DetectSteps(x, options);
      ASSERT_TRUE(steps);
      EXPECT_EQ(ConfirmSteps(x, *analysis, options), *steps);
    }
  }
  EXPECT_EQ(EDivisiveOptions({}).window_len, 100u);
  EXPECT_DOUBLE_EQ(EDivisiveOptions({}).max_pvalue, 0.0001);
  EXPECT_DOUBLE_EQ(EDivisiveOptions({}).min_magnitude, 0.0);
}

TEST(HistoryDetectorTest, EmptyAndTinySeries) {
  EXPECT_TRUE(DetectSteps(std::vector<double>{}, {})->empty());
  EXPECT_TRUE(DetectSteps(std::vector<double>{1.0}, {})->empty());
  EXPECT_TRUE(DetectSteps(std::vector<double>{1, 1, 2, 2}, {})->empty());
}

TEST(HistoryDetectorTest, BadOptionsNameTheField) {
  const std::vector<double> x = Series(10, 50, 0.02);
  auto field = [&](HistoryOptions options) {
    auto steps = DetectSteps(x, options);
    EXPECT_FALSE(steps);
    return steps ? std::string() : steps.error().field;
  };
  HistoryOptions o;
  o.threshold = -0.01;
  EXPECT_EQ(field(o), "threshold");
  o.threshold = NAN;
  EXPECT_EQ(field(o), "threshold");
  o = {};
  o.window = 1;
  EXPECT_EQ(field(o), "window");
  o = {};
  o.max_pvalue = 1.5;
  EXPECT_EQ(field(o), "max_pvalue");
  o.max_pvalue = NAN;
  EXPECT_EQ(field(o), "max_pvalue");
  o = {};
  o.rank_pvalue = -0.1;
  EXPECT_EQ(field(o), "rank_pvalue");
  o = {};
  o.mean_shift_penalty = 0;
  EXPECT_EQ(field(o), "mean_shift_penalty");
  o = {};
  o.clip_sigmas = NAN;
  EXPECT_EQ(field(o), "clip_sigmas");
  o = {};
  o.level_points = 0;
  EXPECT_EQ(field(o), "level_points");
  o = {};
  o.min_segment = 0;
  EXPECT_EQ(field(o), "min_segment");
  std::vector<double> bad = x;
  bad[7] = INFINITY;
  auto steps = DetectSteps(bad, {});
  ASSERT_FALSE(steps);
  EXPECT_EQ(steps.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(steps.error().field, "series[7]");
}

}  // namespace
}  // namespace perfwarden::stats
