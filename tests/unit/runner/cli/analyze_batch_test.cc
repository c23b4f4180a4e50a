// SPDX-License-Identifier: Apache-2.0
// `perfwarden analyze` on many series in one process, as the executable runs: a directory, several
// files and a JSON-lines file give, per series, byte for byte what one process per series prints
// (text, Markdown, JSON) on series of the labelled corpus; bad inputs are each reported by file
// and line, the good ones still analysed, exit 2; a progress line only on a terminal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/shell.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout only
  std::string err;  // stderr only
};

class AnalyzeBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "analyze_batch.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string Write(const std::string& name, const std::string& content) const {
    const fs::path file = dir_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << content;
    return file.string();
  }

  // `perfwarden analyze ARGS`, stdout and stderr apart.
  Outcome Analyze(const std::string& args) const {
    const std::string err_file = (dir_ / "stderr.txt").string();
    const testing::ShellOutcome shell =
        testing::RunShell("{ '" + std::string(PERFWARDEN_BIN_DIR) + "/perfwarden' analyze " + args +
                          " 2>'" + err_file + "'; }");
    std::ifstream in(err_file);
    std::stringstream err;
    err << in.rdbuf();
    return {shell.exit_code, shell.output, err.str()};
  }

  fs::path dir_;
};

// The first `count` series of a corpus category: {name, values as JSON}.
std::vector<std::pair<std::string, nlohmann::json>> CorpusSeries(const std::string& category,
                                                                 std::size_t count) {
  std::ifstream in(std::string(PERFWARDEN_FIXTURES_DIR) + "/history/" + category + ".json");
  const nlohmann::json corpus = nlohmann::json::parse(in);
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (std::size_t i = 0; i < count && i < corpus["series"].size(); ++i) {
    out.emplace_back(corpus["series"][i]["name"], corpus["series"][i]["values"]);
  }
  return out;
}

// Repetitions as CSV rows (a point without repetitions is one cell).
std::string AsCsv(const nlohmann::json& values) {
  std::string csv = "rep1,rep2,rep3\n";
  for (const nlohmann::json& point : values) {
    if (!point.is_array()) {
      csv += point.dump() + "\n";
      continue;
    }
    for (std::size_t j = 0; j < point.size(); ++j) csv += (j ? "," : "") + point[j].dump();
    csv += "\n";
  }
  return csv;
}

TEST_F(AnalyzeBatchTest, DirectoryIsByteIdenticalToOneProcessPerFile) {
  // Steps with repetitions (as CSV) and real recorded noise with steps (as JSON), written as
  // files whose sorted order differs from the writing order.
  std::vector<std::string> files;
  for (const auto& [name, values] : CorpusSeries("real-step", 4)) {
    files.push_back(Write("series/" + name + ".json", values.dump()));
  }
  for (const auto& [name, values] : CorpusSeries("step", 6)) {
    files.push_back(Write("series/" + name + ".csv", AsCsv(values)));
  }
  Write("series/notes.txt", "not a series: ignored");
  std::sort(files.begin(), files.end());
  const std::string series_dir = (dir_ / "series").string();

  for (const std::string format : {"text", "markdown", "json"}) {
    SCOPED_TRACE(format);
    const Outcome batch = Analyze("--format " + format + " " + series_dir);
    ASSERT_EQ(batch.exit_code, 0) << batch.out << batch.err;
    EXPECT_EQ(batch.err, "");  // no progress line: stderr is not a terminal
    std::string expected;
    nlohmann::json expected_json = {{"series", nlohmann::json::array()},
                                    {"errors", nlohmann::json::array()}};
    std::size_t change_points = 0;
    for (std::size_t i = 0; i < files.size(); ++i) {
      const Outcome one = Analyze("--format " + format + " '" + files[i] + "'");
      ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
      if (format == "json") {
        nlohmann::json object = {{"name", files[i]}};
        nlohmann::json single = nlohmann::json::parse(one.out);
        change_points += single["change_points"].size();
        object.update(single);
        expected_json["series"].push_back(object);
        continue;
      }
      if (i > 0) expected += "\n";
      if (format == "text") {
        expected += "== " + files[i] + " ==\n" + one.out;
      } else {
        const std::string title = "### perfwarden analyze\n";
        ASSERT_EQ(one.out.rfind(title, 0), 0u) << one.out;
        expected += "### `" + files[i] + "`\n" + one.out.substr(title.size());
      }
    }
    if (format == "json") {
      const nlohmann::json got = nlohmann::json::parse(batch.out);
      EXPECT_EQ(got, expected_json);
      EXPECT_GT(change_points, 5u);  // the comparison covers found steps, not only empty lists
      ASSERT_EQ(got["series"].size(), files.size());
      // The name leads each object.
      EXPECT_NE(batch.out.find("\"series\": [\n    {\n      \"name\": "), std::string::npos);
    } else {
      EXPECT_EQ(batch.out, expected);
    }
  }
}

TEST_F(AnalyzeBatchTest, FilesAndJsonLinesGiveTheSameSeries) {
  std::vector<std::string> files;
  std::string lines;
  for (const auto& [name, values] : CorpusSeries("step", 5)) {
    files.push_back(Write(name + ".json", values.dump()));
    lines += nlohmann::json{{"name", name}, {"values", values}}.dump() + "\n\n";
  }
  const std::string jsonl = Write("all.jsonl", lines);
  // Several files keep the order given (not sorted).
  std::string reversed;
  for (auto it = files.rbegin(); it != files.rend(); ++it) reversed += " '" + *it + "'";
  const Outcome by_files = Analyze("--format json" + reversed);
  ASSERT_EQ(by_files.exit_code, 0) << by_files.err;
  const Outcome by_lines = Analyze("--format json " + jsonl);
  ASSERT_EQ(by_lines.exit_code, 0) << by_lines.err;
  const Outcome by_stdin = Analyze("--format json --jsonl - < " + jsonl);
  ASSERT_EQ(by_stdin.exit_code, 0) << by_stdin.err;

  const nlohmann::json a = nlohmann::json::parse(by_files.out)["series"];
  const nlohmann::json b = nlohmann::json::parse(by_lines.out)["series"];
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(nlohmann::json::parse(by_stdin.out)["series"], b);
  for (std::size_t i = 0; i < 5; ++i) {
    nlohmann::json from_file = a[4 - i];
    EXPECT_EQ(from_file["name"], files[i]);
    EXPECT_EQ(b[i]["name"], CorpusSeries("step", 5)[i].first);
    from_file.erase("name");
    nlohmann::json from_line = b[i];
    from_line.erase("name");
    EXPECT_EQ(from_file, from_line) << i;
  }
  // A bare array is a series too, named by its file and line.
  const std::string bare = Write("bare.jsonl", "[1, 2, 3, 4]\n");
  const Outcome named = Analyze(bare);
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(named.out, "== " + bare +
                           ":1 ==\nno change points in 4 points (window 100, max p-value 0.0001, "
                           "threshold 5%, min segment 3)\n");
}

TEST_F(AnalyzeBatchTest, EveryBadInputIsReportedAndTheGoodOnesStillRun) {
  const std::string good = Write("in/a_good.json", "[1, 2, 3, 4]");
  const std::string bad = Write("in/b_bad.csv", "1\n2\nx\n");
  const std::string lines = Write("in/c.jsonl",
                                  "{\"name\": \"ok\", \"values\": [[1, 2], [3, 4], [5]]}\n"
                                  "{\"name\": \"nan\", \"values\": [1, NaN]}\n"
                                  "{\"value\": [1, 2]}\n"
                                  "{\"name\": \"short\", \"values\": [1]}\n"
                                  "[1, 2,\n"
                                  "42\n");
  const std::string empty_dir = (dir_ / "empty").string();
  fs::create_directories(empty_dir);
  const std::string missing = (dir_ / "missing.json").string();

  const Outcome o = Analyze((dir_ / "in").string() + " " + empty_dir + " " + missing);
  EXPECT_EQ(o.exit_code, 2);
  for (const std::string& expected : {
           bad + ":3: column 1: 'x' is not a number",
           lines + ":2: values: [1]: NaN is not a measurement",
           lines + ":3: unknown key 'value' (expected name, values)",
           lines + ":4: 1 point; change-point analysis needs at least 2",
           lines + ":5: column 7: invalid JSON",
           lines + ":6: expected an object {\"name\", \"values\"} or an array, got a number",
           empty_dir + ": no series files (*.csv, *.json, *.jsonl)",
           missing + ": cannot read: no such file",
           std::string("8 of 10 series could not be analysed"),
       }) {
    EXPECT_NE(o.err.find("perfwarden: error: " + expected), std::string::npos) << expected << "\n"
                                                                               << o.err;
  }
  EXPECT_NE(o.out.find("== " + good + " ==\nno change points in 4 points"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\n== ok ==\nno change points in 3 points"), std::string::npos) << o.out;

  const Outcome json = Analyze("--format json " + lines);
  EXPECT_EQ(json.exit_code, 2);
  const nlohmann::json parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed["series"].size(), 1u);
  EXPECT_EQ(parsed["series"][0]["name"], "ok");
  ASSERT_EQ(parsed["errors"].size(), 5u) << json.out;
  EXPECT_EQ(parsed["errors"][0]["name"], "nan");
  EXPECT_EQ(parsed["errors"][1]["name"], lines + ":3");
  EXPECT_NE(parsed["errors"][0]["error"].get<std::string>().find(":2: values: [1]: NaN"),
            std::string::npos);

  const Outcome blank = Analyze(Write("blank.jsonl", "\n  \n"));
  EXPECT_EQ(blank.exit_code, 2);
  EXPECT_NE(blank.err.find("blank.jsonl: no series (an empty JSON-lines file)"), std::string::npos)
      << blank.err;
}

TEST_F(AnalyzeBatchTest, OneFileKeepsTheOneSeriesOutputADirectoryOfOneDoesNot) {
  const std::string file = Write("one/s.json", "[1, 2, 3, 4]");
  const Outcome plain = Analyze(file);
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.out,
            "no change points in 4 points (window 100, max p-value 0.0001, threshold 5%, min "
            "segment 3)\n");
  // The output's shape follows the invocation, not how many files a directory happens to hold.
  const Outcome dir = Analyze("--format json " + (dir_ / "one").string());
  ASSERT_EQ(dir.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(dir.out)["series"][0]["name"], file);
}

TEST_F(AnalyzeBatchTest, ProgressOnATerminalOnlyForLongBatches) {
  if (testing::RunShell("command -v script").exit_code != 0) GTEST_SKIP() << "no script(1)";
  std::string lines;
  for (int i = 0; i < 20; ++i) lines += "[1, 2, 3, 4]\n";
  const std::string twenty = Write("twenty.jsonl", lines);
  const std::string nineteen = Write("nineteen.jsonl", lines.substr(13));
  // script(1) gives the command a terminal; stdout goes to a file, stderr stays on the terminal.
  auto on_terminal = [&](const std::string& file) {
    return testing::RunShell("script -qec \"'" + std::string(PERFWARDEN_BIN_DIR) +
                             "/perfwarden' analyze " + file + " > /dev/null\" /dev/null");
  };
  const testing::ShellOutcome shown = on_terminal(twenty);
  EXPECT_NE(shown.output.find("\ranalyze: 0/20 series\ranalyze: 1/20 series"), std::string::npos)
      << shown.output;
  EXPECT_NE(shown.output.find("\ranalyze: 19/20 series\r\033[K"), std::string::npos)
      << shown.output;
  EXPECT_EQ(on_terminal(nineteen).output.find("analyze:"), std::string::npos);
  // Not a terminal: never (the other tests read stderr exactly).
  EXPECT_EQ(Analyze(twenty).err, "");
}

}  // namespace
}  // namespace perfwarden
