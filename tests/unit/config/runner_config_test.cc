// SPDX-License-Identifier: Apache-2.0
// perfgate.yaml: the example file loads, defaults apply, relative paths follow the file, the
// environment overrides the file, threshold rules resolve first-match-wins with globs, and every
// kind of bad input is rejected with "FILE:LINE:COL: key: problem".
#include "config/runner_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace perfgate::config {
namespace {

namespace fs = std::filesystem;

const fs::path kBase = "/repo";

EnvLookup FakeEnvironment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

Result<RunnerConfig> Parse(const std::string& yaml, const EnvLookup& env = nullptr) {
  return ParseRunnerConfig(yaml, "perfgate.yaml", kBase, env);
}

constexpr char kMinimal[] = R"(version: 1
suites:
  - {name: core, type: gbench, binary: bench/core}
)";

// A temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "runner_config_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(RunnerConfig, LoadsTheExampleFile) {
  const fs::path example =
      fs::path(PERFGATE_FIXTURES_DIR) / ".." / ".." / "config" / "perfgate.example.yaml";
  auto config = LoadRunnerConfig(example.string(), FakeEnvironment({}));
  ASSERT_TRUE(config) << config.error().ToString();
  const fs::path dir = fs::absolute(example).lexically_normal().parent_path();
  EXPECT_EQ(config->base_dir, dir);
  EXPECT_EQ(config->server.url, "https://perf.example.com");
  EXPECT_EQ(config->server.project, "myproj");
  EXPECT_EQ(config->server.token, "");
  EXPECT_EQ(config->target_branch, "main");
  EXPECT_EQ(config->testbed, "ci-x86-1");
  EXPECT_EQ(config->spool_dir, dir / ".perfgate" / "spool");
  EXPECT_EQ(config->default_repetitions, 10);
  EXPECT_EQ(config->default_min_time, 0.05);
  ASSERT_EQ(config->suites.size(), 2u);

  const Suite& core = config->suites[0];
  EXPECT_EQ(core.name, "core");
  EXPECT_EQ(core.type, SuiteType::kGbench);
  EXPECT_EQ(core.binary, dir / "build" / "bench" / "core_bench");
  EXPECT_EQ(core.build, "cmake --build build --target core_bench");
  EXPECT_EQ(core.filter, "BM_Sort.*");
  EXPECT_EQ(core.repetitions, 20);
  EXPECT_EQ(core.min_time, 0.1);
  EXPECT_EQ(core.args, std::vector<std::string>{"--benchmark_enable_random_interleaving=true"});
  EXPECT_EQ(core.env, (std::map<std::string, std::string>{{"OMP_NUM_THREADS", "1"}}));
  EXPECT_EQ(core.timeout_s, 600);
  EXPECT_EQ(core.line, 23);  // the example file's "- name: core" (line 1 is SPDX)

  const Suite& startup = config->suites[1];
  EXPECT_EQ(startup.type, SuiteType::kCommand);
  EXPECT_EQ(startup.command, (std::vector<std::string>{"./build/app", "--selftest"}));
  EXPECT_FALSE(startup.command_uses_shell);
  EXPECT_EQ(startup.repetitions, 15);
  EXPECT_EQ(startup.min_time, 0.05);  // the default; not used by command suites
  EXPECT_EQ(startup.warmup, 1);
  EXPECT_EQ(startup.timeout_s, 300);
  EXPECT_EQ(startup.pass_env, std::vector<std::string>{"APP_LICENSE_TOKEN"});

  ASSERT_EQ(config->thresholds.size(), 6u);
  EXPECT_EQ(config->thresholds[0].benchmark, "BM_Sort/*");
  EXPECT_EQ(config->thresholds[0].metric, "real_time");
  EXPECT_EQ(config->thresholds[0].percent, 3.0);
  EXPECT_TRUE(config->thresholds[1].ignore);
  EXPECT_EQ(config->thresholds[2].direction, Direction::kHigherIsBetter);
  EXPECT_EQ(config->thresholds[3].suite, "startup");
  EXPECT_EQ(config->thresholds[4].gate, true);
  EXPECT_EQ(config->Resolve("core", "BM_Sort/1024", "real_time").percent, 3.0);
  // docs/config.md: rule 2 matches first and sets only the direction; rule 3's 10% does not apply.
  EXPECT_EQ(config->Resolve("startup", "wall_time", "items_per_second"),
            (ResolvedThreshold{5.0, 0.05, Direction::kHigherIsBetter, false, 2}));
  EXPECT_EQ(config->Resolve("startup", "wall_time", "wall_time").percent, 10.0);
}

TEST(RunnerConfig, DefaultsForAMinimalFile) {
  auto config = Parse(kMinimal);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->version, 1);
  EXPECT_EQ(config->server.url, "");
  EXPECT_EQ(config->target_branch, "main");
  EXPECT_EQ(config->spool_dir, fs::path("/repo/.perfgate/spool"));
  EXPECT_EQ(config->default_repetitions, 10);
  EXPECT_FALSE(config->default_min_time.has_value());
  ASSERT_EQ(config->suites.size(), 1u);
  const Suite& suite = config->suites[0];
  EXPECT_EQ(suite.binary, fs::path("/repo/bench/core"));
  EXPECT_EQ(suite.repetitions, 10);
  EXPECT_FALSE(suite.min_time.has_value());
  EXPECT_EQ(suite.timeout_s, 3600);
  EXPECT_EQ(suite.build, "");
  EXPECT_EQ(suite.filter, "");
  EXPECT_TRUE(suite.args.empty());
  EXPECT_TRUE(suite.env.empty());
  EXPECT_TRUE(config->thresholds.empty());
  EXPECT_EQ(config->gate, GateSettings{});
  EXPECT_EQ(config->gate.mode, GateMode::kUnpaired);

  // No testbed in the file or the environment: the host name.
  std::array<char, 256> host{};
  ASSERT_EQ(gethostname(host.data(), host.size() - 1), 0);
  EXPECT_FALSE(config->testbed.empty());
  if (std::string(host.data())
          .find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
      std::string::npos) {
    EXPECT_EQ(config->testbed, host.data());
  }
}

TEST(RunnerConfig, GateSettingsAreRead) {
  auto config = Parse(std::string(kMinimal) +
                      "gate:\n  mode: auto\n  block_repetitions: 3\n  min_blocks: 4\n"
                      "  max_blocks: 40\n  test: wilcoxon\n  time_budget: 900\n");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->gate.mode, GateMode::kAuto);
  EXPECT_EQ(config->gate.block_repetitions, 3);
  EXPECT_EQ(config->gate.min_blocks, 4);
  EXPECT_EQ(config->gate.max_blocks, 40);
  EXPECT_EQ(config->gate.test, "wilcoxon");
  EXPECT_EQ(config->gate.time_budget_s, 900);
  for (GateMode mode : {GateMode::kUnpaired, GateMode::kPaired, GateMode::kAuto}) {
    EXPECT_EQ(ParseGateMode(GateModeName(mode)), mode);
  }
  EXPECT_FALSE(ParseGateMode("Paired").has_value());
}

TEST(RunnerConfig, PathsResolveAgainstTheFilesDirectory) {
  TempDir dir;
  fs::create_directories(dir.path() / "sub");
  const fs::path file = dir.path() / "sub" / "perfgate.yaml";
  std::ofstream(file) << R"(version: 1
spool_dir: ../spool
suites:
  - {name: a, type: gbench, binary: ./build/../bench/a}
  - {name: b, type: gbench, binary: /opt/b}
)";
  auto config = LoadRunnerConfig(file.string(), FakeEnvironment({}));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->base_dir, dir.path() / "sub");
  EXPECT_EQ(config->spool_dir, dir.path() / "spool");
  EXPECT_EQ(config->suites[0].binary, dir.path() / "sub" / "bench" / "a");
  EXPECT_EQ(config->suites[1].binary, fs::path("/opt/b"));

  auto missing = LoadRunnerConfig((dir.path() / "absent.yaml").string(), FakeEnvironment({}));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot read"), std::string::npos);
}

TEST(RunnerConfig, EnvironmentSuppliesTokenAndOverridesTestbed) {
  const std::string yaml = std::string(kMinimal) +
                           "server: {url: 'http://localhost:8080/', project: p}\n"
                           "testbed: from-file\n";
  auto from_file = Parse(yaml, FakeEnvironment({{"PERFGATE_TESTBED", ""}}));
  ASSERT_TRUE(from_file) << from_file.error().ToString();
  EXPECT_EQ(from_file->testbed, "from-file");                 // an empty variable counts as unset
  EXPECT_EQ(from_file->server.url, "http://localhost:8080");  // trailing '/' dropped
  EXPECT_EQ(from_file->server.token, "");

  auto from_env = Parse(
      yaml, FakeEnvironment({{"PERFGATE_TESTBED", "gpu-box.2"}, {"PERFGATE_TOKEN", "pgt_secret"}}));
  ASSERT_TRUE(from_env) << from_env.error().ToString();
  EXPECT_EQ(from_env->testbed, "gpu-box.2");
  EXPECT_EQ(from_env->server.token, "pgt_secret");

  auto bad = Parse(yaml, FakeEnvironment({{"PERFGATE_TESTBED", "my box"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field, "testbed");
  EXPECT_EQ(bad.error().message.rfind("environment variable PERFGATE_TESTBED: ", 0), 0u)
      << bad.error().message;
}

TEST(RunnerConfig, CommandAsStringRunsThroughTheShell) {
  auto config = Parse(R"(version: 1
defaults: {repetitions: 7, min_time: 0.5}
suites:
  - name: s
    type: command
    command: ./app --selftest | tee log
    warmup: 0
    env: {A: "1", B_2: x}
)");
  ASSERT_TRUE(config) << config.error().ToString();
  const Suite& suite = config->suites[0];
  EXPECT_TRUE(suite.command_uses_shell);
  EXPECT_EQ(suite.command,
            (std::vector<std::string>{"/bin/sh", "-c", "./app --selftest | tee log"}));
  EXPECT_EQ(suite.warmup, 0);
  EXPECT_EQ(suite.repetitions, 7);
  EXPECT_EQ(suite.env.at("B_2"), "x");
  EXPECT_EQ(SuiteTypeName(suite.type), "command");
}

// A training benchmark: one run by default (its steps are the samples); only `command` of its
// own keys (warm-up is the command's to mark, per step).
TEST(RunnerConfig, TrainSuitesRunOnceByDefault) {
  auto config = Parse(R"(version: 1
defaults: {repetitions: 7}
suites:
  - {name: mlp, type: train, command: ./cuda_train --precision bf16}
  - {name: mlp3, type: train, command: [./cuda_train], repetitions: 3}
)");
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(SuiteTypeName(config->suites[0].type), "train");
  EXPECT_EQ(config->suites[0].repetitions, 1);
  EXPECT_TRUE(config->suites[0].command_uses_shell);
  EXPECT_EQ(config->suites[1].repetitions, 3);
  auto bad = Parse(R"(version: 1
suites:
  - {name: mlp, type: train, command: x, warmup: 2}
)");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("not valid for type train"), std::string::npos)
      << bad.error().message;
}

TEST(RunnerConfig, ThresholdsResolveFirstMatchWins) {
  auto config = Parse(std::string(kMinimal) + R"(  - {name: startup, type: command, command: [x]}
thresholds:
  - {benchmark: "BM_Sort/*", metric: real_time, percent: 3}
  - {benchmark: "BM_Noisy*", ignore: true}
  - {metric: items_per_second, direction: higher}
  - {suite: "start*", benchmark: "wall_?ime", alpha: 0.01}
  - {benchmark: "BM_[AB]x", percent: 7.5}
)");
  ASSERT_TRUE(config) << config.error().ToString();
  const RunnerConfig& c = *config;
  // '*' crosses '/': no FNM_PATHNAME.
  EXPECT_EQ(c.Resolve("core", "BM_Sort/1024/8", "real_time"),
            (ResolvedThreshold{3.0, kDefaultAlpha, std::nullopt, false, 0}));
  // The metric does not match rule 0; rule 1 ignores.
  EXPECT_EQ(c.Resolve("core", "BM_Sort/1024", "cpu_time"),
            (ResolvedThreshold{kDefaultThresholdPercent, kDefaultAlpha, std::nullopt, false, -1}));
  EXPECT_TRUE(c.Resolve("core", "BM_NoisyAlloc", "real_time").ignore);
  EXPECT_EQ(c.Resolve("core", "BM_NoisyAlloc", "real_time").rule, 1);
  // Rule 2 sets only the direction: the percent is the default, not rule 4's.
  EXPECT_EQ(c.Resolve("core", "BM_Ax", "items_per_second"),
            (ResolvedThreshold{kDefaultThresholdPercent, kDefaultAlpha, Direction::kHigherIsBetter,
                               false, 2}));
  EXPECT_EQ(c.Resolve("startup", "wall_time", "wall_time").alpha, 0.01);
  EXPECT_EQ(c.Resolve("core", "wall_time", "wall_time").rule, -1);  // suite glob fails
  EXPECT_EQ(c.Resolve("core", "BM_Bx", "real_time").percent, 7.5);
  EXPECT_EQ(c.Resolve("core", "BM_Cx", "real_time").rule, -1);
  EXPECT_TRUE(ThresholdRule{}.Matches("any", "BM_x/1", "real_time"));  // "*" and any suite
}

TEST(RunnerConfig, ARulesGateIsReadWhenGiven) {
  auto config = Parse(std::string(kMinimal) + R"(thresholds:
  - {metric: cpu_time, gate: true, percent: 8}
  - {metric: real_time, gate: false}
  - {benchmark: "BM_*"}
)");
  ASSERT_TRUE(config) << config.error().ToString();
  ASSERT_EQ(config->thresholds.size(), 3u);
  EXPECT_EQ(config->thresholds[0].gate, true);
  EXPECT_EQ(config->thresholds[0].percent, 8.0);
  EXPECT_EQ(config->thresholds[1].gate, false);
  EXPECT_EQ(config->thresholds[2].gate, std::nullopt);  // the default: judge::Gating
}

struct BadCase {
  const char* name;
  std::string yaml;
  std::string message;  // the whole message, or its start when `prefix_only`
  std::string field;
  bool prefix_only = false;
};

std::string Suites(const std::string& suite_lines) { return "version: 1\nsuites:\n" + suite_lines; }

TEST(RunnerConfig, RejectsBadInputWithPositionAndKey) {
  const std::string gb = "  - {name: a, type: gbench, binary: b}\n";
  const std::vector<BadCase> cases = {
      {"missing version", "suites: []\n",
       "perfgate.yaml:1:1: version: missing (add `version: 1` at the top)", "version"},
      {"empty file", "", "perfgate.yaml:1:1: version: missing", "version", true},
      {"version 2", "version: 2\n",
       "perfgate.yaml:1:10: version: unsupported version 2 (this perfgate reads version 1)",
       "version"},
      {"version not a number", "version: one\n",
       "perfgate.yaml:1:10: version: expected an integer, got \"one\"", "version"},
      {"unknown top key", Suites(gb) + "sutes: []\n",
       "perfgate.yaml:4:1: sutes: unknown key (allowed: version, server, target_branch, testbed, "
       "spool_dir, defaults, suites, thresholds, gate)",
       "sutes"},
      {"bad gate mode", Suites(gb) + "gate: {mode: sometimes}\n",
       "perfgate.yaml:4:14: gate.mode: must be unpaired, paired or auto, got \"sometimes\"",
       "gate.mode"},
      {"unknown gate key", Suites(gb) + "gate: {blocks: 9}\n",
       "perfgate.yaml:4:8: gate.blocks: unknown key (allowed: mode, block_repetitions, min_blocks, "
       "max_blocks, test, time_budget, baseline_cache, baseline_cache_entries, spending, "
       "interleave)",
       "gate.blocks"},
      {"bad spending", Suites(gb) + "gate: {spending: linear}\n",
       "perfgate.yaml:4:18: gate.spending: must be pocock, obf or bonferroni, got \"linear\"",
       "gate.spending"},
      {"max below min", Suites(gb) + "gate: {min_blocks: 9, max_blocks: 6}\n",
       "perfgate.yaml:4:35: gate.max_blocks: must be at least gate.min_blocks (9)",
       "gate.max_blocks"},
      {"bad gate test", Suites(gb) + "gate: {test: z}\n",
       "perfgate.yaml:4:14: gate.test: must be trimmed, t or wilcoxon, got \"z\"", "gate.test"},
      {"no repetition a block", Suites(gb) + "gate: {block_repetitions: 0}\n",
       "perfgate.yaml:4:27: gate.block_repetitions: must be in [1, 1000], got 0",
       "gate.block_repetitions", true},
      {"duplicate key", "version: 1\nversion: 1\n", "perfgate.yaml:2:1: version: duplicate key",
       "version"},
      {"document not a map", "- 1\n", "perfgate.yaml:1:1: must be a mapping of keys to values", ""},
      {"invalid yaml", "version: [1\n", "perfgate.yaml:2:1: invalid YAML: ", "", true},
      {"no suites", "version: 1\nsuites: []\n",
       "perfgate.yaml:2:1: suites: expected a list of at least one suite", "suites"},
      {"bad url scheme", Suites(gb) + "server: {url: ftp://x, project: p}\n",
       "perfgate.yaml:4:15: server.url: must be an http:// or https:// URL with a host, got "
       "\"ftp://x\"",
       "server.url"},
      {"url without host", Suites(gb) + "server: {url: 'https://', project: p}\n",
       "perfgate.yaml:4:", "server.url", true},
      {"server missing project", Suites(gb) + "server: {url: 'https://x'}\n",
       "perfgate.yaml:4:9: server: missing required key project", "server"},
      {"token in file", Suites(gb) + "server:\n  url: https://x\n  project: p\n  token: pgt_x\n",
       "perfgate.yaml:7:10: server.token: tokens do not belong in a file in the repository; set "
       "PERFGATE_TOKEN",
       "server.token"},
      {"bad project name", Suites(gb) + "server: {url: 'https://x', project: 'a/b'}\n",
       "perfgate.yaml:4:37: server.project: must be 1..200 characters", "server.project", true},
      {"bad testbed", Suites(gb) + "testbed: 'x y'\n", "perfgate.yaml:4:10: testbed: ", "testbed",
       true},
      {"bad target branch", Suites(gb) + "target_branch: 'a b'\n",
       "perfgate.yaml:4:16: target_branch: ", "target_branch", true},
      {"unknown suite key", Suites("  - {name: a, type: gbench, binary: b, filtr: x}\n"),
       "perfgate.yaml:3:40: suites[0].filtr: unknown key (allowed: name, type, build, "
       "repetitions, env, pass_env, timeout, binary, filter, min_time, args, command, warmup)",
       "suites[0].filtr"},
      {"gbench key on a command", Suites("  - {name: a, type: command, command: x, filter: y}\n"),
       "perfgate.yaml:3:42: suites[0].filter: not valid for type command (allowed: name, type, "
       "build, repetitions, env, pass_env, timeout, command, warmup)",
       "suites[0].filter"},
      {"bad type", Suites("  - {name: a, type: python, binary: b}\n"),
       "perfgate.yaml:3:21: suites[0].type: expected gbench, command or train, got \"python\"",
       "suites[0].type"},
      {"missing type", Suites("  - {name: a, binary: b}\n"),
       "perfgate.yaml:3:5: suites[0]: missing required key type", "suites[0]"},
      {"missing binary", Suites("  - {name: a, type: gbench}\n"),
       "perfgate.yaml:3:5: suites[0]: missing required key binary", "suites[0]"},
      {"missing command", Suites(gb + "  - {name: b, type: command}\n"),
       "perfgate.yaml:4:5: suites[1]: missing required key command", "suites[1]"},
      {"empty argv", Suites("  - {name: a, type: command, command: []}\n"),
       "perfgate.yaml:3:39: suites[0].command: the argv list needs a program as its first item",
       "suites[0].command"},
      {"bad suite name", Suites("  - {name: 'a b', type: gbench, binary: b}\n"),
       "perfgate.yaml:3:12: suites[0].name: must be 1..200 characters from [A-Za-z0-9_.-], got "
       "\"a b\"",
       "suites[0].name"},
      {"duplicate suite", Suites(gb + gb),
       "perfgate.yaml:4:5: suites[1].name: duplicate suite name \"a\" (also on line 3)",
       "suites[1].name"},
      {"repetitions too small", Suites("  - {name: a, type: gbench, binary: b, repetitions: 1}\n"),
       "perfgate.yaml:3:53: suites[0].repetitions: must be in [2, 10000], got 1",
       "suites[0].repetitions"},
      {"repetitions too large", "version: 1\ndefaults: {repetitions: 10001}\n",
       "perfgate.yaml:2:25: defaults.repetitions: must be in [2, 10000], got 10001",
       "defaults.repetitions"},
      {"repetitions a list", Suites("  - {name: a, type: gbench, binary: b, repetitions: [3]}\n"),
       "perfgate.yaml:3:53: suites[0].repetitions: expected a single value",
       "suites[0].repetitions"},
      {"repetitions empty",
       Suites("  - name: a\n    type: gbench\n    binary: b\n    repetitions:\n"),
       "perfgate.yaml:6:5: suites[0].repetitions: has no value", "suites[0].repetitions"},
      {"min_time zero", Suites("  - {name: a, type: gbench, binary: b, min_time: 0}\n"),
       "perfgate.yaml:3:50: suites[0].min_time: must be in (0, 3600], got 0", "suites[0].min_time"},
      {"timeout negative", Suites("  - {name: a, type: gbench, binary: b, timeout: -5}\n"),
       "perfgate.yaml:3:49: suites[0].timeout: must be in [1, 604800], got -5",
       "suites[0].timeout"},
      {"args not a list", Suites("  - {name: a, type: gbench, binary: b, args: --x}\n"),
       "perfgate.yaml:3:46: suites[0].args: expected a list of strings", "suites[0].args"},
      {"command key on a gbench", Suites("  - {name: a, type: gbench, binary: b, warmup: 2}\n"),
       "perfgate.yaml:3:40: suites[0].warmup: not valid for type gbench (allowed: name, type, "
       "build, repetitions, env, pass_env, timeout, binary, filter, min_time, args)",
       "suites[0].warmup"},
      {"env value missing", Suites("  - {name: a, type: gbench, binary: b, env: {X: }}\n"),
       "perfgate.yaml:3:46: suites[0].env.X: has no value", "suites[0].env.X"},
      {"only comments", "# nothing yet\n", "perfgate.yaml:1:1: version: missing", "version", true},
      {"bad env name", Suites("  - {name: a, type: gbench, binary: b, env: {1X: y}}\n"),
       "perfgate.yaml:3:46: suites[0].env: bad variable name \"1X\"", "suites[0].env"},
      {"percent zero", Suites(gb) + "thresholds:\n  - {percent: 0}\n",
       "perfgate.yaml:5:15: thresholds[0].percent: must be in (0, 100], got 0",
       "thresholds[0].percent"},
      {"percent above 100", Suites(gb) + "thresholds:\n  - {percent: 100.5}\n",
       "perfgate.yaml:5:15: thresholds[0].percent: must be in (0, 100], got 100.5",
       "thresholds[0].percent"},
      {"percent not a number", Suites(gb) + "thresholds:\n  - {percent: 5%}\n",
       "perfgate.yaml:5:15: thresholds[0].percent: expected a number, got \"5%\"",
       "thresholds[0].percent"},
      {"alpha too large", Suites(gb) + "thresholds:\n  - {alpha: 0.6}\n",
       "perfgate.yaml:5:13: thresholds[0].alpha: must be in (0, 0.5], got 0.6",
       "thresholds[0].alpha"},
      {"alpha zero", Suites(gb) + "thresholds:\n  - {alpha: 0}\n",
       "perfgate.yaml:5:13: thresholds[0].alpha: must be in (0, 0.5], got 0",
       "thresholds[0].alpha"},
      {"bad direction", Suites(gb) + "thresholds:\n  - {direction: up}\n",
       "perfgate.yaml:5:17: thresholds[0].direction: expected lower or higher, got \"up\"",
       "thresholds[0].direction"},
      {"bad ignore", Suites(gb) + "thresholds:\n  - {ignore: yes}\n",
       "perfgate.yaml:5:14: thresholds[0].ignore: expected true or false, got \"yes\"",
       "thresholds[0].ignore"},
      {"ignore with percent", Suites(gb) + "thresholds:\n  - {ignore: true, percent: 3}\n",
       "perfgate.yaml:5:14: thresholds[0].ignore: an ignored benchmark takes no percent, alpha or "
       "direction",
       "thresholds[0].ignore"},
      {"bad gate", Suites(gb) + "thresholds:\n  - {gate: maybe}\n",
       "perfgate.yaml:5:12: thresholds[0].gate: expected true or false, got \"maybe\"",
       "thresholds[0].gate"},
      {"gate with ignore", Suites(gb) + "thresholds:\n  - {ignore: true, gate: true}\n",
       "perfgate.yaml:5:26: thresholds[0].gate: an ignored benchmark is neither gated nor "
       "reported: drop gate or ignore",
       "thresholds[0].gate"},
      {"unknown threshold key", Suites(gb) + "thresholds:\n  - {benchmark: x, pct: 3}\n",
       "perfgate.yaml:5:20: thresholds[0].pct: unknown key (allowed: suite, benchmark, metric, "
       "percent, alpha, direction, ignore, gate)",
       "thresholds[0].pct"},
      {"threshold for an unknown suite", Suites(gb) + "thresholds:\n  - {suite: b, percent: 3}\n",
       "perfgate.yaml:5:13: thresholds[0].suite: no suite named \"b\" (suites: a)",
       "thresholds[0].suite"},
      {"unreachable rule", Suites(gb) + "thresholds:\n  - {percent: 4}\n  - {benchmark: x}\n",
       "perfgate.yaml:6:5: thresholds[1]: unreachable: the rule on line 5 already matches every "
       "benchmark and metric (first match wins)",
       "thresholds[1]"},
      {"thresholds not a list", Suites(gb) + "thresholds: {percent: 3}\n",
       "perfgate.yaml:4:13: thresholds: expected a list", "thresholds"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto config = Parse(c.yaml);
    ASSERT_FALSE(config) << c.yaml;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument);
    if (c.prefix_only) {
      EXPECT_EQ(config.error().message.rfind(c.message, 0), 0u) << config.error().message;
    } else {
      EXPECT_EQ(config.error().message, c.message);
    }
    EXPECT_EQ(config.error().field, c.field);
  }
}

}  // namespace
}  // namespace perfgate::config
