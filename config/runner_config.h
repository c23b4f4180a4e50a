// SPDX-License-Identifier: Apache-2.0
// perfwarden.yaml: what `perfwarden run` executes (suites), where results go (server, spool) and
// how `perfwarden gate` judges them (thresholds, first matching rule wins). Loading validates every
// key and reports "FILE:LINE:COL: key: problem"; relative paths are resolved against the directory
// of the file, so the runner behaves the same whatever directory CI starts it from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/environment.h"
#include "core/metric.h"
#include "core/result.h"
#include "core/series_key.h"
#include "core/threshold_rule.h"

namespace perfwarden::config {

inline constexpr double kDefaultThresholdPercent = 5.0;
inline constexpr double kDefaultAlpha = 0.05;

struct RunnerServer {
  std::string url;      // "http://..." or "https://..."; empty when perfwarden.yaml has no server
  std::string project;  // [A-Za-z0-9_.-]+
  std::string token;    // from PERFWARDEN_TOKEN only: secrets stay out of the repository
};

// gbench: a Google Benchmark binary; command: a command timed as a whole; train: a command that
// prints perfwarden's JSON lines (a training benchmark: runner/adapters/train_lines.h).
enum class SuiteType { kGbench, kCommand, kTrain };

// "gbench" / "command" / "train".
std::string_view SuiteTypeName(SuiteType type);

struct Suite {
  std::string name;  // unique, [A-Za-z0-9_.-]+
  SuiteType type = SuiteType::kGbench;
  std::filesystem::path binary;  // gbench: absolute (resolved against the config's directory)
  // command: argv, executed without a shell; a YAML string becomes {"/bin/sh", "-c", text}.
  std::vector<std::string> command;
  bool command_uses_shell = false;
  std::string build;     // shell command run first (sh -c), "" for none
  std::string filter;    // gbench --benchmark_filter, "" for all
  int repetitions = 10;  // the suite's value, else defaults.repetitions (train: runs, default 1)
  std::optional<double> min_time;  // seconds; the suite's, else defaults.min_time
  std::vector<std::string> args;   // gbench: extra arguments
  // Added to the environment the suite's processes inherit from the runner, which lacks the
  // secrets config/secret_env.h names.
  std::map<std::string, std::string> env;
  // Secret-looking variables (HF_TOKEN) the suite's processes inherit all the same; never a
  // credential (PERFWARDEN_TOKEN, GITHUB_TOKEN, ...), never one that `env` sets.
  std::vector<std::string> pass_env;
  std::int64_t timeout_s = 3600;  // per suite, build excluded
  int warmup = 1;                 // command: runs discarded before the timed ones
  int line = 0;                   // where the suite was declared, for messages
};

// What the gate applies to one (suite, benchmark, metric). Fields the matching rule leaves out
// take the defaults (5%, alpha 0.05), not the values of later rules.
struct ResolvedThreshold {
  double percent = kDefaultThresholdPercent;
  double alpha = kDefaultAlpha;
  std::optional<Direction> direction;  // overrides the direction the adapter reported
  bool ignore = false;
  int rule = -1;  // index into RunnerConfig::thresholds, -1 when no rule matched

  bool operator==(const ResolvedThreshold&) const = default;
};

// How `perfwarden gate` decides (perfwarden.yaml `gate:`, docs/config.md; the CLI overrides each).
enum class GateMode {
  kUnpaired,  // the server's verdict: this run against the baseline's stored runs
  kPaired,    // baseline and this build measured interleaved on this host (docs/statistics.md)
  kAuto,      // paired when every suite can be measured side by side, else unpaired
};
std::string_view GateModeName(GateMode mode);  // "unpaired", "paired", "auto"
std::optional<GateMode> ParseGateMode(std::string_view text);

struct GateSettings {
  GateMode mode = GateMode::kUnpaired;
  int block_repetitions = 1;        // of each side per block, 1..1000
  int min_blocks = 10;              // the first look, 3..1000
  int max_blocks = 50;              // the last look, min_blocks..10000
  std::string test = "trimmed";     // "trimmed", "t" or "wilcoxon"
  std::string spending = "pocock";  // alpha over the looks: "pocock", "obf" or "bonferroni"
  // A block of a Google Benchmark suite: one process per side for the whole "suite", or a pair
  // of processes per "benchmark" (the sides closer in time; more process starts).
  std::string interleave = "repetition";
  std::int64_t time_budget_s = 0;  // measuring stops at the first look after this; 0: none
  // The paired gate's cache of built baselines (runner/run/baseline_cache.h): its directory,
  // absolute once read (PERFWARDEN_BASELINE_CACHE, else gate.baseline_cache; "" : the default,
  // <config dir>/.perfwarden/baseline-cache), and how many it keeps, 0..1000 (0: no cache).
  std::filesystem::path baseline_cache;
  int baseline_cache_entries = 4;

  bool operator==(const GateSettings&) const = default;
};

struct RunnerConfig {
  int version = 1;
  RunnerServer server;
  std::string target_branch = "main";
  std::string testbed;              // PERFWARDEN_TESTBED, else the file, else the host name
  std::filesystem::path spool_dir;  // absolute; default <config dir>/.perfwarden/spool
  int default_repetitions = 10;
  std::optional<double> default_min_time;  // unset: Google Benchmark's own default
  std::vector<Suite> suites;
  std::vector<ThresholdRule> thresholds;  // first match wins
  GateSettings gate;
  std::filesystem::path base_dir;     // the config file's directory; builds and commands run here
  std::filesystem::path config_file;  // absolute, when loaded from a file; "" when parsed

  const Suite* FindSuite(std::string_view name) const;
  // The first rule that matches, in file order; the defaults when none does.
  ResolvedThreshold Resolve(std::string_view suite, std::string_view benchmark,
                            std::string_view metric) const;
  ResolvedThreshold Resolve(const SeriesKey& key) const {
    return Resolve(key.suite, key.benchmark, key.metric);
  }
};

// Parses perfwarden.yaml text. source_name prefixes messages ("perfwarden.yaml:12:5: suites[1].
// repetitions: must be in [2, 10000], got 1"); relative paths resolve against base_dir (the
// current directory when empty). `env` supplies PERFWARDEN_TOKEN and PERFWARDEN_TESTBED; nullptr
// reads no environment. Every error is kInvalidArgument with field = the key's path.
Result<RunnerConfig> ParseRunnerConfig(std::string_view yaml, std::string_view source_name,
                                       const std::filesystem::path& base_dir = {},
                                       const EnvLookup& env = nullptr);

// Reads the file at `path` (base_dir = its directory) with the process environment.
Result<RunnerConfig> LoadRunnerConfig(const std::string& path);
Result<RunnerConfig> LoadRunnerConfig(const std::string& path, const EnvLookup& env);

}  // namespace perfwarden::config
