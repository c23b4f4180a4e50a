// SPDX-License-Identifier: Apache-2.0
// A git repository made by a bisect test: commits of a tiny benchmark program (a C file that
// a bisect builds with --build at every probe) printing Google Benchmark's JSON with BM_Work's
// timings drawn around the level its commit sets (2% noise per repetition) and BM_Other around
// 500 ns. Real timing on a shared 2-core CI machine would make the tests about the machine;
// with this program they are about the search, the decisions, the builds and the answer.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/testing/shell.h"

namespace perfwarden::testing {

inline constexpr const char* kProgram = R"(#include <math.h>
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

// The build command that bisects of this repository use.
inline constexpr const char* kBuildBench = "cc -O1 bench.c -o bench -lm";

class SyntheticRepo {
 public:
  // A fresh repository at <tmp>/perfwarden-<name>-<pid> with the program and a perfwarden.yaml of
  // one gbench suite, "micro" (and `server_yaml`, a `server:` line, when given).
  explicit SyntheticRepo(const std::string& name, const std::string& server_yaml = "")
      : path_(std::filesystem::temp_directory_path() /
              ("perfwarden-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    ok_ = Git("init -q -b main .").exit_code == 0;
    std::ofstream(path_ / "bench.c") << kProgram;
    std::ofstream(path_ / "perfwarden.yaml")
        << "version: 1\n"
        << server_yaml << "suites:\n  - {name: micro, type: gbench, binary: ./bench}\n";
    std::ofstream(path_ / ".gitignore") << ".perfwarden/\nbench\n";
  }
  ~SyntheticRepo() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::remove(path_.string() + ".log", ec);
  }
  SyntheticRepo(const SyntheticRepo&) = delete;
  SyntheticRepo& operator=(const SyntheticRepo&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool ok() const { return ok_; }

  ShellOutcome Git(const std::string& args) const {
    return RunShell("cd " + path_.string() + " && GIT_CONFIG_NOSYSTEM=1 HOME=" + path_.string() +
                    " git -c user.name=T -c user.email=t@example.com " + args);
  }

  // Commits 0..n: commit k's level from `level(k)`; commits in `broken` do not compile.
  // False when git fails.
  template <class Level>
  bool MakeHistory(int n, Level level, const std::vector<int>& broken = {}) {
    for (int k = 0; k <= n; ++k) {
      std::ofstream(path_ / "level.h")
          << "#define LEVEL " << level(k) << "\n"
          << (std::find(broken.begin(), broken.end(), k) != broken.end() ? "#error broken\n" : "")
          << "/* commit " << k << " */\n";
      if (Git("add -A").exit_code != 0) return false;
      if (Git("commit -q -m 'commit " + std::to_string(k) + "'").exit_code != 0) return false;
    }
    return true;
  }

  // The sha of commit k of a history of n + 1 commits.
  std::string Sha(int k, int n) const {
    return Trim(Git("rev-parse HEAD~" + std::to_string(n - k)).output);
  }

  static std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

 private:
  std::filesystem::path path_;
  bool ok_ = false;
};

// " ASAN_OPTIONS=..." when the tests run under ASan, for commands run through a shell.
inline std::string AsanEnv() {
  const char* a = std::getenv("ASAN_OPTIONS");
  return a != nullptr ? std::string(" ASAN_OPTIONS=") + a : std::string();
}

}  // namespace perfwarden::testing
