// runner/run: the compiler found in a binary, exact-name filters, and RunSuite on a timed
// command suite (a real child process; the values are its wall times).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "runner/run/process.h"
#include "runner/run/suites.h"

namespace perfgate::run {
namespace {

namespace fs = std::filesystem;

TEST(BinaryCompiler, NamesTheCompilerOfAnElfBinaryAndNothingElse) {
  // This test binary was built by the project's compiler (g++ here, clang elsewhere).
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string compiler = BinaryCompiler(self);
  EXPECT_TRUE(compiler.rfind("gcc (", 0) == 0 || compiler.rfind("clang version", 0) == 0)
      << compiler;
  char pattern[] = "/tmp/perfgate-binary-XXXXXX";
  const int fd = mkstemp(pattern);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(pattern) << "no compiler marker in here";
  EXPECT_EQ(BinaryCompiler(pattern), "");
  EXPECT_EQ(BinaryCompiler("/nonexistent/binary"), "");
  fs::remove(pattern);
}

TEST(ExactNameFilter, MatchesOnlyTheNamedBenchmarks) {
  const std::regex filter(ExactNameFilter({"BM_Sort/1024", "BM_a(b)+c"}));
  EXPECT_TRUE(std::regex_search("BM_Sort/1024", filter));
  EXPECT_TRUE(std::regex_search("BM_a(b)+c", filter));
  EXPECT_FALSE(std::regex_search("BM_Sort/10240", filter));
  EXPECT_FALSE(std::regex_search("BM_Sort/102", filter));
  EXPECT_FALSE(std::regex_search("BM_abbc", filter));
}

TEST(RunSuite, TimesACommandOverItsRepetitionsAfterTheWarmUp) {
  char pattern[] = "/tmp/perfgate-suite-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  config::RunnerConfig config;
  config.base_dir = dir;
  config::Suite suite;
  suite.name = "tick";
  suite.type = config::SuiteType::kCommand;
  // Appends a line per run, so the number of runs can be counted.
  suite.command = {"/bin/sh", "-c", "echo run >> runs.txt; sleep 0.01"};
  suite.repetitions = 5;
  suite.warmup = 2;
  SuiteOptions options;
  options.work_dir = dir;
  std::vector<std::string> progress;
  auto outcome =
      RunSuite(config, suite, options, [&](const std::string& line) { progress.push_back(line); });
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  ASSERT_EQ(outcome->series.size(), 1u);
  const wire::ResultSeries& s = outcome->series[0];
  EXPECT_EQ(s.key.metric, "wall_time");
  EXPECT_EQ(s.unit, "s");
  ASSERT_EQ(s.values.size(), 5u);
  for (double v : s.values) EXPECT_GE(v, 0.01);
  std::ifstream runs(dir / "runs.txt");
  int lines = 0;
  for (std::string line; std::getline(runs, line);) ++lines;
  EXPECT_EQ(lines, 7);  // 2 warm-up + 5 timed
  EXPECT_FALSE(progress.empty());

  // A failing command is an error that names the suite and shows its output.
  suite.command = {"/bin/sh", "-c", "echo broken-thing >&2; exit 3"};
  auto failed = RunSuite(config, suite, options, [](const std::string&) {});
  ASSERT_FALSE(failed.has_value());
  EXPECT_NE(failed.error().message.find("suite tick"), std::string::npos);
  EXPECT_NE(failed.error().message.find("status 3"), std::string::npos);
  EXPECT_NE(failed.error().message.find("broken-thing"), std::string::npos);
  fs::remove_all(dir);
}

// A training benchmark's JSON lines: steady-state steps pooled over runs as step_time and
// step_<value>, one sample per run of each summary metric, units and directions as printed
// (threshold rules may override a direction).
TEST(RunSuite, ReadsATrainingBenchmarksJsonLinesOverItsRuns) {
  char pattern[] = "/tmp/perfgate-train-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const fs::path dir = pattern;
  std::ofstream(dir / "train.sh") << R"(echo "starting"
echo '{"event":"step","step":0,"warmup":true,"time_s":0.5,"values":{"loss":3.0}}'
for i in 1 2 3; do
  echo "{\"event\":\"step\",\"step\":$i,\"time_s\":0.0$i,\"values\":{\"loss\":2.$i}}"
done
echo '{"event":"metric","name":"samples_per_s","value":1000,"unit":"samples/s"}'
echo '{"event":"metric","name":"mfu","value":0.4,"unit":"ratio","direction":"higher"}'
echo '{"event":"end"}'
)";
  config::RunnerConfig config;
  config.base_dir = dir;
  ThresholdRule rule;
  rule.metric = "step_loss";
  rule.direction = Direction::kHigherIsBetter;  // a rule overrides what the name implies
  config.thresholds.push_back(rule);
  config::Suite suite;
  suite.name = "mlp";
  suite.type = config::SuiteType::kTrain;
  suite.command = {"/bin/sh", "train.sh"};
  suite.repetitions = 2;
  SuiteOptions options;
  options.work_dir = dir;
  auto outcome = RunSuite(config, suite, options, [](const std::string&) {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  std::map<std::string, wire::ResultSeries> by_metric;
  for (const wire::ResultSeries& s : outcome->series) {
    EXPECT_EQ(s.key.suite, "mlp");
    EXPECT_EQ(s.key.benchmark, "mlp");
    by_metric[s.key.metric] = s;
  }
  ASSERT_EQ(by_metric.size(), 4u);
  EXPECT_EQ(by_metric["step_time"].values,
            (std::vector<double>{0.01, 0.02, 0.03, 0.01, 0.02, 0.03}));
  EXPECT_EQ(by_metric["step_time"].unit, "s");
  EXPECT_EQ(by_metric["step_time"].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(by_metric["step_loss"].values.size(), 6u);
  EXPECT_EQ(by_metric["step_loss"].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(by_metric["samples_per_s"].values, (std::vector<double>{1000, 1000}));
  EXPECT_EQ(by_metric["samples_per_s"].unit, "samples/s");
  EXPECT_EQ(by_metric["samples_per_s"].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(by_metric["mfu"].values.size(), 2u);

  // Output that breaks the protocol fails the suite with the line and the field.
  std::ofstream(dir / "train.sh") << "echo '{\"event\":\"step\",\"tim_s\":1}'\n";
  auto bad = RunSuite(config, suite, options, [](const std::string&) {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("suite mlp: mlp-1.log:1: tim_s"), std::string::npos)
      << bad.error().message;
  fs::remove_all(dir);
}

TEST(RunProcess, KillsAChildPastItsTimeout) {
  ProcessOptions options;
  options.argv = {"sleep", "30"};
  options.timeout = std::chrono::milliseconds(200);
  auto result = RunProcess(options);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->timed_out);
  EXPECT_NE(result->exit_code, 0);
  options.argv = {"/nonexistent/program"};
  auto missing = RunProcess(options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace perfgate::run
