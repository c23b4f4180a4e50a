// SPDX-License-Identifier: Apache-2.0
// The Google Benchmark JSON reader's error paths: a table of malformed inputs, truncated and
// randomly corrupted real outputs, and files (missing, unparsable, standard input), each error
// naming its source and its place.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runner/adapters/gbench_reader.h"
#include "tests/testing/gbench_reading.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::adapters {
namespace {

using ::perfwarden::testing::ContainsText;
using ::perfwarden::testing::FixturePath;
using ::perfwarden::testing::HasSubstr;
using ::perfwarden::testing::ReadFile;

// ---- Errors ---------------------------------------------------------------------------------

struct ErrorCase {
  const char* what;
  std::string text;
  std::vector<std::string> expected;  // substrings of the message
  std::string field;                  // expected Error::field ("" when a position is given)
};

const std::string kGoodRun =
    R"({"name": "ok", "iterations": 10, "real_time": 1, "cpu_time": 1, "time_unit": "ns"})";

std::string WithRun(const std::string& run) {
  return R"({"benchmarks": [)" + kGoodRun + ", " + run + "]}";
}

TEST(GbenchReaderErrors, TableOfMalformedInputs) {
  const std::vector<ErrorCase> cases = {
      {"empty",
       "",
       {"base.json:1:1: invalid JSON:", "unexpected end of input", "(the input is empty)"},
       ""},
      {"blank lines", "\n\n  ", {"base.json:3:3: invalid JSON:", "unexpected end of input"}, ""},
      {"missing colon", R"({"benchmarks" []})", {"base.json:1:15:", "expected ':'"}, ""},
      {"trailing garbage",
       "{\"benchmarks\": []}\nx",
       {"base.json:2:1:", "expected end of input"},
       ""},
      {"bad literal after NaN tokens",
       "{\"a\": NaN, \"b\": -Infinity,\n \"c\": tru}",
       {"base.json:2:10:", "invalid literal"},
       ""},
      {"truncated after NaN",
       R"({"benchmarks": [{"real_time": NaN,)",
       {"base.json:1:35:", "unexpected end of input", "(the input ends there: truncated?)"},
       ""},
      {"NaN as a key", R"({"benchmarks": [], NaN: 1})", {"base.json:1:20:", "invalid literal"}, ""},
      {"token glued to a word", R"({"benchmarks": [], "a": NaNa})", {"base.json:1:"}, ""},
      {"lowercase nan", R"({"benchmarks": [], "a": nan})", {"base.json:1:26:"}, ""},
      {"number overflow",
       "{\"benchmarks\": [],\n\"a\": 1e999}",
       {"base.json:2:", "number overflow"},
       ""},
      {"invalid UTF-8", "{\"benchmarks\": [], \"a\": \"\xff\"}", {"base.json:1:", "UTF-8"}, ""},
      {"nesting too deep", std::string(300, '['), {"base.json:1:257:", "nesting deeper"}, ""},
      {"top level array", "[]", {"base.json: expected a JSON object", "got an array"}, ""},
      {"top level NaN", "NaN", {"base.json: expected a JSON object", "got a number"}, ""},
      {"missing benchmarks",
       R"({"context": {}})",
       {"base.json: benchmarks: missing"},
       "benchmarks"},
      {"benchmarks not an array",
       R"({"benchmarks": {}})",
       {"base.json: benchmarks: expected an array, got an object"},
       "benchmarks"},
      {"entry not an object",
       R"({"benchmarks": [1]})",
       {"base.json: benchmarks[0]: expected an object, got a number"},
       "benchmarks[0]"},
      {"name missing",
       WithRun(R"({"real_time": 1})"),
       {"base.json: benchmarks[1].name: missing"},
       "benchmarks[1].name"},
      {"name not a string",
       WithRun(R"({"name": 7})"),
       {"base.json: benchmarks[1].name: expected a string, got a number"},
       "benchmarks[1].name"},
      {"real_time a string",
       R"({"benchmarks": [)" + kGoodRun + "," + kGoodRun + "," + kGoodRun + "," +
           R"({"name": "x", "iterations": 1, "real_time": "12", "cpu_time": 1, "time_unit": "ns"}]})",
       {"base.json: benchmarks[3].real_time: expected a number, got a string"},
       "benchmarks[3].real_time"},
      {"cpu_time null",
       WithRun(R"({"name": "x", "real_time": 1, "cpu_time": null})"),
       {"base.json: benchmarks[1].cpu_time: expected a number, got null"},
       "benchmarks[1].cpu_time"},
      {"iterations fractional",
       WithRun(R"({"name": "x", "iterations": 1.5})"),
       {"base.json: benchmarks[1].iterations: expected an integer, got 1.5"},
       "benchmarks[1].iterations"},
      {"iterations too large",
       WithRun(R"({"name": "x", "iterations": 18446744073709551615})"),
       {"base.json: benchmarks[1].iterations: integer 18446744073709551615 is out of range"},
       "benchmarks[1].iterations"},
      {"threads a string",
       WithRun(R"({"name": "x", "threads": "2"})"),
       {"base.json: benchmarks[1].threads: expected an integer, got a string"},
       "benchmarks[1].threads"},
      {"repetition_index NaN",
       WithRun(R"({"name": "x", "repetition_index": NaN})"),
       {"base.json: benchmarks[1].repetition_index: expected an integer, got NaN"},
       "benchmarks[1].repetition_index"},
      {"error_occurred a string",
       WithRun(R"({"name": "x", "error_occurred": "yes"})"),
       {"base.json: benchmarks[1].error_occurred: expected a boolean, got a string"},
       "benchmarks[1].error_occurred"},
      {"skipped a number",
       WithRun(R"({"name": "x", "skipped": 1})"),
       {"base.json: benchmarks[1].skipped: expected a boolean, got a number"},
       "benchmarks[1].skipped"},
      {"label an array",
       WithRun(R"({"name": "x", "label": []})"),
       {"base.json: benchmarks[1].label: expected a string, got an array"},
       "benchmarks[1].label"},
      {"unknown run_type",
       WithRun(R"({"name": "x", "run_type": "warmup"})"),
       {"base.json: benchmarks[1].run_type: expected \"iteration\" or \"aggregate\", got "
        "\"warmup\""},
       "benchmarks[1].run_type"},
      {"unknown time_unit",
       WithRun(
           R"({"name": "x", "iterations": 1, "real_time": 1, "cpu_time": 1, "time_unit": "xs"})"),
       {"base.json: benchmarks[1].time_unit: unknown time_unit \"xs\""},
       "benchmarks[1].time_unit"},
      {"time_unit a number",
       WithRun(R"({"name": "x", "time_unit": 1})"),
       {"base.json: benchmarks[1].time_unit: expected a string, got a number"},
       "benchmarks[1].time_unit"},
      {"iteration without real_time",
       WithRun(R"({"name": "x", "iterations": 1, "cpu_time": 1, "time_unit": "ns"})"),
       {"base.json: benchmarks[1].real_time: missing"},
       "benchmarks[1].real_time"},
      {"iteration without cpu_time",
       WithRun(R"({"name": "x", "iterations": 1, "real_time": 1, "time_unit": "ns"})"),
       {"base.json: benchmarks[1].cpu_time: missing"},
       "benchmarks[1].cpu_time"},
      {"iteration with a unit and no times",
       WithRun(R"({"name": "x", "time_unit": "ns"})"),
       {"base.json: benchmarks[1].real_time: missing"},
       "benchmarks[1].real_time"},
      {"context not an object",
       R"({"context": [], "benchmarks": []})",
       {"base.json: context: expected an object, got an array"},
       "context"},
      {"num_cpus a string",
       R"({"context": {"num_cpus": "2"}, "benchmarks": []})",
       {"base.json: context.num_cpus: expected an integer, got a string"},
       "context.num_cpus"},
      {"mhz_per_cpu a boolean",
       R"({"context": {"mhz_per_cpu": true}, "benchmarks": []})",
       {"base.json: context.mhz_per_cpu: expected a number, got a boolean"},
       "context.mhz_per_cpu"},
      {"cpu_scaling_enabled a string",
       R"({"context": {"cpu_scaling_enabled": "false"}, "benchmarks": []})",
       {"base.json: context.cpu_scaling_enabled: expected a boolean, got a string"},
       "context.cpu_scaling_enabled"},
      {"caches an object",
       R"({"context": {"caches": {}}, "benchmarks": []})",
       {"base.json: context.caches: expected an array, got an object"},
       "context.caches"},
      {"cache size a string",
       R"({"context": {"caches": [{"level": 1}, {"size": "32K"}]}, "benchmarks": []})",
       {"base.json: context.caches[1].size: expected an integer, got a string"},
       "context.caches[1].size"},
      {"cache entry a string",
       R"({"context": {"caches": ["L1"]}, "benchmarks": []})",
       {"base.json: context.caches[0]: expected an object, got a string"},
       "context.caches[0]"},
      {"load_avg item a string",
       R"({"context": {"load_avg": [1, 2, "3"]}, "benchmarks": []})",
       {"base.json: context.load_avg[2]: expected a number, got a string"},
       "context.load_avg[2]"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.what);
    Result<GbenchFile> file = ParseGbenchJson(c.text, "base.json");
    ASSERT_FALSE(file.has_value());
    EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
    for (const std::string& part : c.expected)
      EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr(part));
    EXPECT_EQ(file.error().field, c.field);
  }
}

TEST(GbenchReaderErrors, TruncatedRealOutputNamesTheEndPosition) {
  const std::string text = ReadFile(FixturePath("gbench/sample_gb171_reps3.json"));
  ASSERT_GT(text.size(), 1000u);
  // Every 173rd byte, plus cuts inside a string, a number, a literal and after a comma.
  std::vector<size_t> cuts;
  for (size_t cut = 1; cut < text.size() - 2; cut += 173) cuts.push_back(cut);
  for (const char* marker : {"\"BM_Hash/16", "1.7606143", "fal", "\"ns\",", "[2.92578,"}) {
    const size_t at = text.find(marker);
    ASSERT_NE(at, std::string::npos) << marker;
    cuts.push_back(at + std::string(marker).size());
  }
  cuts.push_back(text.rfind(']') + 1);  // only the final brace missing
  for (size_t cut : cuts) {
    const std::string truncated = text.substr(0, cut);
    SCOPED_TRACE("cut at " + std::to_string(cut) + ": ..." +
                 truncated.substr(truncated.size() - std::min<size_t>(20, truncated.size())));
    // The parser notices only at the end of the text.
    const size_t line =
        1 + static_cast<size_t>(std::count(truncated.begin(), truncated.end(), '\n'));
    const size_t last_newline = truncated.rfind('\n');
    const size_t column =
        truncated.size() - (last_newline == std::string::npos ? 0 : last_newline + 1) + 1;
    Result<GbenchFile> file = ParseGbenchJson(truncated, "base.json");
    ASSERT_FALSE(file.has_value());
    EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                        HasSubstr("base.json:" + std::to_string(line) + ":" +
                                  std::to_string(column) + ": invalid JSON: "));
    EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                        HasSubstr("(the input ends there: truncated?)"));
  }
}

TEST(GbenchReaderErrors, RandomCorruptionNeverCrashes) {
  const std::string text = ReadFile(FixturePath("gbench/features_gb171.json"));
  std::mt19937_64 rng(7);
  const std::string alphabet = "{}[],:\"\\-+.eE0123456789NaInfity tnul\n\xff";
  int parsed = 0;
  for (int round = 0; round < 1000; ++round) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % mutated.size();
      switch (rng() % 3) {
        case 0:
          mutated[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          mutated.erase(at, 1 + rng() % 8);
          break;
        default:
          mutated.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
      if (mutated.empty()) mutated = "{";
    }
    Result<GbenchFile> file = ParseGbenchJson(mutated, "fuzz.json");
    if (file) {
      ++parsed;
      for (const char* metric : {"real_time", "cpu_time", "custom", "ops"}) {
        (void)CollectMetric(*file, metric);
      }
    } else {
      EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument) << file.error().message;
      EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr("fuzz.json")) << mutated;
    }
  }
  EXPECT_GT(parsed, 0);  // some edits land in harmless places (digits, whitespace)
}

// ---- Files ----------------------------------------------------------------------------------

TEST(GbenchReaderFiles, MissingFileAndDirectoryAreNamed) {
  const std::string missing = FixturePath("gbench/does_not_exist.json");
  Result<GbenchFile> file = ReadGbenchFile(missing);
  ASSERT_FALSE(file.has_value());
  EXPECT_EQ(file.error().code, ErrorCode::kInvalidArgument);
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr(missing));
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr("no such file"));

  const std::string directory = FixturePath("gbench");
  file = ReadGbenchFile(directory);
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                      HasSubstr(directory + ": cannot read: is a directory"));
}

TEST(GbenchReaderFiles, ParseErrorsInAFileNameThePath) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("gbench_reader_test_" + std::to_string(std::random_device{}()) + ".json");
  {
    std::ofstream out(path);
    out << "{\n  \"benchmarks\": [\n    {\"name\": \"a\", \"real_time\": }\n";
  }
  Result<GbenchFile> file = ReadGbenchFile(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message,
                      HasSubstr(path.string() + ":3:32: invalid JSON:"));
}

TEST(GbenchReaderFiles, DashReadsStandardInput) {
  std::istringstream input(R"({"benchmarks": [{"name": "a", "real_time": 5, "cpu_time": 4,
                                "iterations": 1, "time_unit": "us"}]})");
  std::streambuf* saved = std::cin.rdbuf(input.rdbuf());
  Result<GbenchFile> file = ReadGbenchFile("-");
  std::cin.rdbuf(saved);
  ASSERT_TRUE(file.has_value()) << file.error().message;
  EXPECT_EQ(file->source, "<stdin>");
  EXPECT_EQ(file->runs.at(0).real_time_ns, 5000);

  std::istringstream broken("{");
  saved = std::cin.rdbuf(broken.rdbuf());
  file = ReadGbenchFile("-");
  std::cin.rdbuf(saved);
  ASSERT_FALSE(file.has_value());
  EXPECT_PRED_FORMAT2(ContainsText, file.error().message, HasSubstr("<stdin>:1:2: invalid JSON:"));
}

}  // namespace
}  // namespace perfwarden::adapters
