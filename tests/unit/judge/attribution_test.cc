// SPDX-License-Identifier: Apache-2.0
// Attribution of regressions (judge/attribution.h): each hint rule and their precedence,
// what counts as moved and in which order, the roofline classes, no notes when there is nothing
// to say, the environment note of throttled suites and the noisy_environment outcome. The whole
// verdict with these keys is in verdict_attribution_test.cc.
#include "judge/attribution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace perfwarden::judge {
namespace {

// A row as the verdict would have written it. Five values a side by default, enough for a test
// to decide, so that an INCONCLUSIVE row counts only with fewer (telemetry: one per run).
struct Spec {
  std::string_view metric;
  std::string_view verdict = "EQUIVALENT";
  double change = 0;
  std::vector<double> current = {1, 1, 1, 1, 1};
  std::optional<std::vector<double>> base = std::vector<double>{1, 1, 1, 1, 1};  // none: NEW
  double p_adjusted = 0.5;
  std::string_view suite = "train";
  std::string_view benchmark = "train";
  std::string_view unit = "";
  Direction direction = Direction::kLowerIsBetter;
};

class Rows {
 public:
  Rows& Add(const Spec& s) {
    values_.push_back(s.current);
    const std::span<const double> current = values_.back();
    std::optional<std::span<const double>> base;
    if (s.base) {
      values_.push_back(*s.base);
      base = values_.back();
    }
    rows_.push_back({s.suite, s.benchmark, s.metric, s.unit, s.direction, s.verdict, s.change,
                     s.p_adjusted, 0.05, current, base});
    return *this;
  }
  // A step time 10% slower, significantly.
  Rows& SlowerStep() {
    return Add({.metric = "step_time",
                .verdict = "REGRESSION",
                .change = 0.10,
                .p_adjusted = 1e-4,
                .unit = "s"});
  }
  Attributions Run() const { return Attribute(rows_); }

 private:
  std::deque<std::vector<double>> values_;  // stable addresses
  std::vector<AttributionInput> rows_;
};

std::string HintOf(const Attributions& a, size_t row = 0) {
  return a.rows.at(row).attribution ? a.rows.at(row).attribution->hint : "(no attribution)";
}

std::vector<std::string> MovedOf(const Attributions& a, size_t row = 0) {
  std::vector<std::string> out;
  if (a.rows.at(row).attribution) {
    for (const MovedMetric& m : a.rows.at(row).attribution->moved) out.push_back(m.metric);
  }
  return out;
}

TEST(Attribute, NothingWithoutARegression) {
  Rows rows;
  rows.Add({.metric = "step_time", .verdict = "IMPROVEMENT", .change = -0.2})
      .Add(
          {.metric = "gpu_utilization", .verdict = "INCONCLUSIVE", .change = -0.3, .current = {50}})
      .Add({.metric = "gpu_throttled_fraction",
            .verdict = "NEW",
            .change = NAN,
            .current = {0.5},
            .base = std::nullopt});
  const Attributions a = rows.Run();
  ASSERT_EQ(a.rows.size(), 3u);
  for (const RowNotes& n : a.rows) {
    EXPECT_FALSE(n.attribution.has_value());
    EXPECT_EQ(n.environment, "");
  }
  EXPECT_FALSE(a.noisy_environment);
}

TEST(Attribute, NoKeyWhenNothingMovedAndNoRuleApplies) {
  Rows rows;
  rows.Add({.metric = "real_time",
            .verdict = "REGRESSION",
            .change = 0.1,
            .suite = "cpu",
            .benchmark = "BM_Sort",
            .unit = "ns"})
      .Add({.metric = "bytes_per_second",
            .verdict = "INCONCLUSIVE",
            .change = -0.08,
            .suite = "cpu",
            .benchmark = "BM_Sort",
            .direction = Direction::kHigherIsBetter});
  const Attributions a = rows.Run();
  // bytes_per_second has many values: INCONCLUSIVE is not "moved", whatever its change.
  EXPECT_FALSE(a.rows[0].attribution.has_value());
  EXPECT_FALSE(a.noisy_environment);
}

TEST(Attribute, ClockFellIsTheEnvironment) {
  Rows rows;
  rows.SlowerStep()
      .Add(
          {.metric = "gpu_sm_clock", .verdict = "INCONCLUSIVE", .change = -0.12, .current = {1500}})
      // Utilisation fell too, but the clock rule comes first.
      .Add({.metric = "gpu_utilization",
            .verdict = "INCONCLUSIVE",
            .change = -0.2,
            .current = {60}});
  const Attributions a = rows.Run();
  EXPECT_EQ(HintOf(a), kHintClock);
  EXPECT_EQ(MovedOf(a), (std::vector<std::string>{"gpu_utilization", "gpu_sm_clock"}));
  EXPECT_EQ(a.rows[0].environment, "");  // no throttling reported: a regression as usual
  EXPECT_FALSE(a.noisy_environment);
}

TEST(Attribute, UtilisationFellWhileStepTimeRose) {
  Rows rows;
  rows.SlowerStep()
      .Add(
          {.metric = "gpu_utilization", .verdict = "INCONCLUSIVE", .change = -0.2, .current = {64}})
      .Add(
          {.metric = "gpu_sm_clock", .verdict = "INCONCLUSIVE", .change = -0.01, .current = {1980}})
      .Add({.metric = "samples_per_s",
            .verdict = "REGRESSION",
            .change = -0.09,
            .p_adjusted = 0.01,
            .direction = Direction::kHigherIsBetter});
  const Attributions a = rows.Run();
  EXPECT_EQ(HintOf(a), kHintStarved);
  // The significant one first; the clock's 1% is within the threshold: not moved.
  EXPECT_EQ(MovedOf(a), (std::vector<std::string>{"samples_per_s", "gpu_utilization"}));
  const MovedMetric& utilization = a.rows[0].attribution->moved[1];
  EXPECT_EQ(utilization.verdict, "INCONCLUSIVE");
  EXPECT_DOUBLE_EQ(utilization.change, -0.2);
  EXPECT_FALSE(a.rows[1].attribution.has_value());  // only regressions are explained
}

// "Moved" without significance only where no test could have decided: one value a side, or so few
// that Mann-Whitney's smallest p is above 0.05.
TEST(Attribute, UnprovenChangesCountOnlyWhereNoTestCouldDecide) {
  auto moved = [](std::vector<double> current, std::vector<double> base) {
    Rows rows;
    rows.SlowerStep().Add({.metric = "gpu_utilization",
                           .verdict = "INCONCLUSIVE",
                           .change = -0.2,
                           .current = std::move(current),
                           .base = std::move(base)});
    return MovedOf(rows.Run());
  };
  const std::vector<std::string> utilization = {"gpu_utilization"};
  EXPECT_EQ(moved({64}, {80, 80, 80, 80, 80, 80, 80, 80, 80, 80}), utilization);
  EXPECT_EQ(moved({64, 64, 64}, {80, 80, 80}), utilization);             // smallest p 2/20 = 0.1
  EXPECT_TRUE(moved({64, 64, 64}, std::vector<double>(9, 80)).empty());  // 2/220 < 0.05
  EXPECT_TRUE(moved({64, 64, 64, 64, 64}, {80, 80, 80, 80, 80}).empty());
}

// perfwarden.yaml may ignore the telemetry so that it does not gate (docs/gpu.md); it still
// explains, with the change of its medians.
TEST(Attribute, IgnoredTelemetryStillExplains) {
  Rows rows;
  rows.SlowerStep().Add({.metric = "gpu_utilization",
                         .verdict = "IGNORED",
                         .change = NAN,
                         .current = {64},
                         .base = std::vector<double>{79.5, 80, 80.5}});
  const Attributions a = rows.Run();
  EXPECT_EQ(HintOf(a), kHintStarved);
  ASSERT_EQ(MovedOf(a), std::vector<std::string>{"gpu_utilization"});
  EXPECT_EQ(a.rows[0].attribution->moved[0].verdict, "IGNORED");
  EXPECT_DOUBLE_EQ(a.rows[0].attribution->moved[0].change, -0.2);
  // An ignored series of many values (a flaky benchmark's) says nothing: its test was not run.
  Rows flaky;
  flaky
      .Add({.metric = "real_time",
            .verdict = "REGRESSION",
            .change = 0.1,
            .suite = "cpu",
            .benchmark = "BM_Net",
            .unit = "ns"})
      .Add({.metric = "cpu_time",
            .verdict = "IGNORED",
            .change = NAN,
            .current = {2, 2, 2, 2, 2},
            .suite = "cpu",
            .benchmark = "BM_Net",
            .unit = "ns"});
  EXPECT_FALSE(flaky.Run().rows[0].attribution.has_value());
}

TEST(Attribute, AsBusyButLessWorkIsSlowerKernels) {
  Rows busy;
  busy.SlowerStep()
      .Add({.metric = "tflops",
            .verdict = "INCONCLUSIVE",
            .change = -0.095,
            .current = {310},
            .direction = Direction::kHigherIsBetter})
      .Add(
          {.metric = "gpu_utilization", .verdict = "EQUIVALENT", .change = -0.01, .current = {97}});
  EXPECT_EQ(HintOf(busy.Run()), kHintSlowerKernels);
  Rows mfu;
  mfu.SlowerStep()
      .Add({.metric = "mfu",
            .verdict = "REGRESSION",
            .change = -0.1,
            .direction = Direction::kHigherIsBetter})
      .Add({.metric = "gpu_utilization",
            .verdict = "INCONCLUSIVE",
            .change = 0.02,
            .current = {97}});
  EXPECT_EQ(HintOf(mfu.Run()), kHintSlowerKernels);
  // Without utilisation telemetry "as busy" cannot be said.
  Rows blind;
  blind.SlowerStep().Add({.metric = "tflops",
                          .verdict = "INCONCLUSIVE",
                          .change = -0.095,
                          .current = {310},
                          .direction = Direction::kHigherIsBetter});
  const Attributions a = blind.Run();
  EXPECT_EQ(HintOf(a), "");
  EXPECT_EQ(MovedOf(a), std::vector<std::string>{"tflops"});
}

TEST(Attribute, MemoryRoseToo) {
  Rows train;
  train.SlowerStep().Add({.metric = "peak_memory_bytes",
                          .verdict = "INCONCLUSIVE",
                          .change = 0.3,
                          .current = {4e10},
                          .unit = "bytes"});
  EXPECT_EQ(HintOf(train.Run()), kHintMemory);
  // A benchmark of a gbench suite sees the suite's GPU telemetry (benchmark = suite name).
  Rows gbench;
  gbench
      .Add({.metric = "real_time",
            .verdict = "REGRESSION",
            .change = 0.1,
            .suite = "kernels",
            .benchmark = "BM_Gemm",
            .unit = "us"})
      .Add({.metric = "gpu_memory_peak",
            .verdict = "INCONCLUSIVE",
            .change = 0.25,
            .current = {8e9},
            .suite = "kernels",
            .benchmark = "kernels",
            .unit = "bytes"})
      // Not telemetry: another benchmark's metric says nothing about this one.
      .Add({.metric = "samples_per_s",
            .verdict = "REGRESSION",
            .change = -0.3,
            .suite = "kernels",
            .benchmark = "kernels",
            .direction = Direction::kHigherIsBetter});
  const Attributions a = gbench.Run();
  EXPECT_EQ(HintOf(a), kHintMemory);
  EXPECT_EQ(MovedOf(a), std::vector<std::string>{"gpu_memory_peak"});
}

TEST(Attribute, CpuTimeTellsWorkFromWaiting) {
  auto run = [](std::string_view cpu_verdict, double cpu_change) {
    Rows rows;
    rows.Add({.metric = "real_time",
              .verdict = "REGRESSION",
              .change = 0.12,
              .p_adjusted = 1e-3,
              .suite = "cpu",
              .benchmark = "BM_Parse",
              .unit = "ns"})
        .Add({.metric = "cpu_time",
              .verdict = cpu_verdict,
              .change = cpu_change,
              .p_adjusted = 2e-3,
              .suite = "cpu",
              .benchmark = "BM_Parse",
              .unit = "ns"});
    return rows.Run();
  };
  const Attributions work = run("REGRESSION", 0.11);
  EXPECT_EQ(HintOf(work), kHintMoreWork);
  EXPECT_EQ(MovedOf(work), std::vector<std::string>{"cpu_time"});
  // The cpu_time row is a regression too, and gets the same hint.
  EXPECT_EQ(HintOf(work, 1), kHintMoreWork);
  const Attributions waited = run("EQUIVALENT", 0.004);
  EXPECT_EQ(HintOf(waited), kHintWaited);
  EXPECT_TRUE(MovedOf(waited).empty());
  // Not significant either way: nothing to say.
  EXPECT_FALSE(run("INCONCLUSIVE", 0.09).rows[0].attribution.has_value());
}

TEST(Attribute, MovedIsMostSignificantFirst) {
  Rows rows;
  rows.SlowerStep()
      .Add({.metric = "step_loss", .verdict = "IMPROVEMENT", .change = -0.3, .p_adjusted = 0.02})
      .Add({.metric = "samples_per_s",
            .verdict = "REGRESSION",
            .change = -0.09,
            .p_adjusted = 1e-4,
            .direction = Direction::kHigherIsBetter})
      .Add({.metric = "gpu_power",
            .verdict = "INCONCLUSIVE",
            .change = 0.4,
            .current = {300},
            .p_adjusted = 1})
      .Add({.metric = "gpu_energy",
            .verdict = "INCONCLUSIVE",
            .change = 0.6,
            .current = {9e4},
            .p_adjusted = 1})
      .Add({.metric = "step_tokens", .verdict = "EQUIVALENT", .change = 0.0});
  EXPECT_EQ(MovedOf(rows.Run()),
            (std::vector<std::string>{"samples_per_s", "step_loss", "gpu_energy", "gpu_power"}));
}

TEST(Attribute, RooflineClassFromTheStepsIntensityAndThePeaks) {
  auto run = [](double bytes_per_step, bool with_peaks) {
    Rows rows;
    rows.SlowerStep()
        .Add({.metric = "flops_per_step", .verdict = "EQUIVALENT", .current = {1e12}})
        .Add({.metric = "bytes_per_step",
              .verdict = "NEW",
              .change = NAN,
              .current = {bytes_per_step},
              .base = std::nullopt});
    if (with_peaks) {
      rows.Add({.metric = "peak_tflops", .verdict = "EQUIVALENT", .current = {989}})
          .Add({.metric = "peak_bandwidth_gbs", .verdict = "EQUIVALENT", .current = {3350}});
    }
    return rows.Run();
  };
  const Attributions memory = run(1e10, true);  // 100 FLOP/byte, ridge 295
  ASSERT_TRUE(memory.rows[0].attribution && memory.rows[0].attribution->roofline);
  const Roofline& m = *memory.rows[0].attribution->roofline;
  EXPECT_EQ(m.bound, kMemoryBound);
  EXPECT_DOUBLE_EQ(m.intensity, 100);
  EXPECT_NEAR(m.ridge, 989e12 / 3350e9, 1e-9);
  EXPECT_EQ(memory.rows[0].attribution->hint, "");  // the roofline alone is worth the key
  const Attributions compute = run(1e9, true);      // 1000 FLOP/byte
  EXPECT_EQ(compute.rows[0].attribution->roofline->bound, kComputeBound);
  // No peaks, no ridge: no roofline, and here nothing else to say.
  EXPECT_FALSE(run(1e10, false).rows[0].attribution.has_value());
}

TEST(Attribute, AThrottledSuiteMeasuresTheHost) {
  Rows rows;
  rows.SlowerStep()
      .Add({.metric = "gpu_throttled_fraction",
            .verdict = "INCONCLUSIVE",
            .change = NAN,
            .current = {0.2}})
      .Add({.metric = "samples_per_s",
            .verdict = "REGRESSION",
            .change = -0.09,
            .direction = Direction::kHigherIsBetter});
  const Attributions a = rows.Run();
  EXPECT_EQ(a.rows[0].environment,
            "the GPUs were throttled in 20% of the samples (power or thermal caps): this run "
            "measures the host, not the code");
  EXPECT_EQ(a.rows[2].environment, a.rows[0].environment);
  EXPECT_EQ(a.rows[1].environment, "");  // only regressions carry it
  EXPECT_EQ(HintOf(a), kHintClock);
  EXPECT_TRUE(a.noisy_environment);
}

TEST(Attribute, OneHealthyRegressionKeepsTheOutcomeARegression) {
  Rows rows;
  rows.SlowerStep()
      .Add({.metric = "gpu_throttled_fraction", .verdict = "EQUIVALENT", .current = {0.2}})
      .Add({.metric = "real_time",
            .verdict = "REGRESSION",
            .change = 0.1,
            .suite = "cpu",
            .benchmark = "BM_Sort",
            .unit = "ns"})
      .Add({.metric = "gpu_throttled_fraction",
            .verdict = "EQUIVALENT",
            .current = {0.0},
            .suite = "cpu",
            .benchmark = "cpu"});
  const Attributions a = rows.Run();
  EXPECT_NE(a.rows[0].environment, "");
  EXPECT_EQ(a.rows[2].environment, "");
  EXPECT_FALSE(a.noisy_environment);
}

TEST(Attribute, ThrottlingCountsAboveOnePercentAndAnyPooledRunCounts) {
  auto run = [](std::vector<double> fractions) {
    Rows rows;
    rows.SlowerStep().Add({.metric = "gpu_throttled_fraction",
                           .verdict = "IGNORED",
                           .change = NAN,
                           .current = std::move(fractions)});
    return rows.Run();
  };
  EXPECT_FALSE(run({0.01}).noisy_environment);
  EXPECT_TRUE(run({0.011}).noisy_environment);
  EXPECT_TRUE(run({0.0, 0.3}).noisy_environment);  // a throttled rerun spoils the pool
  EXPECT_NE(run({0.0, 0.3}).rows[0].environment.find("in 30% of the samples"), std::string::npos);
}

}  // namespace
}  // namespace perfwarden::judge
