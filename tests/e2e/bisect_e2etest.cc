// `perfgate bisect` end to end, local mode: a git repository made by the test, 64 commits of a
// tiny benchmark program (a C file the bisect builds with --build at every probe) whose commit k
// makes BM_Work 10% slower, one commit that does not build, noise of 2% per repetition. The
// program prints Google Benchmark's JSON with its timings drawn around the level its commit
// sets (real timing on a shared 2-core CI machine would make the test about the machine): what
// is tested is the search, the decisions, the builds in temporary trees, skipping, resuming and
// the answer. Also a range without a regression, and two steps (4% and 8%).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/testing/shell.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kProgram = R"(#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "level.h"
/* A benchmark program in Google Benchmark's JSON: BM_Work around LEVEL ns, BM_Other around
   500 ns, 2% Gaussian noise per repetition. */
int main(int argc, char** argv) {
  const char* out = 0;
  int reps = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "--benchmark_out=", 16)) out = argv[i] + 16;
    if (!strncmp(argv[i], "--benchmark_repetitions=", 24)) reps = atoi(argv[i] + 24);
  }
  FILE* f = out ? fopen(out, "w") : stdout;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  srand((unsigned)(ts.tv_nsec ^ getpid()));
  fprintf(f, "{\"context\": {\"date\": \"2026-01-01T00:00:00+00:00\", \"host_name\": \"t\", "
             "\"executable\": \"bench\", \"num_cpus\": 1, \"mhz_per_cpu\": 1000, "
             "\"cpu_scaling_enabled\": false, \"library_build_type\": \"release\"}, "
             "\"benchmarks\": [");
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < reps; ++r) {
      double u1 = (rand() + 1.0) / (RAND_MAX + 2.0), u2 = rand() / (RAND_MAX + 1.0);
      double v = (b == 0 ? LEVEL : 500.0) * (1 + 0.02 * sqrt(-2 * log(u1)) * cos(6.2831853 * u2));
      fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                 "\"repetitions\": %d, \"repetition_index\": %d, \"threads\": 1, "
                 "\"iterations\": 1000, \"real_time\": %.6f, \"cpu_time\": %.6f, "
                 "\"time_unit\": \"ns\"}", b || r ? ", " : "", b ? "BM_Other" : "BM_Work",
              b ? "BM_Other" : "BM_Work", reps, r, v, v);
    }
  }
  fprintf(f, "]}\n");
  if (out) fclose(f);
  return 0;
}
)";

class BisectE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = fs::temp_directory_path() /
            ("perfgate-bisect-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(repo_);
    fs::create_directories(repo_);
    ASSERT_EQ(Git("init -q -b main .").exit_code, 0);
    std::ofstream(repo_ / "bench.c") << kProgram;
    std::ofstream(repo_ / "perfgate.yaml")
        << "version: 1\nsuites:\n  - {name: micro, type: gbench, binary: ./bench}\n";
    std::ofstream(repo_ / ".gitignore") << ".perfgate/\nbench\n";
  }
  void TearDown() override {
    fs::remove_all(repo_);
    fs::remove(repo_.string() + ".log");
  }

  testing::ShellOutcome Git(const std::string& args) {
    return testing::RunShell("cd " + repo_.string() +
                             " && GIT_CONFIG_NOSYSTEM=1 HOME=" + repo_.string() +
                             " git -c user.name=T -c user.email=t@example.com " + args);
  }

  // Commits 0..n: commit k's level from `level(k)`; commits in `broken` do not compile.
  template <class Level>
  void MakeHistory(int n, Level level, const std::vector<int>& broken = {}) {
    for (int k = 0; k <= n; ++k) {
      std::ofstream(repo_ / "level.h")
          << "#define LEVEL " << level(k) << "\n"
          << (std::find(broken.begin(), broken.end(), k) != broken.end() ? "#error broken\n" : "")
          << "/* commit " << k << " */\n";
      ASSERT_EQ(Git("add -A").exit_code, 0);
      ASSERT_EQ(Git("commit -q -m 'commit " + std::to_string(k) + "'").exit_code, 0);
    }
  }

  std::string Sha(int k, int n) {
    return Trim(Git("rev-parse HEAD~" + std::to_string(n - k)).output);
  }

  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  testing::ShellOutcome Bisect(const std::string& args) {
    std::string asan;
    if (const char* a = std::getenv("ASAN_OPTIONS")) asan = std::string(" ASAN_OPTIONS=") + a;
    // stdout only (the JSON); the progress on stderr goes to the log.
    return testing::RunShell("(cd " + repo_.string() + " &&" + asan + " " + PERFGATE_BIN_DIR +
                             "/perfgate bisect " + args + " --build 'cc -O1 bench.c -o bench -lm'" +
                             " --benchmark BM_Work --format json 2>" + repo_.string() + ".log" +
                             ")");
  }

  json Parse(const testing::ShellOutcome& out) {
    json j = json::parse(out.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out.output << ReadLog();
    return j;
  }

  std::string ReadLog() {
    std::ifstream in(repo_.string() + ".log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path repo_;
};

TEST_F(BisectE2eTest, FindsTheCulpritOfSixtyFourCommitsAroundABrokenBuild) {
  const int n = 64, k = 37;
  MakeHistory(n, [&](int c) { return c >= k ? 1100.0 : 1000.0; }, {32});
  const std::string before = Trim(Git("status --porcelain").output);
  const testing::ShellOutcome out = Bisect("--good HEAD~64 --bad HEAD");
  ASSERT_EQ(out.exit_code, 0) << out.output << ReadLog();
  const json r = Parse(out);
  ASSERT_EQ(r["culprits"].size(), 1u) << r.dump(2);
  const json& c = r["culprits"][0];
  EXPECT_EQ(c["sha"], Sha(k, n));
  EXPECT_EQ(c["subject"], "commit 37");
  EXPECT_EQ(c["author"], "T");
  EXPECT_TRUE(c["exact"].get<bool>());
  EXPECT_NEAR(c["magnitude"].get<double>(), 0.10, 0.03);
  EXPECT_LT(c["ci"][0].get<double>(), c["magnitude"].get<double>());
  EXPECT_GT(c["ci"][1].get<double>(), c["magnitude"].get<double>());
  EXPECT_TRUE(r["endpoints"]["reproduced"].get<bool>());
  EXPECT_EQ(r["commits"], 64);
  EXPECT_EQ(r["expected_probes"], 6);
  // About log2(64) probes: the broken commit (32, the first probe) costs one more.
  EXPECT_LE(r["probes"].size(), 9u) << r.dump(2);
  EXPECT_GE(r["probes"].size(), 5u) << r.dump(2);
  bool skipped = false;
  for (const json& p : r["probes"]) {
    if (p["verdict"] == "skip") {
      skipped = true;
      EXPECT_EQ(p["sha"], Sha(32, n));
      EXPECT_NE(p["reason"].get<std::string>().find("build failed"), std::string::npos);
    }
  }
  EXPECT_TRUE(skipped) << r.dump(2);
  // The working tree was not touched.
  EXPECT_EQ(Trim(Git("status --porcelain").output), before);
  EXPECT_FALSE(fs::exists(repo_ / "bench"));
  EXPECT_NE(ReadLog().find("step 1 of about 6"), std::string::npos) << ReadLog();
  std::cout << "64 commits: " << r["probes"].size() << " probes, " << r["builds"] << " builds, "
            << r["runs"] << " suite runs\n";
}

TEST_F(BisectE2eTest, ARangeWithoutARegressionSaysSo) {
  MakeHistory(8, [](int) { return 1000.0; });
  const testing::ShellOutcome out = Bisect("--good HEAD~8 --bad HEAD --max-repetitions 20");
  EXPECT_EQ(out.exit_code, 1) << out.output << ReadLog();
  const json r = Parse(out);
  EXPECT_FALSE(r["endpoints"]["reproduced"].get<bool>());
  EXPECT_TRUE(r["culprits"].empty());
  ASSERT_EQ(r["warnings"].size(), 1u);
  EXPECT_NE(r["warnings"][0].get<std::string>().find("does not reproduce"), std::string::npos);
}

TEST_F(BisectE2eTest, TwoStepsAreBothReported) {
  const int n = 32;
  MakeHistory(n, [](int c) { return 1000.0 * (c >= 9 ? 1.04 : 1.0) * (c >= 23 ? 1.08 : 1.0); });
  const testing::ShellOutcome out = Bisect("--good HEAD~32 --bad HEAD --repetitions 20");
  ASSERT_EQ(out.exit_code, 0) << out.output << ReadLog();
  const json r = Parse(out);
  ASSERT_EQ(r["culprits"].size(), 2u) << r.dump(2);
  EXPECT_EQ(r["culprits"][0]["sha"], Sha(23, n));
  EXPECT_NEAR(r["culprits"][0]["magnitude"].get<double>(), 0.08, 0.03);
  EXPECT_LT(r["culprits"][0]["share"].get<double>(),
            0.9);  // part of the change: the sides were searched
  EXPECT_EQ(r["culprits"][1]["sha"], Sha(9, n));
  EXPECT_NEAR(r["culprits"][1]["magnitude"].get<double>(), 0.04, 0.02);
  EXPECT_FALSE(r["warnings"].empty());
}

TEST_F(BisectE2eTest, AnInterruptedBisectResumes) {
  const int n = 32, k = 11;
  MakeHistory(n, [&](int c) { return c >= k ? 1100.0 : 1000.0; });
  const std::string state = (repo_ / "state.json").string();
  const testing::ShellOutcome full = Bisect("--good HEAD~32 --bad HEAD --state " + state);
  ASSERT_EQ(full.exit_code, 0) << full.output << ReadLog();
  const json first = Parse(full);
  ASSERT_EQ(first["culprits"].size(), 1u);
  EXPECT_FALSE(first["resumed"].get<bool>());
  // As if it had stopped after two decisions: keep the ends and the first two probes.
  std::ifstream in(state);
  json kept = json::parse(in);
  json points = json::array();
  std::set<std::size_t> keep = {0, static_cast<std::size_t>(n)};
  for (std::size_t i = 0; i < 2 && i < first["probes"].size(); ++i) {
    keep.insert(first["probes"][i]["position"].get<std::size_t>());
  }
  for (const json& p : kept["points"]) {
    if (keep.count(p["position"].get<std::size_t>()) != 0) points.push_back(p);
  }
  kept["points"] = points;
  std::ofstream(state) << kept.dump();
  const testing::ShellOutcome resumed = Bisect("--good HEAD~32 --bad HEAD --state " + state);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output << ReadLog();
  const json second = Parse(resumed);
  EXPECT_TRUE(second["resumed"].get<bool>());
  ASSERT_EQ(second["culprits"].size(), 1u);
  EXPECT_EQ(second["culprits"][0]["sha"], Sha(k, n));
  EXPECT_EQ(second["probes"].size() + 2, first["probes"].size()) << second.dump(2);
  EXPECT_NE(ReadLog().find("resuming"), std::string::npos);
}

}  // namespace
}  // namespace perfgate
