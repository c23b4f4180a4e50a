// SPDX-License-Identifier: Apache-2.0
// stats/creep.h: Theil-Sen, Mann-Kendall and Sen's interval against an independent computation
// (python3 + mpmath, the script in the comment below), and DetectCreeps on planted series: a
// 0.15%/point drift is one creep (and replaces the steps the detector cut it into), pure noise,
// a 10% step and a drift below the threshold are none.
#include "stats/creep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "stats/history_detector.h"

namespace perfwarden::stats {
namespace {

// y[i] = 100 (1 + 0.0015 i) + 0.4 sin(1.7 i) + 0.25 cos(0.37 i^2), i = 0..59, as Python prints it.
// The oracle (python3, mpmath for the normal tail):
//   slopes = sorted((y[j]-y[i])/(j-i) for i<j); b = median(slopes); a = median(y[i]-b*i)
//   S = sum(sign(y[j]-y[i])); var = (n(n-1)(2n+5) - sum t(t-1)(2t+5))/18
//   z = (S - sign(S))/sqrt(var); p = erfc(|z|/sqrt(2))
//   c = sqrt(2) erfinv(0.95) sqrt(var); CI = slopes[round((N-c)/2)-1], slopes[round((N+c)/2+1)-1]
const std::vector<double> kDrift = {100.25,
                                    100.77974776058251,
                                    100.22045146530533,
                                    99.83409818298433,
                                    101.03133783446677,
                                    100.82320355168257,
                                    100.80235265629223,
                                    100.99076977348808,
                                    101.57310999260923,
                                    101.53983261404235,
                                    101.3067945162345,
                                    101.76676920101428,
                                    101.95193295574265,
                                    102.14524216908696,
                                    101.46990102181852,
                                    102.39417467119436,
                                    102.97434935116523,
                                    102.56406929312136,
                                    102.6281137291487,
                                    103.14625906423468,
                                    102.97637649719073,
                                    103.0315003649926,
                                    102.93214198248296,
                                    103.98940547113905,
                                    103.83467053576668,
                                    103.43562972600554,
                                    104.0752547369958,
                                    104.6516120068543,
                                    104.14030806772341,
                                    103.77396543045901,
                                    105.01808194352668,
                                    104.69937396769434,
                                    104.38676198979691,
                                    104.94956598165143,
                                    105.7033961179534,
                                    105.48863053694474,
                                    104.89718246513361,
                                    105.39154258213577,
                                    106.33678260050866,
                                    105.49391903291584,
                                    105.68809648261401,
                                    106.62033339102545,
                                    106.78151225084851,
                                    106.33633365174785,
                                    106.62455983741384,
                                    107.11176631759251,
                                    106.83635431202737,
                                    106.87629982469727,
                                    107.05594680213157,
                                    107.55844883828976,
                                    107.47900098380144,
                                    107.39458958804227,
                                    107.99795922156648,
                                    108.07312879861523,
                                    107.79036674577489,
                                    108.14429863612996,
                                    108.606358052367,
                                    108.62462669120873,
                                    108.53067592439896,
                                    109.00757284954626};

TEST(CreepTest, TheilSenMannKendallAndSenIntervalMatchTheOracle) {
  const TrendLine line = TheilSen(kDrift);
  EXPECT_NEAR(line.slope, 0.14808031521863108, 1e-12);
  EXPECT_NEAR(line.intercept, 100.0958430857531, 1e-10);
  const MannKendallResult mk = MannKendall(kDrift);
  EXPECT_EQ(mk.s, 1642);
  EXPECT_NEAR(mk.variance, 24583.333333333332, 1e-8);
  EXPECT_NEAR(mk.z, 10.466179915991235, 1e-10);
  EXPECT_NEAR(mk.p_value / 1.2352784104371516e-25, 1, 1e-6);
  const SlopeInterval ci = SenSlopeInterval(kDrift, 0.95);
  EXPECT_NEAR(ci.low, 0.14314923508067606, 1e-12);
  EXPECT_NEAR(ci.high, 0.15302943070816294, 1e-12);
  // Ties: [1, 1, 2, 2, 3, 5, 4] -> S 17, var (7*6*19 - 2*2*1*9)/18.
  const std::vector<double> tied = {1, 1, 2, 2, 3, 5, 4};
  const MannKendallResult t = MannKendall(tied);
  EXPECT_EQ(t.s, 17);
  EXPECT_NEAR(t.variance, 42.333333333333336, 1e-12);
  EXPECT_NEAR(t.z, 2.4591144939770877, 1e-12);
  EXPECT_NEAR(t.p_value, 0.013928019136188489, 1e-12);
  // Too small: documented answers.
  EXPECT_TRUE(std::isnan(TheilSen(std::vector<double>{1}).slope));
  EXPECT_EQ(MannKendall(std::vector<double>{1, 2}).p_value, 1);
  EXPECT_TRUE(std::isnan(SenSlopeInterval(std::vector<double>{1, 2}, 0.95).low));
}

// Deterministic standard normal noise (an LCG and Box-Muller: the same numbers on any library).
class Noise {
 public:
  explicit Noise(uint64_t seed) : state_(seed) {}
  double Next() {
    const double u1 = Uniform(), u2 = Uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  double Uniform() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state_ >> 11) + 0.5) / 9007199254740992.0;
  }
  uint64_t state_;
};

// `flat` points at 100, then `ramp` points rising by `per_point` (relative) each, then `flat`
// points at the new level; noise of relative sd `cv`.
std::vector<double> Ramp(std::size_t flat, std::size_t ramp, double per_point, double cv,
                         uint64_t seed) {
  Noise noise(seed);
  std::vector<double> y;
  double level = 100;
  for (std::size_t i = 0; i < flat; ++i) y.push_back(level * (1 + cv * noise.Next()));
  for (std::size_t i = 0; i < ramp; ++i) {
    level += 100 * per_point;
    y.push_back(level * (1 + cv * noise.Next()));
  }
  for (std::size_t i = 0; i < flat; ++i) y.push_back(level * (1 + cv * noise.Next()));
  return y;
}

std::vector<std::size_t> StepIndices(const std::vector<double>& y) {
  std::vector<std::size_t> out;
  const std::vector<Step> steps = DetectSteps(y, {}).value();
  for (const Step& s : steps) out.push_back(s.index);
  return out;
}

TEST(CreepTest, ADriftIsOneCreepThatReplacesItsSteps) {
  // 0.15% per point over 60 points: 9% in all, no single step beyond 5%.
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(seed);
    const std::vector<double> y = Ramp(60, 60, 0.0015, 0.005, seed);
    const std::vector<std::size_t> steps = StepIndices(y);
    auto creeps = DetectCreeps(y, steps, {});
    ASSERT_TRUE(creeps) << creeps.error().ToString();
    ASSERT_EQ(creeps->size(), 1u);
    const Creep& c = creeps->front();
    EXPECT_LT(c.start, 90u);  // overlaps the ramp [60, 120)
    EXPECT_GT(c.end, 90u);
    EXPECT_NEAR(c.total_change, 0.09, 0.015);
    EXPECT_GT(c.slope, 0.0005);
    EXPECT_LT(c.slope, 0.002);
    EXPECT_LT(c.slope_low, c.slope);
    EXPECT_GT(c.slope_high, c.slope);
    EXPECT_GT(c.slope_low, 0);  // the interval excludes no trend
    EXPECT_LT(c.p_value, 1e-4);
    EXPECT_NEAR(c.total_change, c.level_end / c.level_start - 1, 1e-12);
    EXPECT_NEAR(c.level_start, 100, 1);  // the flat level before the ramp
    EXPECT_NEAR(c.level_end, 109, 1);    // and after it
    // Every confirmed step inside the creep's range is listed, no other.
    for (std::size_t s : steps) {
      const bool inside = s > c.start && s <= c.end;
      EXPECT_EQ(std::count(c.steps.begin(), c.steps.end(), s), inside ? 1 : 0) << s;
    }
  }
  // Downwards: negative figures.
  const std::vector<double> down = Ramp(60, 60, -0.0015, 0.005, 9);
  auto creeps = DetectCreeps(down, StepIndices(down), {});
  ASSERT_TRUE(creeps);
  ASSERT_EQ(creeps->size(), 1u);
  EXPECT_LT(creeps->front().total_change, -0.05);
  EXPECT_LT(creeps->front().slope_high, 0);
}

TEST(CreepTest, NoiseAStepAndASmallDriftAreNotCreeps) {
  for (uint64_t seed : {11, 12, 13, 14, 15}) {
    SCOPED_TRACE(seed);
    const std::vector<double> noise = Ramp(150, 0, 0, 0.01, seed);  // 300 points
    EXPECT_TRUE(DetectCreeps(noise, StepIndices(noise), {}).value().empty());
    // A 10% step at point 100: the detector's step, not a creep.
    std::vector<double> step = Ramp(50, 0, 0, 0.005, seed);  // 2 x 50 points
    const std::vector<double> after = Ramp(25, 0, 0, 0.005, seed + 100);
    for (double x : after) step.push_back(1.1 * x);
    const std::vector<std::size_t> steps = StepIndices(step);
    ASSERT_EQ(steps, std::vector<std::size_t>{100});
    EXPECT_TRUE(DetectCreeps(step, steps, {}).value().empty());
    EXPECT_TRUE(DetectCreeps(step, {}, {}).value().empty());  // with or without the step known
    // 0.05% per point over 60 points: 3%, a significant trend below the 5% threshold.
    const std::vector<double> small = Ramp(60, 60, 0.0005, 0.002, seed);
    EXPECT_LT(MannKendall(std::span(small).subspan(60, 60)).p_value, 1e-6);
    EXPECT_TRUE(DetectCreeps(small, StepIndices(small), {}).value().empty());
    // The same with a 2% threshold is a creep.
    CreepOptions low;
    low.threshold = 0.02;
    EXPECT_EQ(DetectCreeps(small, StepIndices(small), low).value().size(), 1u);
  }
}

// The scan resumed point by point (as the server's analyses go) judges the new windows only and
// finds a whole scan's runs at every length, through drifts up and down that start, pause and end;
// a scan made with other options, or on a series shorter than a window, is not resumed.
TEST(CreepTest, AResumedScanIsAWholeScan) {
  std::vector<double> y = Ramp(60, 80, 0.0015, 0.005, 21);  // flat, 80-point ramp, flat
  const std::vector<double> down = Ramp(40, 50, -0.002, 0.005, 22);
  for (double x : down) y.push_back(x * y.back() / down.front());
  std::optional<CreepScan> previous;
  std::size_t runs_seen = 0;
  for (std::size_t n = 1; n <= y.size(); ++n) {
    SCOPED_TRACE(n);
    const std::span<const double> part(y.data(), n);
    auto whole = ScanCreeps(part, {});
    auto resumed = ScanCreeps(part, {}, previous ? &*previous : nullptr);
    ASSERT_TRUE(whole && resumed);
    ASSERT_EQ(resumed->runs, whole->runs);
    EXPECT_EQ(resumed->length, n);
    runs_seen = std::max(runs_seen, resumed->runs.size());
    previous = *resumed;
  }
  EXPECT_GE(runs_seen, 2u);  // both drifts crept
  EXPECT_EQ(CreepsOfRuns(y, previous->runs, {}, {}).value(), DetectCreeps(y, {}, {}).value());
  // Another threshold judges windows anew: the old runs are not taken.
  CreepOptions low;
  low.threshold = 0.02;
  EXPECT_EQ(ScanCreeps(y, low, &*previous)->runs, ScanCreeps(y, low)->runs);
  // A state longer than the series is not of a prefix of it.
  const std::span<const double> shorter(y.data(), y.size() - 30);
  EXPECT_EQ(ScanCreeps(shorter, {}, &*previous)->runs, ScanCreeps(shorter, {})->runs);
  // A run outside the series is refused.
  CreepRun outside{0, y.size(), 1, 0, 0.001};
  EXPECT_EQ(CreepsOfRuns(y, std::vector<CreepRun>{outside}, {}, {}).error().field, "runs");
}

TEST(CreepTest, BadInputNamesTheField) {
  const std::vector<double> y(30, 1.0);
  auto field = [&](const CreepOptions& o, std::vector<double> levels = {},
                   std::vector<std::size_t> steps = {}) {
    if (levels.empty()) levels = y;
    auto r = DetectCreeps(levels, steps, o);
    return r ? std::string("ok") : r.error().field;
  };
  CreepOptions o;
  EXPECT_EQ(field(o), "ok");
  EXPECT_TRUE(DetectCreeps(y, {}, o).value().empty());  // constant: no trend
  o.threshold = 0;
  EXPECT_EQ(field(o), "threshold");
  o = {};
  o.window = 15;
  EXPECT_EQ(field(o), "window");
  o = {};
  o.min_points = 5;
  EXPECT_EQ(field(o), "min_points");
  o = {};
  o.max_pvalue = 1;
  EXPECT_EQ(field(o), "max_pvalue");
  o = {};
  o.line_margin = -0.1;
  EXPECT_EQ(field(o), "line_margin");
  o = {};
  o.confidence = 1;
  EXPECT_EQ(field(o), "confidence");
  std::vector<double> nan = y;
  nan[7] = std::nan("");
  EXPECT_EQ(field({}, nan), "levels[7]");
  EXPECT_EQ(field({}, y, {5, 5}), "steps[1]");
  EXPECT_EQ(field({}, y, {0}), "steps[0]");
  EXPECT_EQ(field({}, y, {30}), "steps[0]");
  // A series below min_points is not searched.
  EXPECT_TRUE(DetectCreeps(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {}, {})->empty());
}

}  // namespace
}  // namespace perfwarden::stats
