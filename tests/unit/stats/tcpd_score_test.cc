// SPDX-License-Identifier: Apache-2.0
// TCPDBench's F1 (tests/testing/tcpd.h) against TCPDBench itself: every true_positives and
// f_measure doctest of analysis/scripts/metrics.py, the three scored Nile predictions of its
// published summary (F1, precision and recall), and the published F1 of the "zero" method (no
// change point) on all 42 TCPD series, to 1e-12 (tests/fixtures/oracles/tcpd, copies of
// ../shared/oracles/tcpd; README.md there says where each file comes from); and perfwarden's
// detections on the 30 scored series, pinned.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "stats/history_detector.h"
#include "tests/testing/oracle_csv.h"
#include "tests/testing/tcpd.h"

namespace perfwarden::quality {
namespace {

using nlohmann::json;
using testing::FixturePath;
using testing::ReadFile;

json Oracle(const std::string& name) {
  return json::parse(ReadFile(FixturePath("oracles/tcpd/" + name)));
}

std::map<std::string, std::vector<std::size_t>> Annotations(const json& j) {
  std::map<std::string, std::vector<std::size_t>> out;
  for (const auto& [annotator, points] : j.items()) {
    out[annotator] = points.get<std::vector<std::size_t>>();
  }
  return out;
}

TEST(TcpdScore, TruePositivesAsMetricsPyDoctests) {
  const json cases = Oracle("metric_reference_cases.json").at("true_positives");
  ASSERT_EQ(cases.size(), 5u);
  for (const json& c : cases) {
    const auto t = c.at("T").get<std::vector<std::size_t>>();
    const auto x = c.at("X").get<std::vector<std::size_t>>();
    EXPECT_EQ(TcpdTruePositives(t, x, c.at("margin").get<std::size_t>()),
              c.at("expected").get<std::vector<std::size_t>>())
        << c.dump();
  }
}

TEST(TcpdScore, FMeasureAsMetricsPyDoctests) {
  const json cases = Oracle("metric_reference_cases.json").at("f_measure");
  ASSERT_EQ(cases.size(), 3u);
  for (const json& c : cases) {
    const auto x = c.at("predictions").get<std::vector<std::size_t>>();
    EXPECT_NEAR(TcpdFMeasure(Annotations(c.at("annotations")), x).f1,
                c.at("expected_f1").get<double>(), 1e-12)
        << c.dump();
  }
}

TEST(TcpdScore, NileSummaryPrecisionRecallAndF1) {
  const json nile = Oracle("metric_reference_cases.json").at("nile_summary_examples");
  const auto annotations = Annotations(nile.at("annotations"));
  ASSERT_EQ(nile.at("cases").size(), 3u);
  for (const json& c : nile.at("cases")) {
    const auto x = c.at("predictions").get<std::vector<std::size_t>>();
    const TcpdF1 score = TcpdFMeasure(annotations, x);
    EXPECT_NEAR(score.f1, c.at("f1").get<double>(), 1e-12) << c.dump();
    EXPECT_NEAR(score.precision, c.at("precision").get<double>(), 1e-12) << c.dump();
    EXPECT_NEAR(score.recall, c.at("recall").get<double>(), 1e-12) << c.dump();
  }
}

// The zero method's published F1 for every series with annotations (42, the 10 whose data needs
// a download included: F1 needs only the annotations).
TEST(TcpdScore, ZeroMethodMatchesPublishedScores) {
  const json annotations = Oracle("annotations.json");
  std::istringstream csv(ReadFile(FixturePath("oracles/tcpd/zero_baseline_scores.csv")));
  std::string line;
  std::getline(csv, line);
  ASSERT_EQ(line, "dataset,zero_f1,zero_cover");
  int rows = 0;
  while (std::getline(csv, line)) {
    const std::size_t comma = line.find(',');
    const std::string name = line.substr(0, comma);
    const double published = std::stod(line.substr(comma + 1));
    ASSERT_TRUE(annotations.contains(name)) << name;
    EXPECT_NEAR(TcpdFMeasure(Annotations(annotations.at(name)), {}).f1, published, 1e-12) << name;
    ++rows;
  }
  EXPECT_EQ(rows, 42);
}

// A prediction on an annotation raises F1 and a spurious one lowers it (the scorer is not blind).
TEST(TcpdScore, PredictionsMoveTheScore) {
  const std::map<std::string, std::vector<std::size_t>> annotations = {{"1", {50}}, {"2", {52}}};
  const double none = TcpdFMeasure(annotations, {}).f1;
  const std::vector<std::size_t> hit = {51}, miss = {20}, both = {20, 51};
  EXPECT_GT(TcpdFMeasure(annotations, hit).f1, none);
  EXPECT_LT(TcpdFMeasure(annotations, miss).f1, none);
  EXPECT_DOUBLE_EQ(TcpdFMeasure(annotations, hit).f1, 1.0);
  EXPECT_LT(TcpdFMeasure(annotations, both).f1, 1.0);
}

TEST(TcpdScore, LoadsTheThirtyUnivariateSeriesWithoutMissingValues) {
  auto corpus = LoadTcpd(FixturePath("oracles/tcpd"));
  ASSERT_TRUE(corpus) << corpus.error().ToString();
  EXPECT_EQ(corpus->series.size(), 30u);
  EXPECT_EQ(corpus->excluded, std::vector<std::string>{"uk_coal_employ (missing values)"});
  for (const TcpdSeries& s : corpus->series) {
    EXPECT_EQ(s.annotations.size(), 5u) << s.name;
    EXPECT_GE(s.values.size(), 15u) << s.name;
  }
  EXPECT_EQ(corpus->series.front().name, "bank");
  EXPECT_EQ(corpus->series.front().values.size(), 581u);
}

TEST(TcpdScore, MissingDirectoryNamesIt) {
  auto corpus = LoadTcpd("/nonexistent/tcpd");
  ASSERT_FALSE(corpus);
  EXPECT_NE(corpus.error().ToString().find("/nonexistent/tcpd"), std::string::npos);
}

// perfwarden's history detector at its defaults on the 30 series (bench/tcpd_quality;
// docs/statistics.md, "TCPD"): its detections pinned series by series (everything is
// deterministic), its mean F1 above the zero method's, and no series more than 0.1 below zero's
// but shanghai_license. A change to the detector that moves them updates the pins and the table.
TEST(TcpdScore, PerfwardenDefaultsPinned) {
  auto corpus = LoadTcpd(FixturePath("oracles/tcpd"));
  ASSERT_TRUE(corpus) << corpus.error().ToString();
  const std::map<std::string, std::vector<std::size_t>> pinned = {
      {"co2_canada", {80}},
      {"jfk_passengers", {327}},
      {"lga_passengers", {111, 167, 254}},
      {"nile", {28}},
      {"quality_control_1", {144}},
      {"quality_control_2", {97}},
      {"quality_control_3", {179}},
      {"rail_lines", {26}},
      {"shanghai_license", {58}},
      {"well_log", {255, 281, 311, 343}},
  };
  double sum = 0, zero_sum = 0;
  std::vector<std::string> below_zero;
  for (const TcpdSeries& s : corpus->series) {
    auto steps = stats::DetectSteps(s.values, {});
    ASSERT_TRUE(steps) << s.name << ": " << steps.error().ToString();
    std::vector<std::size_t> found;
    for (const stats::Step& step : *steps) found.push_back(step.index);
    const auto it = pinned.find(s.name);
    EXPECT_EQ(found, it == pinned.end() ? std::vector<std::size_t>{} : it->second) << s.name;
    const double f1 = TcpdFMeasure(s.annotations, found).f1;
    const double zero = TcpdFMeasure(s.annotations, {}).f1;
    sum += f1;
    zero_sum += zero;
    if (f1 < zero - 0.1) below_zero.push_back(s.name);
  }
  EXPECT_NEAR(sum / 30, 0.7302, 5e-5);
  EXPECT_NEAR(zero_sum / 30, 0.6679, 5e-5);
  EXPECT_EQ(below_zero, std::vector<std::string>{"shanghai_license"});
}

// The copies must stay byte-identical to ../shared/oracles/tcpd when it is present.
TEST(TcpdScore, CopiesIdenticalToSharedOracles) {
  const std::filesystem::path shared =
      std::filesystem::path(PERFWARDEN_SHARED_ORACLES_DIR) / "tcpd";
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "no " << shared;
  const std::filesystem::path copies = FixturePath("oracles/tcpd");
  int compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(copies)) {
    // The README is the copies' own (what was copied and why).
    if (!entry.is_regular_file() || entry.path() == copies / "README.md") continue;
    const auto relative = std::filesystem::relative(entry.path(), copies);
    EXPECT_EQ(ReadFile(entry.path().string()), ReadFile((shared / relative).string())) << relative;
    ++compared;
  }
  EXPECT_GT(compared, 60);
}

}  // namespace
}  // namespace perfwarden::quality
