// SPDX-License-Identifier: Apache-2.0
// `perfwarden ab` without processes (runner/compare/ab.h): the randomised block schedule, and the
// analysis of two arms' runs (speedup with its CI, U test, verdicts, too few runs); and the
// command end to end on two scripts that print perfwarden's JSON lines (their step times are
// printed, not measured, so nothing here depends on this machine's speed), and the secrets its
// commands get (--pass-env).
#include "runner/compare/ab.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "stats/mann_whitney.h"
#include "tests/testing/shell.h"

namespace perfwarden::compare {
namespace {

TEST(AbSchedule, BlocksOfOneEachInRandomOrder) {
  const std::vector<Arm> s = AbSchedule(50, 7);
  ASSERT_EQ(s.size(), 100u);
  int a_first = 0;
  for (std::size_t i = 0; i < s.size(); i += 2) {
    EXPECT_NE(s[i], s[i + 1]) << i;  // each block holds one run of each
    a_first += s[i] == Arm::kA ? 1 : 0;
  }
  EXPECT_GT(a_first, 10);  // both orders occur (p of failing by chance < 1e-6)
  EXPECT_LT(a_first, 40);
  EXPECT_EQ(AbSchedule(50, 7), s);  // seeded
  EXPECT_NE(AbSchedule(50, 8), s);
}

TEST(AnalyzeAb, SpeedupWithCiUTestAndVerdicts) {
  AbMetric time{"step_time",
                "s",
                Direction::kLowerIsBetter,
                {0.020, 0.021, 0.0205, 0.0198, 0.0202, 0.0199},
                {0.010, 0.0102, 0.0099, 0.0101, 0.0103, 0.0098}};
  AbMetric memory{"peak_memory_bytes",
                  "bytes",
                  Direction::kLowerIsBetter,
                  {8e9, 8e9, 8e9, 8e9, 8e9, 8e9},
                  {5e9, 5e9, 5e9, 5e9, 5e9, 5e9}};
  AbMetric loss{"final_loss",
                "",
                Direction::kLowerIsBetter,
                {0.51, 0.52, 0.50, 0.53, 0.49, 0.51},
                {0.52, 0.50, 0.51, 0.49, 0.53, 0.50}};
  const AbReport r = AnalyzeAb({loss, memory, time}, "step_time", 0.05, 0.01);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].name, "step_time");  // the primary first, then by name
  EXPECT_EQ(r.rows[1].name, "final_loss");
  const AbRow& t = r.rows[0];
  EXPECT_NEAR(t.median_a, 0.0201, 1e-12);
  EXPECT_NEAR(t.median_b, 0.01005, 1e-12);
  EXPECT_NEAR(r.speedup, 0.0201 / 0.01005, 1e-12);
  EXPECT_LT(r.speedup_low, r.speedup);
  EXPECT_GT(r.speedup_high, r.speedup);
  EXPECT_DOUBLE_EQ(t.p_value, stats::MannWhitneyU(time.a, time.b).p_two_sided);
  EXPECT_EQ(t.verdict, "better");
  EXPECT_EQ(r.rows[2].verdict, "better");  // less memory
  EXPECT_NEAR(r.rows[2].change, 5.0 / 8 - 1, 1e-12);
  // -1.0% with runs spread over +/-4%: the interval crosses the 1% threshold.
  EXPECT_EQ(r.rows[1].verdict, "undecided");
  EXPECT_TRUE(r.warnings.empty());
  // Within a 10% threshold, the same runs are no difference.
  EXPECT_EQ(AnalyzeAb({loss}, "final_loss", 0.05, 0.10).rows[0].verdict, "no difference");
}

TEST(AnalyzeAb, AnExactlyRepeatedTinyChangeIsNoDifferenceNotWorse) {
  AbMetric loss{"initial_loss", "", Direction::kLowerIsBetter, {}, {}};
  for (int i = 0; i < 6; ++i) {
    loss.a.push_back(2.30258);
    loss.b.push_back(2.30260);  // +0.001% in every run: p 0.002, a change that does not matter
  }
  EXPECT_EQ(AnalyzeAb({loss}, "initial_loss", 0.05, 0.01).rows[0].verdict, "no difference");
  EXPECT_EQ(AnalyzeAb({loss}, "initial_loss", 0.05, 0.0).rows[0].verdict, "worse");
}

TEST(AnalyzeAb, HigherIsBetterAndTooFewRuns) {
  AbMetric rate{"samples_per_s", "samples/s", Direction::kHigherIsBetter, {100, 101}, {150, 149}};
  const AbReport r = AnalyzeAb({rate}, "samples_per_s", 0.05, 0.01);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.speedup, 149.5 / 100.5, 1e-12);
  EXPECT_EQ(r.rows[0].verdict, "too few runs");  // 2 against 2 cannot reach p < 0.05
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("--runs 5"), std::string::npos);
  const AbReport missing = AnalyzeAb({rate}, "step_time", 0.05, 0.01);
  ASSERT_EQ(missing.warnings.size(), 1u);
  EXPECT_NE(missing.warnings[0].find("step_time was not measured"), std::string::npos);
}

// The command: two "training runs" whose step times are printed around 20 ms and 10 ms.
TEST(AbCommand, ComparesTwoTrainingCommandsInterleaved) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("perfwarden-ab-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto script = [&](const std::string& name, const std::string& step, const std::string& memory) {
    std::ofstream(dir / name) << "echo run >> " << (dir / (name + ".runs")).string() << "\n"
                              << "for i in 1 2 3 4 5; do echo \"{\\\"event\\\":\\\"step\\\","
                              << "\\\"time_s\\\":" << step << "$i}\"; done\n"
                              << "echo '{\"event\":\"metric\",\"name\":\"peak_memory_bytes\","
                              << "\"value\":" << memory << ",\"unit\":\"bytes\"}'\n"
                              << "echo '{\"event\":\"end\"}'\n";
  };
  script("a.sh", "0.020", "8000000000");
  script("b.sh", "0.010", "5000000000");
  const testing::ShellOutcome out = testing::RunShell(
      "(cd " + dir.string() + " && " + PERFWARDEN_BIN_DIR +
      "/perfwarden ab --a 'sh a.sh' --b 'sh b.sh' --name-a fp32 --name-b bf16 --runs 6 --seed 3 "
      "--format json 2>/dev/null)");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const nlohmann::json r = nlohmann::json::parse(out.output);
  EXPECT_EQ(r["primary"], "step_time");
  EXPECT_EQ(r["seed"], 3);
  EXPECT_NEAR(r["speedup"].get<double>(), 0.0203 / 0.0103, 1e-9);  // medians of 5 steps
  EXPECT_EQ(r["metrics"][0]["metric"], "step_time");
  EXPECT_EQ(r["metrics"][0]["n_a"], 6);
  bool memory = false;
  for (const auto& m : r["metrics"]) {
    if (m["metric"] == "peak_memory_bytes") {
      memory = true;
      EXPECT_NEAR(m["change"].get<double>(), 5.0 / 8 - 1, 1e-12);
    }
  }
  EXPECT_TRUE(memory) << r.dump(2);
  // 6 runs and 1 warm-up of each.
  for (const char* name : {"a.sh.runs", "b.sh.runs"}) {
    std::ifstream runs(dir / name);
    int n = 0;
    for (std::string line; std::getline(runs, line);) ++n;
    EXPECT_EQ(n, 7) << name;
  }
  // Like with like: a JSON-lines command against a plain one is refused.
  const testing::ShellOutcome mixed =
      testing::RunShell("(cd " + dir.string() + " && " + PERFWARDEN_BIN_DIR +
                        "/perfwarden ab --a 'sh a.sh' --b 'true' --runs 2 2>&1)");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
  EXPECT_NE(mixed.output.find("compare like with like"), std::string::npos) << mixed.output;
  std::filesystem::remove_all(dir);
}

TEST(AbCommand, CommandsGetOnlyTheSecretsPassedToThem) {
  // A checks that it has HF_TOKEN and not GITHUB_TOKEN; B that it has HF_TOKEN.
  const std::string ab = std::string("HF_TOKEN=hf_x GITHUB_TOKEN=ghs_x ") + PERFWARDEN_BIN_DIR +
                         "/perfwarden ab --a 'test -n \"$HF_TOKEN\" && test -z \"$GITHUB_TOKEN\"' "
                         "--b 'test -n \"$HF_TOKEN\"' --runs 2 --warmup 1 --format json";
  const testing::ShellOutcome passed = testing::RunShell(ab + " --pass-env HF_TOKEN");
  EXPECT_EQ(passed.exit_code, 0) << passed.output;
  const testing::ShellOutcome dropped = testing::RunShell(ab);
  EXPECT_NE(dropped.exit_code, 0) << dropped.output;
  EXPECT_NE(dropped.output.find("exited with status 1"), std::string::npos) << dropped.output;
  const testing::ShellOutcome credential = testing::RunShell(ab + " --pass-env GITHUB_TOKEN");
  EXPECT_EQ(credential.exit_code, 2) << credential.output;
  EXPECT_NE(credential.output.find("--pass-env GITHUB_TOKEN: perfwarden's and the CI job's"),
            std::string::npos)
      << credential.output;
}

}  // namespace
}  // namespace perfwarden::compare
