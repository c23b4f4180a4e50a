// SPDX-License-Identifier: Apache-2.0
// `perfwarden analyze` as scripts use it: the built executable on fixture series (a planted 20%
// step as JSON, as CSV with repetitions, through stdin), Otava's own answer on the tigerbeetle
// series
// (`--detector e-divisive`), the default detector dropping outliers that raw e-divisive reports,
// the JSON output's fields, and input errors that name the file and the place (exit 2).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/adapters/series_input.h"

namespace perfwarden {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `shell` through /bin/sh; "$PG" in it is the perfwarden executable.
Outcome Shell(const std::string& shell) {
  const std::string command =
      "PG='" + std::string(PERFWARDEN_BIN_DIR) + "/perfwarden'; " + shell + " 2>&1";
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    outcome.out.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

Outcome Analyze(const std::string& args) { return Shell("\"$PG\" analyze " + args); }

std::string Fixture(const std::string& name) {
  return std::string(PERFWARDEN_FIXTURES_DIR) + "/" + name;
}

nlohmann::json ParseJson(const Outcome& o) {
  auto json = nlohmann::json::parse(o.out, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << o.out;
  return json;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "analyze_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string Write(const std::string& name, const std::string& content) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  std::string path_;
};

TEST(AnalyzeTest, JsonSeriesFindsThePlantedStep) {
  Outcome o = Analyze("--format json " + Fixture("series/step20.json"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json json = ParseJson(o);
  EXPECT_EQ(json["points"], 200);
  // The server's defaults (stats::HistoryOptions).
  EXPECT_EQ(json["parameters"]["detector"], "perfwarden");
  EXPECT_EQ(json["parameters"]["window"], 100);
  EXPECT_DOUBLE_EQ(json["parameters"]["max_pvalue"].get<double>(), 0.0001);
  EXPECT_DOUBLE_EQ(json["parameters"]["threshold"].get<double>(), 0.05);
  EXPECT_EQ(json["parameters"]["level_points"], 40);
  EXPECT_EQ(json["parameters"]["min_segment"], 3);
  EXPECT_EQ(json["parameters"]["rank_test"], true);
  EXPECT_DOUBLE_EQ(json["parameters"]["rank_pvalue"].get<double>(), 0.0005);
  EXPECT_EQ(json["parameters"]["serial_correction"], true);
  EXPECT_EQ(json["parameters"]["mean_shift"], true);
  EXPECT_DOUBLE_EQ(json["parameters"]["mean_shift_penalty"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(json["parameters"]["clip_sigmas"].get<double>(), 3.0);
  ASSERT_EQ(json["change_points"].size(), 1u) << o.out;
  const nlohmann::json& cp = json["change_points"][0];
  EXPECT_EQ(cp["index"], 100);
  EXPECT_NEAR(cp["magnitude"].get<double>(), 0.20, 0.02);  // signed relative change of level
  EXPECT_LT(cp["p_value"].get<double>(), 1e-10);
  EXPECT_NEAR(cp["mean_before"].get<double>(), 100, 1);
  EXPECT_NEAR(cp["mean_after"].get<double>(), 120, 1.2);
  // Levels are medians of the (up to 40) points either side; magnitude is their relative change.
  EXPECT_NEAR(cp["level_before"].get<double>(), 100, 1);
  EXPECT_NEAR(cp["level_after"].get<double>(), 120, 1.2);
  EXPECT_DOUBLE_EQ(cp["magnitude"].get<double>(),
                   cp["level_after"].get<double>() / cp["level_before"].get<double>() - 1);
  // Proposed by both candidate sources (e-divisive, the binary segmentation), confirmed by U.
  EXPECT_EQ(cp["detectors"], nlohmann::json::array({"e-divisive", "binseg", "mann-whitney"}));

  o = Analyze("--format json --no-rank-test " + Fixture("series/step20.json"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  json = ParseJson(o);
  EXPECT_EQ(json["parameters"]["rank_test"], false);
  ASSERT_EQ(json["change_points"].size(), 1u) << o.out;
  EXPECT_EQ(json["change_points"][0]["detectors"], nlohmann::json::array({"e-divisive", "binseg"}));
}

TEST(AnalyzeTest, TextAndMarkdownFormats) {
  Outcome o = Analyze(Fixture("series/step20.json"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("1 change point in 200 points (window 100, max p-value 0.0001, threshold "
                       "5%, min segment 3):\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("point 100: +20.0% (p 3.1e-143), level 99.85 -> 119.8\n"), std::string::npos)
      << o.out;

  o = Analyze("--format markdown " + Fixture("series/step20.json"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("| Point | Change | p-value |"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("| 100 | +20.0% | 3.1e-143 | 99.85 | 119.8 |"), std::string::npos) << o.out;
  // Raw e-divisive reports segment means, as Otava does.
  o = Analyze("--detector e-divisive --window 50 --max-pvalue 0.001 " +
              Fixture("series/step20.json"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("point 100: +20.4% (p 3.1e-143), level 99.72 -> 120.1\n"), std::string::npos)
      << o.out;
}

TEST(AnalyzeTest, CsvWithRepetitionsFindsTheSameStep) {
  Outcome o = Analyze("--format json " + Fixture("series/step20_reps.csv"));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json json = ParseJson(o);
  EXPECT_EQ(json["points"], 200);  // the header row is not a point
  ASSERT_EQ(json["change_points"].size(), 1u) << o.out;
  EXPECT_EQ(json["change_points"][0]["index"], 100);
  EXPECT_NEAR(json["change_points"][0]["magnitude"].get<double>(), 0.20, 0.02);
}

TEST(AnalyzeTest, StdinIsDetectedByContent) {
  Outcome json_in = Analyze("--format json - < " + Fixture("series/step20.json"));
  ASSERT_EQ(json_in.exit_code, 0) << json_in.out;
  EXPECT_EQ(ParseJson(json_in)["change_points"][0]["index"], 100);
  Outcome csv_in = Analyze("--format json - < " + Fixture("series/step20_reps.csv"));
  ASSERT_EQ(csv_in.exit_code, 0) << csv_in.out;
  EXPECT_EQ(ParseJson(csv_in)["points"], 200);
  EXPECT_EQ(ParseJson(csv_in)["change_points"][0]["index"], 100);
}

TEST(AnalyzeTest, DropIsNegativeAndOtavaMagnitudeIsNotUsed) {
  TempDir dir;
  // 100 -> 80 is -20% as a change of level; Otava's unsigned max-ratio would say 0.25.
  std::string series = "[";
  for (int i = 0; i < 60; ++i) series += std::string(i ? "," : "") + (i < 30 ? "100" : "80");
  const std::string file = dir.Write("drop.json", series + "]");
  Outcome o = Analyze("--format json " + file);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json json = ParseJson(o);
  ASSERT_EQ(json["change_points"].size(), 1u) << o.out;
  EXPECT_EQ(json["change_points"][0]["index"], 30);
  EXPECT_DOUBLE_EQ(json["change_points"][0]["magnitude"].get<double>(), -0.2);
}

TEST(AnalyzeTest, ConstantSeriesHasNoChangePoints) {
  TempDir dir;
  std::string csv = "value\n";
  for (int i = 0; i < 120; ++i) csv += "42.5\n";
  const std::string file = dir.Write("flat.csv", csv);
  Outcome o = Analyze(file);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("no change points in 120 points"), std::string::npos) << o.out;
  o = Analyze("--format json " + file);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_TRUE(ParseJson(o)["change_points"].empty()) << o.out;
}

TEST(AnalyzeTest, TigerbeetleMatchesOtava) {
  // Otava's tests/tigerbeetle_test.py: window 30, p 0.01, magnitude 5% -> [15, 71]. The oracle
  // file is index,value; only the value column is the series.
  const std::string values = "cut -d, -f2 " + Fixture("oracles/otava/tigerbeetle.csv");
  auto indices = [](const Outcome& o) {
    std::vector<int> out;
    const nlohmann::json json = ParseJson(o);
    for (const auto& cp : json["change_points"]) out.push_back(cp["index"].get<int>());
    return out;
  };
  Outcome o = Shell(values +
                    " | \"$PG\" analyze --format json --detector e-divisive --window 30 "
                    "--max-pvalue 0.01 --threshold 5% -");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_EQ(ParseJson(o)["points"], 365);
  EXPECT_EQ(ParseJson(o)["parameters"]["detector"], "e-divisive");
  EXPECT_EQ(indices(o), (std::vector<int>{15, 71})) << o.out;
  // perfwarden's default detector confirms the same two steps.
  o = Shell(values + " | \"$PG\" analyze --format json -");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_EQ(indices(o), (std::vector<int>{15, 71})) << o.out;
}

TEST(AnalyzeTest, OutliersAreNotSteps) {
  TempDir dir;
  // Small deterministic noise around 100, a preempted pair of runs and one fast run.
  std::string series = "[";
  for (int i = 0; i < 120; ++i) {
    double x = 100 + 0.2 * ((i * 37) % 11 - 5);
    if (i == 40) x *= 3;
    if (i == 41) x *= 2.6;
    if (i == 90) x *= 0.5;
    series += (i ? "," : "") + std::to_string(x);
  }
  const std::string file = dir.Write("outliers.json", series + "]");
  const std::string otava = "--format json --window 50 --max-pvalue 0.001 ";
  nlohmann::json raw = ParseJson(Analyze(otava + "--detector e-divisive " + file));
  EXPECT_GE(raw["change_points"].size(), 2u) << raw.dump();
  nlohmann::json confirmed = ParseJson(Analyze(otava + file));
  EXPECT_TRUE(confirmed["change_points"].empty()) << confirmed.dump();
  EXPECT_TRUE(ParseJson(Analyze("--format json " + file))["change_points"].empty());
}

struct BadInput {
  const char* name;
  const char* content;
  const char* expected;  // in the message, after the file name
};

TEST(AnalyzeTest, BadInputNamesThePlace) {
  const std::vector<BadInput> cases = {
      {"word.csv", "1\n2\n3x\n4\n", ":3: column 1: '3x' is not a number"},
      {"column.csv", "a;b\n1;2\n\n3;oops\n", ":4: column 2: 'oops' is not a number"},
      {"nan.csv", "1\t2\n3\tnan\n", ":2: column 2: 'nan' is not a measurement"},
      {"inf.csv", "1\n-inf\n", ":2: column 1: '-inf' is not a measurement"},
      {"empty_row.csv", "1,2\n,\n3,4\n", ":2: empty point"},
      {"one.csv", "rep\n5\n", ": 1 point; change-point analysis needs at least 2"},
      {"empty.csv", "", ": 0 points; change-point analysis needs at least 2"},
      {"string.json", "[1, \"2\"]",
       ": [1]: expected a number or an array of repetitions, got a string"},
      {"null.json", "[[1, 2], [3, null]]", ": [1][1]: expected a number, got null"},
      {"nested_nan.json", "[[1], [2], [3, NaN]]", ": [2][1]: NaN is not a measurement"},
      {"inf.json", "[1, Infinity]", ": [1]: an infinity is not a measurement"},
      {"empty_point.json", "[[1], []]", ": [1]: empty point"},
      {"object.json", "{\"a\": 1}", ": expected an array of numbers or of arrays of repetitions"},
      {"one.json", "[[1, 2, 3]]", ": 1 point; change-point analysis needs at least 2"},
      {"syntax.json", "[1,\n 2,", ":2:4: invalid JSON"},
  };
  TempDir dir;
  for (const BadInput& c : cases) {
    const std::string file = dir.Write(c.name, c.content);
    Outcome o = Analyze(file);
    EXPECT_EQ(o.exit_code, 2) << c.name << ": " << o.out;
    EXPECT_NE(o.out.find("perfwarden: error: " + file + c.expected), std::string::npos)
        << c.name << ": " << o.out;
  }
}

TEST(AnalyzeTest, BadUsageIsExitTwo) {
  const std::string series = Fixture("series/step20.json");
  Outcome o = Analyze(Fixture("series/missing.json"));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("missing.json: cannot read: no such file"), std::string::npos) << o.out;
  o = Analyze("--threshold 5 " + series);  // ambiguous: 5% or 500%?
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("ambiguous"), std::string::npos) << o.out;
  EXPECT_EQ(Analyze("--window 1 " + series).exit_code, 2);
  EXPECT_EQ(Analyze("--max-pvalue 1.5 " + series).exit_code, 2);
  EXPECT_EQ(Analyze("--format xml " + series).exit_code, 2);
  EXPECT_EQ(Analyze("--detector otava " + series).exit_code, 2);
  EXPECT_EQ(Analyze("--min-segment 0 " + series).exit_code, 2);
  EXPECT_EQ(Analyze("--level-points 0 " + series).exit_code, 2);
  EXPECT_EQ(Analyze("").exit_code, 2);  // no file
  o = Analyze("--help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("--max-pvalue"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--detector"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--min-segment"), std::string::npos) << o.out;
}

TEST(AnalyzeTest, ThresholdZeroKeepsSmallSignificantSteps) {
  TempDir dir;
  // A clean 2% step: significant, but below the default 5% threshold.
  std::string series = "[";
  for (int i = 0; i < 80; ++i) {
    series += std::string(i ? "," : "") + (i < 40 ? "100" : "102") + (i % 2 ? ".1" : ".0");
  }
  const std::string file = dir.Write("small.json", series + "]");
  EXPECT_TRUE(ParseJson(Analyze("--format json " + file))["change_points"].empty());
  nlohmann::json json = ParseJson(Analyze("--format json --threshold 0 " + file));
  ASSERT_EQ(json["change_points"].size(), 1u);
  EXPECT_EQ(json["change_points"][0]["index"], 40);
  EXPECT_DOUBLE_EQ(json["parameters"]["threshold"].get<double>(), 0.0);
}

// A drift of 0.15% per point over 60 points (9%, no step beyond 5%) between two flat stretches.
std::string DriftSeries() {
  std::string series = "[";
  for (int i = 0; i < 180; ++i) {
    const double level = i < 60 ? 100 : i < 120 ? 100 + 0.15 * (i - 60) : 109;
    const double x = level + 0.4 * std::sin(1.7 * i) + 0.25 * std::cos(0.37 * i * i);
    series += (i ? "," : "") + std::to_string(x);
  }
  return series + "]";
}

TEST(AnalyzeTest, ADriftIsReportedAsOneCreepApartFromTheChangePoints) {
  TempDir dir;
  const std::string file = dir.Write("drift.json", DriftSeries());
  Outcome o = Analyze("--format json " + file);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  nlohmann::json json = ParseJson(o);
  EXPECT_EQ(json["parameters"]["creep_window"], 60);
  ASSERT_EQ(json["creeps"].size(), 1u) << o.out;
  const nlohmann::json& creep = json["creeps"][0];
  const std::size_t start = creep["start"], end = creep["end"];
  EXPECT_LT(start, 90u);
  EXPECT_GT(end, 90u);
  EXPECT_NEAR(creep["total_change"].get<double>(), 0.09, 0.01);
  EXPECT_NEAR(creep["slope"].get<double>(), 0.0015, 0.0003);
  EXPECT_LT(creep["slope_low"].get<double>(), creep["slope"].get<double>());
  EXPECT_GT(creep["slope_low"].get<double>(), 0);
  EXPECT_LT(creep["p_value"].get<double>(), 1e-4);
  EXPECT_NEAR(creep["level_start"].get<double>(), 100, 0.5);
  EXPECT_NEAR(creep["level_end"].get<double>(), 109, 0.5);
  // "replaces": exactly the change points inside the creep's range.
  std::vector<std::size_t> inside;
  for (const auto& cp : json["change_points"]) {
    const std::size_t index = cp["index"];
    if (index > start && index <= end) inside.push_back(index);
  }
  EXPECT_EQ(creep["replaces"].get<std::vector<std::size_t>>(), inside);

  o = Analyze(file);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const std::string header =
      "1 creep (drift beyond 5% with no step beyond it; window 60, max p-value 0.0001):\npoints " +
      std::to_string(start) + "-" + std::to_string(end) + ": +";
  EXPECT_NE(o.out.find(header), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" per point (95% CI "), std::string::npos) << o.out;
  o = Analyze("--format markdown " + file);
  EXPECT_NE(o.out.find("| Points | Change | Per point | 95% CI per point | p-value |"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("| " + std::to_string(start) + "-" + std::to_string(end) + " | +"),
            std::string::npos)
      << o.out;

  // No creep search for raw e-divisive or without a threshold; a series without a drift has none.
  json = ParseJson(Analyze("--format json --detector e-divisive " + file));
  EXPECT_TRUE(json["creeps"].empty());
  EXPECT_FALSE(json["parameters"].contains("creep_window"));
  EXPECT_TRUE(ParseJson(Analyze("--format json --threshold 0 " + file))["creeps"].empty());
  EXPECT_TRUE(
      ParseJson(Analyze("--format json " + Fixture("series/step20.json")))["creeps"].empty());
  // A window wider than the drift's 9% over 60 points reaches past the threshold too.
  EXPECT_EQ(ParseJson(Analyze("--format json --creep-window 100 " + file))["creeps"].size(), 1u);
  EXPECT_EQ(Analyze("--creep-window 9 " + file).exit_code, 2);
}

// The parsing library directly: format detection and the median level of a point.
TEST(SeriesInputTest, FormatAndLevels) {
  using adapters::SeriesFormat;
  EXPECT_EQ(adapters::DetectSeriesFormat("a.JSON", "1,2"), SeriesFormat::kJson);
  EXPECT_EQ(adapters::DetectSeriesFormat("a.csv", "[1]"), SeriesFormat::kCsv);
  EXPECT_EQ(adapters::DetectSeriesFormat("", "  \n [1, 2]"), SeriesFormat::kJson);
  EXPECT_EQ(adapters::DetectSeriesFormat("a.txt", "1\n2\n"), SeriesFormat::kCsv);

  auto points = adapters::ParseSeries("\xEF\xBB\xBF\"t\";\"u\"\r\n1;2;100\r\n\"3\";+4\r\n5;;6;\n",
                                      "s.csv", SeriesFormat::kCsv);
  ASSERT_TRUE(points) << points.error().ToString();
  ASSERT_EQ(points->size(), 3u);
  EXPECT_EQ((*points)[1], (std::vector<double>{3, 4}));
  EXPECT_EQ(adapters::PointLevels(*points), (std::vector<double>{2, 3.5, 5.5}));

  auto mixed = adapters::ParseSeries("[1.5, [2, 9, 3]]", "s.json", SeriesFormat::kJson);
  ASSERT_TRUE(mixed) << mixed.error().ToString();
  EXPECT_EQ(adapters::PointLevels(*mixed), (std::vector<double>{1.5, 3}));
}

}  // namespace
}  // namespace perfwarden
