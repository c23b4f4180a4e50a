// SPDX-License-Identifier: Apache-2.0
// The paired gate by simulation, over its whole sequential procedure (looks at the default
// schedule's block counts; at each look only the metrics still open are measured further, as the
// runner does), on a noisy shared machine: a drift shared by both sides of a block (log-normal,
// sd 10%) with a 40% step between two blocks of every run, a small drift between the two halves
// of a block (sd 1%, sides in random order), repetition noise of CV 2-5% and 1 repetition in 20
// hit 2-4x slower; and a machine that switches between two speeds 1.7x apart, so that the two
// sides of 1 block in 10 run at different speeds. The promises: on A/A data the family-wise
// false-alarm rate over all looks is at most alpha, a 7% or 8% slowdown of one metric among 6 is
// a REGRESSION of exactly that metric in at least 95% of runs with no other alarm, and the blocks
// it takes (pinned, to show a change that makes the gate dearer). The defaults (blocks of one
// repetition per side, the trimmed test, looks at 10..50 blocks) against the design before them
// (blocks of 5, the t-test, looks at 6..30) on the same noise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "stats/bootstrap.h"
#include "stats/paired_verdict.h"

namespace perfwarden::stats {
namespace {

// The runner's default repetitions per side per block (config::GateSettings).
constexpr int PairedPolicyRepetitions() { return 1; }

// The design before the trimmed test: blocks of 5 repetitions, the t-test, looks at 6..30.
PairedPolicy BlocksOfFivePolicy() {
  PairedPolicy policy;
  policy.test = PairedTest::kT;
  policy.min_blocks = 6;
  policy.max_blocks = 30;
  return policy;
}

double StandardNormal(Rng& rng) {
  for (;;) {
    const double u1 = rng.Uniform();
    if (u1 <= 0) continue;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * rng.Uniform());
  }
}

struct NoiseModel {
  double drift_sd = 0.10;   // shared per-block drift (log scale)
  double step = 0.40;       // one step of the machine's speed between two blocks of a run
  double within_sd = 0.01;  // drift between the first and second half of a block
  double cv_low = 0.02;     // each metric's repetition CV is drawn in [cv_low, cv_high]
  double cv_high = 0.05;
  double outlier_rate = 0.05;                   // repetitions hit 2-4x slower
  int repetitions = PairedPolicyRepetitions();  // per side per block
  // The machine's speed switches: the two sides of a block run at speeds this far apart (the
  // slower side drawn at random) with this probability.
  double straddle_rate = 0.0;
  double straddle_factor = 1.7;
};

NoiseModel Switching() {
  NoiseModel model;
  model.straddle_rate = 0.10;
  return model;
}

NoiseModel BlocksOfFive(NoiseModel model) {
  model.repetitions = 5;
  return model;
}

// One run of the paired runner: metrics with their own levels and noise, measured block after
// block on one machine; `shifts[m]` is the head's true relative change of metric m.
class SimulatedRun {
 public:
  SimulatedRun(Rng& rng, const NoiseModel& model, std::vector<double> shifts, int max_blocks)
      : rng_(rng), model_(model), shifts_(std::move(shifts)), blocks_(shifts_.size()) {
    for (size_t m = 0; m < shifts_.size(); ++m) {
      levels_.push_back(1000.0 * static_cast<double>(m + 1));
      cvs_.push_back(model.cv_low + (model.cv_high - model.cv_low) * rng.Uniform());
    }
    step_block_ = 1 + static_cast<int>(rng.Below(static_cast<uint32_t>(max_blocks - 1)));
  }

  // Measures the metrics in `open` up to `blocks` blocks; the others keep what they have.
  void MeasureUpTo(int blocks, const std::vector<bool>& open) {
    while (measured_ < blocks) MeasureBlock(open);
  }

  // Metric-blocks measured so far (what the measuring cost).
  long metric_blocks() const { return metric_blocks_; }

  std::vector<PairedMetricInput> Inputs() const {
    std::vector<PairedMetricInput> inputs;
    for (size_t m = 0; m < shifts_.size(); ++m) {
      inputs.push_back({"BM_" + std::to_string(m), Direction::kLowerIsBetter, blocks_[m]});
    }
    return inputs;
  }

 private:
  double Repetition(size_t m, double machine, bool head) {
    double v = levels_[m] * machine * std::exp(cvs_[m] * StandardNormal(rng_));
    if (head) v *= 1 + shifts_[m];
    if (rng_.Uniform() < model_.outlier_rate) v *= 2 + 2 * rng_.Uniform();
    return v;
  }

  void MeasureBlock(const std::vector<bool>& open) {
    const int index = measured_++;
    double machine = std::exp(model_.drift_sd * StandardNormal(rng_));
    if (index >= step_block_) machine *= 1 + model_.step;
    const bool head_first = rng_.Uniform() < 0.5;
    double second_half = std::exp(model_.within_sd * StandardNormal(rng_));
    if (rng_.Uniform() < model_.straddle_rate) {
      second_half *= rng_.Uniform() < 0.5 ? model_.straddle_factor : 1 / model_.straddle_factor;
    }
    for (size_t m = 0; m < shifts_.size(); ++m) {
      if (!open[m]) continue;
      ++metric_blocks_;
      PairedBlock block;
      for (int r = 0; r < model_.repetitions; ++r) {
        block.base.push_back(Repetition(m, machine * (head_first ? second_half : 1), false));
        block.head.push_back(Repetition(m, machine * (head_first ? 1 : second_half), true));
      }
      blocks_[m].push_back(std::move(block));
    }
  }

  Rng& rng_;
  NoiseModel model_;
  std::vector<double> shifts_;
  std::vector<double> levels_;
  std::vector<double> cvs_;
  int step_block_ = 0;
  int measured_ = 0;
  long metric_blocks_ = 0;
  std::vector<std::vector<PairedBlock>> blocks_;
};

// The whole sequential procedure as the runner runs it: measure the open metrics to the next
// look, judge the blocks as far as they reach, stop when nothing is left open or the last look
// is reached. Odd runs judge each look with the previous look's answer instead: both must agree.
PairedLookVerdicts RunProcedure(SimulatedRun& run, const PairedPolicy& policy, int metrics) {
  const std::vector<int> schedule =
      PairedLookSchedule(policy.min_blocks, policy.max_blocks, policy.growth);
  std::vector<bool> open(static_cast<size_t>(metrics), true);
  PairedLookVerdicts last;
  for (int look = 0;; ++look) {
    run.MeasureUpTo(schedule[static_cast<size_t>(look)], open);
    const auto inputs = run.Inputs();
    auto result = JudgePairedLook(inputs, policy, kLookReached);
    EXPECT_TRUE(result.has_value());
    if (!result) return {};
    EXPECT_EQ(result->look, look);
    if (look > 0 && look % 2 == 1) {
      auto stepped = JudgePairedLook(inputs, policy, look, false, &last);
      EXPECT_TRUE(stepped.has_value());
      if (stepped) {
        for (size_t m = 0; m < open.size(); ++m) {
          EXPECT_EQ(stepped->metrics[m].verdict, result->metrics[m].verdict);
          EXPECT_EQ(stepped->metrics[m].decided_at_look, result->metrics[m].decided_at_look);
        }
      }
    }
    if (!result->more_blocks_needed) return *result;
    for (size_t m = 0; m < open.size(); ++m) {
      open[m] = result->metrics[m].decided_at_look < 0;
    }
    last = std::move(*result);
  }
}

struct Figures {
  int trials = 0;
  int alarms = 0;        // trials with a REGRESSION where none is true (the gate fails wrongly)
  int improvements = 0;  // trials with an IMPROVEMENT where none is true (a label, not gating)
  int detected = 0;      // trials where the shifted metric is a REGRESSION and nothing else alarms
  int passed = 0;        // trials where the shifted metric PASSed (EQUIVALENT, IMPROVEMENT too)
  int unstable = 0;      // metrics left UNSTABLE, over all trials
  long blocks = 0;       // blocks of the last look, over all trials
  long metric_blocks = 0;  // blocks measured per metric, summed over metrics and trials
  int metrics = 1;
  double Rate(int count) const { return static_cast<double>(count) / trials; }
  double MeanBlocks() const { return static_cast<double>(blocks) / trials; }
  // The measuring cost: blocks per metric, on average over metrics and trials.
  double MeanMetricBlocks() const { return static_cast<double>(metric_blocks) / trials / metrics; }
};

Figures Simulate(const PairedPolicy& asked, const NoiseModel& model, int metrics, int trials,
                 double shift, uint64_t seed) {
  // The trimmed test decides on its own interval; its bootstrap is only reported, so fewer
  // replicates change no verdict and spare most of the simulation's time.
  PairedPolicy policy = asked;
  if (policy.test == PairedTest::kTrimmed) policy.bootstrap_resamples = 100;
  Rng rng(seed);
  Figures f;
  f.trials = trials;
  f.metrics = metrics;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> shifts(static_cast<size_t>(metrics), 0.0);
    const size_t target = rng.Below(static_cast<uint32_t>(metrics));
    if (shift != 0) shifts[target] = shift;
    SimulatedRun run(rng, model, shifts, policy.max_blocks);
    const PairedLookVerdicts result = RunProcedure(run, policy, metrics);
    f.blocks += result.blocks;
    f.metric_blocks += run.metric_blocks();
    f.unstable += result.unstable;
    int false_alarms = 0, false_improvements = 0;
    bool hit = false;
    for (size_t m = 0; m < result.metrics.size(); ++m) {
      const Verdict v = result.metrics[m].verdict;
      if (shift != 0 && m == target) {
        hit = v == Verdict::kRegression;
        f.passed += v == Verdict::kPass || v == Verdict::kEquivalent || v == Verdict::kImprovement;
      } else if (v == Verdict::kRegression) {
        ++false_alarms;
      } else if (v == Verdict::kImprovement) {
        ++false_improvements;
      }
    }
    if (false_alarms > 0) ++f.alarms;
    if (false_improvements > 0) ++f.improvements;
    if (hit && false_alarms == 0) ++f.detected;
  }
  return f;
}

void Print(const char* name, const Figures& f) {
  std::printf(
      "[ simulation ] %s: %d trials, family-wise false REGRESSION rate %.4f (IMPROVEMENT %.4f), "
      "detected %.4f, shifted metric passed %.4f, "
      "mean blocks of the last look %.2f, blocks per metric %.2f, unstable metrics per trial "
      "%.3f\n",
      name, f.trials, f.Rate(f.alarms), f.Rate(f.improvements), f.Rate(f.detected),
      f.Rate(f.passed), f.MeanBlocks(), f.MeanMetricBlocks(),
      static_cast<double>(f.unstable) / f.trials);
}

// 3 binomial standard errors over alpha, as tests/unit/stats/verdict_test.cc allows.
double AlarmBound(double alpha, int trials) {
  return alpha + 3 * std::sqrt(alpha * (1 - alpha) / trials);
}

TEST(PairedAaSimulation, FamilyWiseFalseAlarmsAtOrBelowAlpha) {
  const PairedPolicy policy;
  const int trials = 400;
  const Figures f = Simulate(policy, NoiseModel{}, 10, trials, 0.0, 20261125);
  Print("A/A, 10 metrics, trimmed, blocks of 1", f);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  // The measuring cost, pinned (17.5 blocks of one repetition per side when measured; the t-test
  // on blocks of 5 below takes 7.4 blocks, 37 repetitions per side).
  EXPECT_LE(f.MeanMetricBlocks(), 20);
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

TEST(PairedAaSimulation, SwitchingMachineHoldsFamilyWiseRate) {
  const PairedPolicy policy;
  const int trials = 400;
  const Figures f = Simulate(policy, Switching(), 10, trials, 0.0, 20261128);
  Print("A/A, 10 metrics, trimmed, blocks of 1, switching machine", f);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

TEST(PairedAaSimulation, BlocksOfFiveWithTheTTestHoldFamilyWiseRate) {
  const PairedPolicy policy = BlocksOfFivePolicy();
  const int trials = 400;
  const Figures f = Simulate(policy, BlocksOfFive(NoiseModel{}), 10, trials, 0.0, 20261125);
  Print("A/A, 10 metrics, t, blocks of 5", f);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

// With a 0.1% threshold only the test, Holm and the split of alpha over the looks protect; every
// metric runs to the last look (nothing fits inside +/-0.1%), the most looks a run can take.
TEST(PairedAaSimulation, AlphaSpendingAloneHoldsFamilyWiseRate) {
  PairedPolicy policy;
  policy.threshold = 0.001;
  policy.bootstrap_resamples = 200;  // the interval cannot decide at this threshold
  const int trials = 400;
  const Figures f = Simulate(policy, NoiseModel{}, 10, trials, 0.0, 777);
  Print("A/A, 10 metrics, trimmed, threshold 0.1%", f);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

TEST(PairedAaSimulation, TTestAlphaSpendingHoldsFamilyWiseRate) {
  PairedPolicy policy = BlocksOfFivePolicy();
  policy.threshold = 0.001;
  policy.bootstrap_resamples = 200;
  const int trials = 400;
  const Figures f = Simulate(policy, BlocksOfFive(NoiseModel{}), 10, trials, 0.0, 778);
  Print("A/A, 10 metrics, t, blocks of 5, threshold 0.1%", f);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

TEST(PairedAaSimulation, SignedRankTestHoldsFamilyWiseRate) {
  PairedPolicy policy = BlocksOfFivePolicy();
  policy.test = PairedTest::kWilcoxon;
  policy.threshold = 0.001;
  policy.bootstrap_resamples = 200;
  const int trials = 400;
  const Figures f = Simulate(policy, BlocksOfFive(NoiseModel{}), 10, trials, 0.0, 31337);
  Print("A/A, 10 metrics, wilcoxon, blocks of 5, threshold 0.1%", f);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

// PASS is the gate's other error: a slowdown of exactly the threshold must pass at most at the
// rate alpha (each bound's one-sided levels spent over the looks like alpha).
TEST(PairedPassSimulation, SlowdownOfExactlyTheThresholdPassesAtMostAlpha) {
  const PairedPolicy policy;
  const int trials = 400;
  for (const bool switching : {false, true}) {
    const Figures f = Simulate(policy, switching ? Switching() : NoiseModel{}, 6, trials, 0.05,
                               switching ? 4242 : 4243);
    Print(switching ? "5% slowdown (the threshold), 1 of 6, trimmed, switching machine"
                    : "5% slowdown (the threshold), 1 of 6, trimmed",
          f);
    EXPECT_LE(f.Rate(f.passed), AlarmBound(policy.alpha, trials));
  }
}

struct PowerCase {
  const char* name;
  double shift;
  bool switching;
  bool blocks_of_five;
  double min_detected = 0.95;
};

class PairedPowerSimulation : public ::testing::TestWithParam<PowerCase> {};

TEST_P(PairedPowerSimulation, OneSlowdownAmongSixIsFoundAlone) {
  const PowerCase c = GetParam();
  const PairedPolicy policy = c.blocks_of_five ? BlocksOfFivePolicy() : PairedPolicy{};
  NoiseModel model = c.switching ? Switching() : NoiseModel{};
  if (c.blocks_of_five) model = BlocksOfFive(model);
  const int trials = 300;
  const Figures f = Simulate(policy, model, 6, trials, c.shift,
                             static_cast<uint64_t>(c.shift * 1000) + 5 + (c.switching ? 1 : 0));
  Print(c.name, f);
  EXPECT_GE(f.Rate(f.detected), c.min_detected);
  EXPECT_LE(f.Rate(f.alarms), AlarmBound(policy.alpha, trials));
  EXPECT_LE(f.Rate(f.improvements), AlarmBound(policy.alpha, trials));
}

// The t-test on blocks of 5 on the switching machine: a torn block's log ratio (+/-0.5) enters
// its mean in full, and a third of the slowdowns end UNSTABLE (0.63 detected when measured);
// pinned so that the comparison in docs/statistics.md stays true.
INSTANTIATE_TEST_SUITE_P(
    Slowdowns, PairedPowerSimulation,
    ::testing::Values(
        PowerCase{"power, 7% slowdown, 1 of 6, trimmed, blocks of 1", 0.07, false, false},
        PowerCase{"power, 8% slowdown, 1 of 6, trimmed, blocks of 1", 0.08, false, false},
        PowerCase{"power, 7% slowdown, 1 of 6, trimmed, switching machine", 0.07, true, false},
        PowerCase{"power, 7% slowdown, 1 of 6, t, blocks of 5", 0.07, false, true},
        PowerCase{"power, 7% slowdown, 1 of 6, t, blocks of 5, switching machine", 0.07, true, true,
                  0.5}));

}  // namespace
}  // namespace perfwarden::stats
