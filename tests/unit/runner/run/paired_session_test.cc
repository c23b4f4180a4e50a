// SPDX-License-Identifier: Apache-2.0
// runner/run/paired_session.h on a real repository: the baseline commit built from its own tree,
// both commits' benchmark programs (BM_Work 10% slower at the head, BM_Other unchanged, 2% noise
// per repetition) measured in blocks until every metric is decided, and the measurement judged.
#include "runner/run/paired_session.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "judge/paired.h"
#include "tests/testing/bisect_repo.h"

namespace perfwarden::run {
namespace {

// A repository of the gbench suite "micro" whose head makes BM_Work 10% slower, built at the
// head, and the request that measures it against its first commit (blocks of 3, looks at 6, 9,
// 13).
void MakeSlowerHead(testing::SyntheticRepo& repo, std::optional<config::RunnerConfig>& head,
                    PairedRequest& request) {
  ASSERT_TRUE(repo.ok());
  std::ofstream(repo.path() / "perfwarden.yaml")
      << "version: 1\nsuites:\n  - {name: micro, type: gbench, binary: ./bench, build: \""
      << testing::kBuildBench << "\"}\n";
  ASSERT_TRUE(repo.MakeHistory(1, [](int k) { return k == 0 ? 1000 : 1100; }));
  ASSERT_EQ(
      testing::RunShell("cd " + repo.path().string() + " && " + testing::kBuildBench).exit_code, 0);
  auto loaded = config::LoadRunnerConfig((repo.path() / "perfwarden.yaml").string());
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  head = std::move(*loaded);
  request.baseline_commit = repo.Sha(0, 1);
  request.gated = {{"micro", {}}};
  request.testbed.name = "test-host";
  request.design.repetitions = 3;
  request.design.min_blocks = 6;
  request.design.max_blocks = 13;
}

// The measurement judged as the server would judge it: BM_Work (10% slower) a REGRESSION of about
// +10%, and no other series a REGRESSION (each EQUIVALENT when `others_equivalent`).
void ExpectBmWorkRegressed(const wire::PairedMeasurement& measured, bool others_equivalent) {
  auto policy = judge::PairedPolicyOf(measured);
  ASSERT_TRUE(policy.has_value());
  auto judged = judge::JudgePaired(measured, *policy, false);
  ASSERT_TRUE(judged.has_value()) << judged.error().ToString();
  for (const judge::PairedRow& row : judged->rows) {
    const stats::PairedMetricVerdict* v = judged->VerdictOf(row);
    ASSERT_NE(v, nullptr);
    if (row.series->key.benchmark == "BM_Work") {
      EXPECT_EQ(v->verdict, stats::Verdict::kRegression) << v->name << ": " << v->reason;
      EXPECT_NEAR(v->change, 0.10, 0.03) << v->name;
    } else if (others_equivalent) {
      EXPECT_EQ(v->verdict, stats::Verdict::kEquivalent) << v->name << ": " << v->reason;
    } else {
      EXPECT_NE(v->verdict, stats::Verdict::kRegression) << v->name << ": " << v->reason;
    }
  }
}

TEST(MeasurePaired, MeasuresUntilDecidedAndTheSlowerBenchmarkIsTheRegression) {
  testing::SyntheticRepo repo("paired-session");
  std::optional<config::RunnerConfig> head;
  PairedRequest request;
  ASSERT_NO_FATAL_FAILURE(MakeSlowerHead(repo, head, request));
  request.design.seed = 11;
  std::vector<std::string> progress;
  auto measured =
      MeasurePaired(*head, request, [&](const std::string& line) { progress.push_back(line); });
  ASSERT_TRUE(measured.has_value()) << measured.error().ToString();
  EXPECT_EQ(measured->design.stopped, "decided");
  EXPECT_EQ(measured->baseline_commit, request.baseline_commit);
  ASSERT_EQ(measured->series.size(), 4u);  // BM_Other and BM_Work, real_time and cpu_time
  const size_t blocks = measured->series[0].blocks.size();
  EXPECT_GE(blocks, 6u);
  for (const wire::PairedSeries& s : measured->series) {
    ASSERT_EQ(s.blocks.size(), blocks) << s.key.benchmark;
    for (size_t b = 0; b < blocks; ++b) {
      // The first look's blocks are measured for every benchmark; a benchmark decided there is
      // not measured again, and its later blocks stay empty.
      if (b >= 6 && s.blocks[b].base.empty() && s.blocks[b].head.empty()) continue;
      EXPECT_EQ(s.blocks[b].base.size(), 3u);
      EXPECT_EQ(s.blocks[b].head.size(), 3u);
    }
  }
  bool announced = false;
  for (const std::string& line : progress) {
    announced = announced || line.rfind("paired: block 1 of 6 (look 1 of 3", 0) == 0;
  }
  EXPECT_TRUE(announced);

  // What the measurement says, judged as the server would judge it.
  ExpectBmWorkRegressed(*measured, /*others_equivalent=*/true);
}

// A training suite runs in each side's tree with that commit's script: the baseline's steps take
// 10 ms, the pull request's 11.5 ms; the steps of a side's runs in a block are its values there.
TEST(MeasurePaired, ATrainingSuiteIsMeasuredSideBySide) {
  testing::SyntheticRepo repo("paired-train");
  ASSERT_TRUE(repo.ok());
  std::ofstream(repo.path() / "perfwarden.yaml")
      << "version: 1\nsuites:\n  - {name: trainer, type: train, command: \"sh train.sh\"}\n";
  auto script = [&](const std::string& step) {
    std::ofstream(repo.path() / "train.sh")
        << "echo '{\"event\":\"step\",\"step\":0,\"warmup\":true,\"time_s\":0.5}'\n"
        << "for i in 1 2 3 4 5 6 7 8; do\n"
        << "  echo \"{\\\"event\\\":\\\"step\\\",\\\"step\\\":$i,\\\"time_s\\\":" << step
        << "$i}\"\ndone\necho '{\"event\":\"end\"}'\n";
  };
  script("0.0100");
  ASSERT_EQ(repo.Git("add -A").exit_code, 0);
  ASSERT_EQ(repo.Git("commit -q -m base").exit_code, 0);
  const std::string base = testing::SyntheticRepo::Trim(repo.Git("rev-parse HEAD").output);
  script("0.0115");
  ASSERT_EQ(repo.Git("commit -q -am slower").exit_code, 0);
  auto head = config::LoadRunnerConfig((repo.path() / "perfwarden.yaml").string());
  ASSERT_TRUE(head.has_value()) << head.error().ToString();

  PairedRequest request;
  request.baseline_commit = base;
  request.gated = {{"trainer", {}}};
  request.testbed.name = "test-host";
  request.design.repetitions = 2;
  request.design.min_blocks = 3;
  request.design.max_blocks = 6;
  request.design.seed = 5;
  auto measured = MeasurePaired(*head, request, [](const std::string&) {});
  ASSERT_TRUE(measured.has_value()) << measured.error().ToString();
  const wire::PairedSeries* steps = nullptr;
  for (const wire::PairedSeries& s : measured->series) {
    if (s.key.metric == "step_time") steps = &s;
  }
  ASSERT_NE(steps, nullptr);
  ASSERT_GE(steps->blocks.size(), 3u);
  EXPECT_EQ(steps->blocks[0].base.size(), 16u);  // 2 runs of 8 timed steps
  EXPECT_EQ(steps->blocks[0].head.size(), 16u);

  auto policy = judge::PairedPolicyOf(*measured);
  ASSERT_TRUE(policy.has_value());
  auto judged = judge::JudgePaired(*measured, *policy, false);
  ASSERT_TRUE(judged.has_value()) << judged.error().ToString();
  for (const judge::PairedRow& row : judged->rows) {
    if (row.series != steps) continue;
    const stats::PairedMetricVerdict* v = judged->VerdictOf(row);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->verdict, stats::Verdict::kRegression) << v->reason;
    EXPECT_NEAR(v->change, 0.15, 0.01);
  }
}

// Interleaved by repetition, each block holds `repetitions` values of each side (one process
// each), and the measurement decides as before.
TEST(MeasurePaired, InterleavedByRepetitionEachBlockHoldsItsRepetitions) {
  testing::SyntheticRepo repo("paired-rounds");
  std::optional<config::RunnerConfig> head;
  PairedRequest request;
  ASSERT_NO_FATAL_FAILURE(MakeSlowerHead(repo, head, request));
  request.design.seed = 5;
  request.interleave = PairedOptions::Interleave::kRepetition;
  auto measured = MeasurePaired(*head, request, [](const std::string&) {});
  ASSERT_TRUE(measured.has_value()) << measured.error().ToString();
  ASSERT_FALSE(measured->series.empty());
  for (const wire::PairedSeries& s : measured->series) {
    for (const wire::PairedBlock& b : s.blocks) {
      if (b.base.empty() && b.head.empty()) continue;  // decided: not measured again
      EXPECT_EQ(b.base.size(), 3u) << s.key.benchmark;
      EXPECT_EQ(b.head.size(), 3u) << s.key.benchmark;
    }
  }
  ExpectBmWorkRegressed(*measured, /*others_equivalent=*/false);
}

// After a look, only the benchmarks with a gated metric still open run again: a Google Benchmark
// one by name, a command suite whole; decided, ignored, NEW and reported series (BM_Clear's
// noisy cpu_time) keep nothing open.
TEST(StillUndecided, NamesTheBenchmarksWithAnOpenGatedMetric) {
  auto head = config::ParseRunnerConfig(
      "version: 1\nsuites:\n  - {name: micro, type: gbench, binary: ./bench}\n"
      "  - {name: cmd, type: command, command: \"true\"}\n",
      "perfwarden.yaml");
  ASSERT_TRUE(head.has_value()) << head.error().ToString();
  auto series = [](std::string suite, std::string benchmark, std::string metric,
                   const std::vector<double>& ratios) {
    wire::PairedSeries s;
    s.key = {std::move(suite), std::move(benchmark), std::move(metric)};
    s.unit = "ns";
    for (double r : ratios) s.blocks.push_back({true, {100, 101}, {100 * r, 101 * r}});
    return s;
  };
  const std::vector<double> clear(6, 1.2);
  const std::vector<double> noisy = {1.3, 0.7, 1.25, 0.8, 1.35, 0.75};
  wire::PairedMeasurement m;
  m.baseline_commit = std::string(40, 'a');
  m.design.min_blocks = 6;
  m.design.max_blocks = 13;
  m.series = {series("micro", "BM_Clear", "real_time", clear),
              series("micro", "BM_Clear", "cpu_time", noisy),
              series("micro", "BM_Noisy", "real_time", noisy),
              series("micro", "BM_Skipped", "real_time", noisy),
              series("cmd", "cmd", "wall_time", noisy)};
  m.parameters.rules = {ThresholdRule{}};
  m.parameters.rules[0].benchmark = "BM_Skipped";
  m.parameters.rules[0].ignore = true;
  auto policy = judge::PairedPolicyOf(m);
  ASSERT_TRUE(policy.has_value());
  auto judged = judge::JudgePaired(m, *policy, false);
  ASSERT_TRUE(judged.has_value()) << judged.error().ToString();
  EXPECT_EQ(judged->VerdictOf(judged->rows[0])->verdict, stats::Verdict::kRegression);
  EXPECT_FALSE(judged->rows[1].gated);
  EXPECT_EQ(judged->VerdictOf(judged->rows[1])->decided_at_look, -1);  // open, but reported
  const BenchmarkSelection next = StillUndecided(*head, *judged);
  EXPECT_EQ(next, (BenchmarkSelection{{"micro", {"BM_Noisy"}}, {"cmd", {}}}));
}

TEST(MeasurePaired, ABaselineThatDoesNotBuildIsAnErrorBeforeAnythingIsMeasured) {
  testing::SyntheticRepo repo("paired-broken");
  ASSERT_TRUE(repo.ok());
  std::ofstream(repo.path() / "perfwarden.yaml")
      << "version: 1\nsuites:\n  - {name: micro, type: gbench, binary: ./bench, build: \""
      << testing::kBuildBench << "\"}\n";
  ASSERT_TRUE(repo.MakeHistory(1, [](int) { return 1000; }, {0}));
  auto head = config::LoadRunnerConfig((repo.path() / "perfwarden.yaml").string());
  ASSERT_TRUE(head.has_value());
  PairedRequest request;
  request.baseline_commit = repo.Sha(0, 1);
  request.gated = {{"micro", {}}};
  request.testbed.name = "test-host";
  auto measured = MeasurePaired(*head, request, [](const std::string&) {});
  ASSERT_FALSE(measured.has_value());
  EXPECT_EQ(measured.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(measured.error().message.find("the baseline"), std::string::npos)
      << measured.error().message;
}

}  // namespace
}  // namespace perfwarden::run
