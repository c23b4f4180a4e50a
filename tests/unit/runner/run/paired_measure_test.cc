// SPDX-License-Identifier: Apache-2.0
// runner/run: the baseline exported from git and built with its own perfwarden.yaml, and the two
// sides measured interleaved in blocks, on a scratch repository whose command suite records
// which side ran, in which order (real git, real builds and child processes).
#include "runner/run/paired_measure.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runner/run/baseline_tree.h"
#include "tests/testing/shell.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;

class PairedMeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfwarden-paired-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    log_ = dir_ / "sides.log";
    repo_ = dir_ / "repo";
    fs::create_directories(repo_);
    Git("init -q -b main");
    Git("config user.email t@example.com");
    Git("config user.name T");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Git(const std::string& args) {
    const auto out = testing::RunShell("git -C " + repo_.string() + " " + args);
    ASSERT_EQ(out.exit_code, 0) << args << ": " << out.output;
  }

  // A commit whose suite `tick` builds side.sh (printing `side` to the log) and times it.
  std::string Commit(const std::string& side, const std::string& build) {
    std::ofstream(repo_ / "perfwarden.yaml")
        << "version: 1\n"
        << "suites:\n"
        << "  - name: tick\n"
        << "    type: command\n"
        << (build.empty() ? "" : "    build: \"" + build + "\"\n")
        << "    command: \"sh side.sh\"\n"
        << "    repetitions: 2\n"
        << "    warmup: 0\n";
    std::ofstream(repo_ / "make-side.sh")
        << "printf 'echo " << side << " >> " << log_.string() << "\\n' > side.sh\n";
    Git("add -A");
    Git("commit -q -m " + side);
    const auto sha = testing::RunShell("git -C " + repo_.string() + " rev-parse HEAD");
    return sha.output.substr(0, 40);
  }

  config::RunnerConfig Load() {
    auto config = config::LoadRunnerConfig((repo_ / "perfwarden.yaml").string());
    if (!config) {
      ADD_FAILURE() << config.error().ToString();
      return {};
    }
    return *config;
  }

  std::vector<std::string> LogLines() {
    std::ifstream in(log_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  fs::path dir_, log_, repo_;
  ProgressLine quiet_ = [](const std::string&) {};
};

TEST_F(PairedMeasureTest, MeasuresBothSidesInEachBlockInTheOrderItRecords) {
  const std::string base = Commit("base", "sh make-side.sh");
  Commit("head", "sh make-side.sh");
  ASSERT_EQ(testing::RunShell("cd " + repo_.string() + " && sh make-side.sh").exit_code, 0);
  const config::RunnerConfig head = Load();

  auto tree = BaselineTree::Prepare(head, base, {"tick"}, quiet_);
  ASSERT_TRUE(tree.has_value()) << tree.error().ToString();
  EXPECT_EQ(tree->commit(), base);
  EXPECT_TRUE(fs::exists(tree->config().base_dir / "side.sh"));  // built in the baseline tree

  PairedOptions options;
  options.repetitions = 2;
  options.seed = 7;
  PairedMeasurer measurer(head, *tree, options);
  const int blocks = 8;
  for (int b = 0; b < blocks; ++b) {
    ASSERT_TRUE(measurer.MeasureBlock({{"tick", {}}}, quiet_).has_value());
  }
  EXPECT_EQ(measurer.blocks(), blocks);
  const std::vector<PairedSeries> series = measurer.Series();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].key, (SeriesKey{"tick", "tick", "wall_time"}));
  ASSERT_EQ(series[0].blocks.size(), static_cast<size_t>(blocks));

  // The log holds, per block, two lines of the side that ran first, then two of the other.
  const std::vector<std::string> lines = LogLines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(4 * blocks));
  int base_first = 0;
  for (int b = 0; b < blocks; ++b) {
    const PairedBlock& block = series[0].blocks[b];
    EXPECT_EQ(block.base.size(), 2u);
    EXPECT_EQ(block.head.size(), 2u);
    const std::string first = block.base_first ? "base" : "head";
    const std::string second = block.base_first ? "head" : "base";
    EXPECT_EQ(lines[4 * b], first) << "block " << b;
    EXPECT_EQ(lines[4 * b + 1], first) << "block " << b;
    EXPECT_EQ(lines[4 * b + 2], second) << "block " << b;
    EXPECT_EQ(lines[4 * b + 3], second) << "block " << b;
    base_first += block.base_first ? 1 : 0;
  }
  // The order is drawn per block: both orders occur over 8 blocks with this seed.
  EXPECT_GT(base_first, 0);
  EXPECT_LT(base_first, blocks);
}

TEST_F(PairedMeasureTest, ABaselineWhoseBinaryIsNotBuiltOrWhoseBuildFailsIsRefused) {
  std::ofstream(repo_ / "perfwarden.yaml") << "version: 1\n"
                                           << "suites:\n"
                                           << "  - name: tick\n"
                                           << "    type: gbench\n"
                                           << "    binary: build/bench\n";
  Git("add -A");
  Git("commit -q -m unbuilt");
  const std::string unbuilt =
      testing::RunShell("git -C " + repo_.string() + " rev-parse HEAD").output.substr(0, 40);
  const std::string broken = Commit("broken", "exit 3");
  Commit("head", "sh make-side.sh");
  const config::RunnerConfig head = Load();

  auto none = BaselineTree::Prepare(head, unbuilt, {"tick"}, quiet_);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(none.error().message.find("is not in the baseline tree and the suite has no build "
                                      "command"),
            std::string::npos)
      << none.error().message;

  auto failed = BaselineTree::Prepare(head, broken, {"tick"}, quiet_);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(failed.error().message.find("exit 3"), std::string::npos) << failed.error().message;

  auto missing = BaselineTree::Prepare(head, broken, {"nope"}, quiet_);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

// A binary outside the repository (the commits configure it differently, through env or args)
// runs for both sides, each with its commit's settings: the baseline is not refused for it.
TEST_F(PairedMeasureTest, ABinaryOutsideTheRepositoryServesBothSides) {
  std::ofstream(repo_ / "perfwarden.yaml") << "version: 1\n"
                                           << "suites:\n"
                                           << "  - name: tick\n"
                                           << "    type: gbench\n"
                                           << "    binary: /bin/true\n";
  Git("add -A");
  Git("commit -q -m outside");
  const std::string commit =
      testing::RunShell("git -C " + repo_.string() + " rev-parse HEAD").output.substr(0, 40);
  const config::RunnerConfig head = Load();
  std::vector<std::string> lines;
  auto tree = BaselineTree::Prepare(head, commit, {"tick"},
                                    [&](const std::string& line) { lines.push_back(line); });
  ASSERT_TRUE(tree.has_value()) << tree.error().ToString();
  bool said = false;
  for (const std::string& line : lines) {
    said = said ||
           line.find("/bin/true is outside the repository: both sides run it") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace perfwarden::run
