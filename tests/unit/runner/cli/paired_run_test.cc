// SPDX-License-Identifier: Apache-2.0
// `perfwarden run --paired`: the run's series are this build's side of the measurement, and the
// measurement kept for the run is judged by `perfwarden gate` only when it was made with the
// gate's settings and thresholds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runner/cli/paired_gate.h"

namespace perfwarden::cli {
namespace {

namespace fs = std::filesystem;

wire::PairedMeasurement Measurement() {
  wire::PairedMeasurement m;
  m.baseline_commit = std::string(40, 'a');
  m.testbed.name = "ci";
  m.testbed.fingerprint_json = "{}";
  m.design.repetitions = 1;
  m.design.min_blocks = 10;
  m.design.max_blocks = 50;
  m.design.test = "trimmed";
  m.design.stopped = "decided";
  wire::PairedSeries a{{"core", "BM_A", "real_time"}, "ns", Direction::kLowerIsBetter, {}};
  a.blocks = {{true, {10}, {11}}, {false, {12}, {13}}, {true, {9}, {}}};  // the last: base only
  wire::PairedSeries b{{"core", "BM_B", "real_time"}, "ns", Direction::kLowerIsBetter, {}};
  b.blocks = {{false, {5, 6}, {7, 8}}};
  wire::PairedSeries c{{"core", "BM_C", "real_time"}, "ns", Direction::kLowerIsBetter, {}};
  c.blocks = {{false, {5}, {}}};  // never ran on this build's side: not in the run
  m.series = {a, b, c};
  return m;
}

TEST(PairedRunTest, TheRunIsThisBuildsSideInMeasuringOrder) {
  const std::vector<wire::ResultSeries> head = HeadSeries(Measurement());
  ASSERT_EQ(head.size(), 2u);
  EXPECT_EQ(head[0].key.benchmark, "BM_A");
  EXPECT_EQ(head[0].unit, "ns");
  EXPECT_EQ(head[0].values, (std::vector<double>{11, 13}));
  EXPECT_EQ(head[1].values, (std::vector<double>{7, 8}));
}

class KeptRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfwarden-kept-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    config_.spool_dir = dir_ / ".perfwarden" / "spool";
    fs::create_directories(config_.spool_dir);
    settings_.block_repetitions = 1;
    settings_.min_blocks = 10;
    settings_.max_blocks = 50;
    settings_.test = "trimmed";
    parameters_.threshold = 0.05;
    parameters_.alpha = 0.05;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::optional<wire::PairedMeasurement> Kept(const std::string& run_id, std::string* why) {
    return KeptPairedRun(config_, run_id, settings_, parameters_, why);
  }

  fs::path dir_;
  config::RunnerConfig config_;
  config::GateSettings settings_;
  wire::VerdictRequest parameters_;
};

TEST_F(KeptRunTest, KeptForTheRunAndJudgedOnlyWithTheSameSettings) {
  std::string why = "stale";
  EXPECT_FALSE(Kept("run-1", &why));  // nothing kept
  EXPECT_EQ(why, "");
  wire::PairedMeasurement m = Measurement();
  m.parameters = parameters_;
  ASSERT_TRUE(KeepPairedRun(config_, "run-1", m));
  auto kept = Kept("run-1", &why);
  ASSERT_TRUE(kept) << why;
  EXPECT_EQ(*kept, m);
  // Another run's: measured again, nothing to say.
  EXPECT_FALSE(Kept("run-2", &why));
  EXPECT_EQ(why, "");
  // Other settings, other thresholds: measured again, and why.
  settings_.min_blocks = 6;
  EXPECT_FALSE(Kept("run-1", &why));
  EXPECT_NE(why.find("other gate settings"), std::string::npos) << why;
  settings_.min_blocks = 10;
  parameters_.threshold = 0.03;
  EXPECT_FALSE(Kept("run-1", &why));
  EXPECT_NE(why.find("other thresholds"), std::string::npos) << why;
  parameters_.threshold = 0.05;
  // A damaged file is not judged.
  std::ofstream(dir_ / ".perfwarden" / "paired-run.json")
      << R"({"run_id": "run-1", "measurement": {"series": 3}})";
  EXPECT_FALSE(Kept("run-1", &why));
  EXPECT_NE(why.find("unreadable"), std::string::npos) << why;
}

}  // namespace
}  // namespace perfwarden::cli
