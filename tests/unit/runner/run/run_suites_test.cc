// SPDX-License-Identifier: Apache-2.0
// runner/run: the compiler found in a binary, exact-name filters, and RunSuite on a timed
// command suite (a real child process; the values are its wall times).
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "runner/run/binary_compiler.h"
#include "runner/run/process.h"
#include "runner/run/suites.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;

// A minimal 64-bit ELF file: sections .rodata (holding `rodata`) and .comment (holding
// `comment`, of type `comment_type`) beside the section names; `cut` bytes cut off its end.
std::string MinimalElf(const std::string& rodata, const std::string& comment,
                       uint32_t comment_type = SHT_PROGBITS, size_t cut = 0) {
  const std::string names = std::string("\0.shstrtab\0.rodata\0.comment\0", 28);
  std::string body = names + rodata + comment;
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_EXEC;
  header.e_shoff = sizeof header + body.size();
  header.e_ehsize = sizeof header;
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = 4;
  header.e_shstrndx = 1;
  Elf64_Shdr sections[4] = {};
  const auto at = [&](size_t offset) { return sizeof header + offset; };
  sections[1] = {1, SHT_STRTAB, 0, 0, at(0), names.size(), 0, 0, 1, 0};
  sections[2] = {11, SHT_PROGBITS, 0, 0, at(names.size()), rodata.size(), 0, 0, 1, 0};
  sections[3] = {19, comment_type, 0, 0, at(names.size() + rodata.size()), comment.size(), 0, 0, 1,
                 0};
  std::string file(reinterpret_cast<const char*>(&header), sizeof header);
  file += body;
  file.append(reinterpret_cast<const char*>(sections), sizeof sections);
  file.resize(file.size() - cut);
  return file;
}

std::string CompilerOf(const std::string& bytes) {
  char pattern[] = "/tmp/perfwarden-binary-XXXXXX";
  const int fd = mkstemp(pattern);
  if (fd < 0) return "(mkstemp failed)";
  close(fd);
  std::ofstream(pattern, std::ios::binary) << bytes;
  const std::string out = BinaryCompiler(pattern);
  fs::remove(pattern);
  return out;
}

TEST(BinaryCompiler, NamesTheCompilerOfAnElfBinaryAndNothingElse) {
  // This test binary was built by the project's compiler (g++ here, clang elsewhere); under
  // AddressSanitizer its .rodata also holds "clang version " (the runtime's strings), which a scan
  // of the whole file took for the answer.
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string compiler = BinaryCompiler(self);
  EXPECT_TRUE(compiler.rfind("gcc (", 0) == 0 || compiler.rfind("clang version", 0) == 0)
      << compiler;
  EXPECT_NE(compiler.find_first_of("0123456789"), std::string::npos) << compiler;

  EXPECT_EQ(CompilerOf("no compiler marker in here"), "");
  EXPECT_EQ(CompilerOf("GCC: (not an ELF file) 1.0"), "");  // ELF files only
  EXPECT_EQ(BinaryCompiler("/nonexistent/binary"), "");
}

TEST(BinaryCompiler, ReadsTheCommentSectionThroughTheSectionHeaders) {
  const std::string gcc = std::string("GCC: (Debian 12.2.0-14) 12.2.0\0", 31);
  EXPECT_EQ(CompilerOf(MinimalElf("clang version 99 (a string)", gcc)),
            "gcc (Debian 12.2.0-14) 12.2.0");
  // The first string that names a compiler; a vendor's prefix before "clang version" dropped.
  EXPECT_EQ(
      CompilerOf(MinimalElf("", std::string("Linker: LLD 15\0Debian clang version 14.0.6\0", 43))),
      "clang version 14.0.6");
  EXPECT_EQ(CompilerOf(MinimalElf(
                "", std::string(300, 'x') + std::string("\0GCC: (", 7) + std::string(300, 'y'))),
            ("gcc (" + std::string(300, 'y')).substr(0, 200));
  EXPECT_EQ(CompilerOf(MinimalElf("GCC: (in .rodata) 1", "")), "");
  EXPECT_EQ(CompilerOf(MinimalElf("", gcc, SHT_NOBITS)), "");
  // Damaged files: section headers cut off, or the header alone.
  EXPECT_EQ(CompilerOf(MinimalElf("", gcc, SHT_PROGBITS, 10)), "");
  EXPECT_EQ(CompilerOf(MinimalElf("", gcc).substr(0, sizeof(Elf64_Ehdr))), "");
  EXPECT_EQ(CompilerOf(MinimalElf("", gcc).substr(0, 10)), "");
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
  char pattern[] = "/tmp/perfwarden-suite-XXXXXX";
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
  char pattern[] = "/tmp/perfwarden-train-XXXXXX";
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
}  // namespace perfwarden::run
