// SPDX-License-Identifier: Apache-2.0
#include "config/runner_config.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <utility>

#include "config/secret_env.h"
#include "config/yaml_reader.h"

namespace perfwarden::config {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 9> kTopKeys = {"version", "server",     "target_branch",
                                                      "testbed", "spool_dir",  "defaults",
                                                      "suites",  "thresholds", "gate"};
constexpr std::array<std::string_view, 10> kGateKeys = {
    "mode",           "block_repetitions",      "min_blocks", "max_blocks", "test", "time_budget",
    "baseline_cache", "baseline_cache_entries", "spending",   "interleave"};
constexpr std::array<std::string_view, 3> kServerKeys = {"url", "project", "token"};
constexpr std::array<std::string_view, 2> kDefaultsKeys = {"repetitions", "min_time"};
constexpr std::array<std::string_view, 7> kSuiteCommonKeys = {
    "name", "type", "build", "repetitions", "env", "pass_env", "timeout"};
constexpr std::array<std::string_view, 4> kGbenchKeys = {"binary", "filter", "min_time", "args"};
constexpr std::array<std::string_view, 2> kCommandKeys = {"command", "warmup"};
constexpr std::array<std::string_view, 1> kTrainKeys = {"command"};
constexpr std::array<std::string_view, 13> kSuiteKeys = {
    "name",   "type",   "build",    "repetitions", "env",     "pass_env", "timeout",
    "binary", "filter", "min_time", "args",        "command", "warmup"};
constexpr std::array<std::string_view, 8> kThresholdKeys = {
    "suite", "benchmark", "metric", "percent", "alpha", "direction", "ignore", "gate"};

// Branch names as the wire format accepts them (git's "feature/x" included).
bool IsBranchName(std::string_view text) {
  return !text.empty() && text.size() <= kMaxNameLength &&
         std::all_of(text.begin(), text.end(), [](char c) { return IsNameChar(c) || c == '/'; });
}

bool IsEnvName(std::string_view text) {
  return !text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) == 0 &&
         std::all_of(text.begin(), text.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
         });
}

bool HasGlob(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

fs::path ResolvePath(const fs::path& base_dir, const std::string& text) {
  const fs::path path(text);
  return (path.is_absolute() ? path : base_dir / path).lexically_normal();
}

std::string HostName() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return "unknown-host";
  std::string name(buffer.data());
  // A host name is already close to a testbed name; map anything else rather than fail.
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !IsNameChar(c); }, '-');
  return IsName(name) ? name : "unknown-host";
}

// "x86_64", "aarch64" (uname -m).
std::string MachineName() {
  utsname names{};
  if (uname(&names) != 0) return "unknown";
  std::string machine(names.machine);
  std::replace_if(
      machine.begin(), machine.end(), [](char c) { return !IsNameChar(c); }, '-');
  return machine.empty() ? "unknown" : machine;
}

void ReadServer(YamlReader& r, const Entry& e, RunnerConfig& config) {
  const Map server = r.ReadMap(e.value, e.key.Mark(), "server", kServerKeys);
  if (const Entry* token = server.Find("token"); token != nullptr) {
    r.Fail(*token, "server.token",
           "tokens do not belong in a file in the repository; set PERFWARDEN_TOKEN");
  }
  r.Require(server, "url");
  r.Require(server, "project");
  std::string url;
  if (r.Text(server, "url", &url)) {
    const std::size_t host = url.find("://") + 3;
    if (!(url.starts_with("http://") || url.starts_with("https://")) || host >= url.size() ||
        url[host] == '/' || url.find_first_of(" \t") != std::string::npos) {
      r.Fail(*server.Find("url"), "server.url",
             "must be an http:// or https:// URL with a host, got \"" + url + "\"");
    }
    while (url.ends_with('/')) url.pop_back();
    config.server.url = url;
  }
  r.Text(server, "project", &config.server.project, Check::kName);
}

void ReadGate(YamlReader& r, const Entry& e, const fs::path& base_dir, GateSettings& gate) {
  const Map map = r.ReadMap(e.value, e.key.Mark(), "gate", kGateKeys);
  if (std::string mode; r.Text(map, "mode", &mode)) {
    if (auto parsed = ParseGateMode(mode)) {
      gate.mode = *parsed;
    } else {
      r.Fail(*map.Find("mode"), "gate.mode",
             "must be unpaired, paired or auto, got \"" + mode + "\"");
    }
  }
  r.Integer(map, "block_repetitions", 1, 1000, &gate.block_repetitions);
  r.Integer(map, "min_blocks", 3, 1000, &gate.min_blocks);
  r.Integer(map, "max_blocks", 3, 10000, &gate.max_blocks);
  if (r.ok() && gate.max_blocks < gate.min_blocks) {
    r.Fail(*map.Find(map.Find("max_blocks") != nullptr ? "max_blocks" : "min_blocks"),
           "gate.max_blocks",
           "must be at least gate.min_blocks (" + std::to_string(gate.min_blocks) + ")");
  }
  if (r.Text(map, "test", &gate.test) && gate.test != "t" && gate.test != "wilcoxon" &&
      gate.test != "trimmed") {
    r.Fail(*map.Find("test"), "gate.test",
           "must be trimmed, t or wilcoxon, got \"" + gate.test + "\"");
  }
  if (r.Text(map, "spending", &gate.spending) && gate.spending != "pocock" &&
      gate.spending != "obf" && gate.spending != "bonferroni") {
    r.Fail(*map.Find("spending"), "gate.spending",
           "must be pocock, obf or bonferroni, got \"" + gate.spending + "\"");
  }
  if (r.Text(map, "interleave", &gate.interleave) && gate.interleave != "suite" &&
      gate.interleave != "benchmark" && gate.interleave != "repetition") {
    r.Fail(*map.Find("interleave"), "gate.interleave",
           "must be suite, benchmark or repetition, got \"" + gate.interleave + "\"");
  }
  r.Integer(map, "time_budget", 0, 7 * 24 * 3600, &gate.time_budget_s);
  if (std::string dir; r.Text(map, "baseline_cache", &dir)) {
    if (dir.empty()) {
      r.Fail(*map.Find("baseline_cache"), "gate.baseline_cache",
             "must be a directory; `baseline_cache_entries: 0` turns the cache off");
    } else {
      gate.baseline_cache = ResolvePath(base_dir, dir);
    }
  }
  r.Integer(map, "baseline_cache_entries", 0, 1000, &gate.baseline_cache_entries);
}

// pass_env: names of the runner's environment that the suite's processes get although they
// look secret; a credential is refused rather than ignored, so that nobody counts on it.
void ReadPassEnv(YamlReader& r, const Map& map, Suite& suite) {
  const Entry* entry = map.Find("pass_env");
  if (entry == nullptr) return;
  r.StringList(map, "pass_env", &suite.pass_env);
  for (std::size_t i = 0; i < suite.pass_env.size() && r.ok(); ++i) {
    const std::string& name = suite.pass_env[i];
    const YAML::Mark mark = entry->value[i].Mark();
    const std::string path = map.Path("pass_env") + "[" + std::to_string(i) + "]";
    if (!IsEnvName(name)) {
      r.Fail(mark, path, "bad variable name \"" + name + "\"");
    } else if (ClassifyEnv(name) == SecretEnv::kCredential) {
      r.Fail(mark, path,
             name +
                 " is perfwarden's or the CI job's credential and never reaches a suite (a "
                 "suite that needs its value: have the job export it under another name, "
                 "and pass that one)");
    } else if (suite.env.count(name) != 0) {
      r.Fail(mark, path, name + " is set by env too: keep one");
    }
  }
}

void ReadSuite(YamlReader& r, const YAML::Node& node, std::string path, const RunnerConfig& config,
               Suite& suite) {
  const Map map = r.ReadMap(node, node.Mark(), std::move(path), kSuiteKeys);
  suite.line = map.mark.line + 1;
  r.Require(map, "name");
  r.Require(map, "type");
  r.Text(map, "name", &suite.name, Check::kName);
  std::string type;
  if (r.Text(map, "type", &type) && type != "gbench" && type != "command" && type != "train") {
    return r.Fail(*map.Find("type"), map.Path("type"),
                  "expected gbench, command or train, got \"" + type + "\"");
  }
  if (!r.ok()) return;
  suite.type = type == "command" ? SuiteType::kCommand
               : type == "train" ? SuiteType::kTrain
                                 : SuiteType::kGbench;
  const bool gbench = suite.type == SuiteType::kGbench;
  const bool train = suite.type == SuiteType::kTrain;
  const Keys own = gbench ? Keys(kGbenchKeys) : train ? Keys(kTrainKeys) : Keys(kCommandKeys);
  for (const auto& [key, entry] : map.entries) {
    if (!Contains(kSuiteCommonKeys, key) && !Contains(own, key)) {
      r.Fail(entry.key.Mark(), map.Path(key),
             "not valid for type " + type + " (allowed: " + JoinKeys(kSuiteCommonKeys) + ", " +
                 JoinKeys(own) + ")");
    }
  }
  r.Require(map, gbench ? "binary" : "command");
  suite.min_time = config.default_min_time;
  r.Text(map, "build", &suite.build, Check::kNonEmpty);
  // A training run's samples are its steps, so one run is a measurement; more runs pool them.
  suite.repetitions = train ? 1 : config.default_repetitions;
  r.Integer(map, "repetitions", train ? 1 : 2, 10000, &suite.repetitions);
  r.Integer(map, "timeout", 1, 604800, &suite.timeout_s);
  if (map.Find("env") != nullptr) {
    // Variable names are not a closed set: any key, each checked here.
    const Map env =
        r.ReadMap(map.Find("env")->value, map.Find("env")->key.Mark(), map.Path("env"), {});
    for (const auto& [name, entry] : env.entries) {
      if (!IsEnvName(name))
        r.Fail(entry.key.Mark(), env.path, "bad variable name \"" + name + "\"");
      r.Text(env, name, &suite.env[name]);
    }
  }
  ReadPassEnv(r, map, suite);
  std::string binary;
  if (r.Text(map, "binary", &binary, Check::kNonEmpty)) {
    suite.binary = ResolvePath(config.base_dir, binary);
  }
  r.Text(map, "filter", &suite.filter);
  r.Positive(map, "min_time", 0, 3600, &suite.min_time);
  r.StringList(map, "args", &suite.args);
  r.Integer(map, "warmup", 0, 1000, &suite.warmup);
  const Entry* command = map.Find("command");
  if (command == nullptr || !r.ok()) return;
  if (command->value.IsSequence()) {
    r.StringList(map, "command", &suite.command);
    if (suite.command.empty() || suite.command[0].empty()) {
      r.Fail(*command, map.Path("command"), "the argv list needs a program as its first item");
    }
  } else if (std::string text; r.Text(map, "command", &text, Check::kNonEmpty)) {
    suite.command = {"/bin/sh", "-c", text};
    suite.command_uses_shell = true;
  }
}

// Returns the line the rule was declared on, for messages.
int ReadThreshold(YamlReader& r, const YAML::Node& node, std::string path,
                  const RunnerConfig& config, ThresholdRule& rule) {
  const Map map = r.ReadMap(node, node.Mark(), std::move(path), kThresholdKeys);
  if (r.Text(map, "suite", &rule.suite, Check::kNonEmpty) && !HasGlob(rule.suite) &&
      config.FindSuite(rule.suite) == nullptr) {
    std::string names;
    for (const Suite& suite : config.suites) names += (names.empty() ? "" : ", ") + suite.name;
    r.Fail(*map.Find("suite"), map.Path("suite"),
           "no suite named \"" + rule.suite + "\" (suites: " + names + ")");
  }
  r.Text(map, "benchmark", &rule.benchmark, Check::kNonEmpty);
  r.Text(map, "metric", &rule.metric, Check::kNonEmpty);
  std::optional<double> percent, alpha;
  r.Positive(map, "percent", 0, 100, &percent);
  r.Positive(map, "alpha", 0, 0.5, &alpha);
  rule.percent = percent;
  rule.alpha = alpha;
  if (std::string text; r.Text(map, "direction", &text)) {
    rule.direction = ParseDirection(text);
    if (!rule.direction) {
      r.Fail(*map.Find("direction"), map.Path("direction"),
             "expected lower or higher, got \"" + text + "\"");
    }
  }
  r.Bool(map, "ignore", &rule.ignore);
  if (rule.ignore && (percent || alpha || rule.direction)) {
    r.Fail(*map.Find("ignore"), map.Path("ignore"),
           "an ignored benchmark takes no percent, alpha or direction");
  }
  if (map.Find("gate") != nullptr) {
    bool gate = false;
    r.Bool(map, "gate", &gate);
    rule.gate = gate;
    if (rule.ignore && r.ok()) {
      r.Fail(*map.Find("gate"), map.Path("gate"),
             "an ignored benchmark is neither gated nor reported: drop gate or ignore");
    }
  }
  return map.mark.line + 1;
}

bool MatchesEverything(const ThresholdRule& rule) {
  return (rule.suite.empty() || rule.suite == "*") && rule.benchmark == "*" && rule.metric == "*";
}

// Reads a list of mappings with `read`, "suites[i]" / "thresholds[i]" being each one's path.
template <class T, class ReadOne>
void ReadList(YamlReader& r, const Map& top, std::string_view key, std::vector<T>* out,
              const ReadOne& read) {
  const Entry* e = top.Find(key);
  if (e == nullptr || !r.ok()) return;
  if (!e->value.IsSequence()) return r.Fail(*e, std::string(key), "expected a list");
  out->resize(e->value.size());
  for (std::size_t i = 0; i < out->size() && r.ok(); ++i) {
    read(e->value[i], std::string(key) + "[" + std::to_string(i) + "]", i);
  }
}

void ReadDocument(YamlReader& r, const YAML::Node& root, const EnvLookup& env,
                  RunnerConfig& config) {
  if (!root.IsDefined() || root.IsNull()) {  // an empty or all-comments file
    return r.Fail(YAML::Mark(), "version", "missing (add `version: 1` at the top)");
  }
  const Map top = r.ReadMap(root, YAML::Mark(), "", kTopKeys);
  if (r.ok() && top.Find("version") == nullptr) {
    return r.Fail(top.mark, "version", "missing (add `version: 1` at the top)");
  }
  r.Integer(top, "version", 0, 1000000, &config.version);
  if (r.ok() && config.version != 1) {
    return r.Fail(*top.Find("version"), "version",
                  "unsupported version " + std::to_string(config.version) +
                      " (this perfwarden reads version 1)");
  }
  if (const Entry* server = top.Find("server"); server != nullptr) ReadServer(r, *server, config);
  if (r.Text(top, "target_branch", &config.target_branch) && !IsBranchName(config.target_branch)) {
    r.Fail(*top.Find("target_branch"), "target_branch",
           "must be 1..200 characters from [A-Za-z0-9_./-]");
  }
  r.Text(top, "testbed", &config.testbed, Check::kName);
  std::string spool = ".perfwarden/spool";
  r.Text(top, "spool_dir", &spool, Check::kNonEmpty);
  config.spool_dir = ResolvePath(config.base_dir, spool);
  if (const Entry* defaults = top.Find("defaults"); defaults != nullptr) {
    const Map map = r.ReadMap(defaults->value, defaults->key.Mark(), "defaults", kDefaultsKeys);
    r.Integer(map, "repetitions", 2, 10000, &config.default_repetitions);
    r.Positive(map, "min_time", 0, 3600, &config.default_min_time);
  }
  if (const Entry* gate = top.Find("gate"); gate != nullptr) {
    ReadGate(r, *gate, config.base_dir, config.gate);
  }
  const Entry* suites = top.Find("suites");
  if (r.ok() && (suites == nullptr || !suites->value.IsSequence() || suites->value.size() == 0)) {
    return r.Fail(suites != nullptr ? suites->key.Mark() : top.mark, "suites",
                  "expected a list of at least one suite");
  }
  ReadList(r, top, "suites", &config.suites,
           [&](const YAML::Node& node, std::string path, std::size_t i) {
             ReadSuite(r, node, path, config, config.suites[i]);
             for (std::size_t j = 0; j < i; ++j) {
               if (config.suites[j].name != config.suites[i].name) continue;
               r.Fail(node.Mark(), path + ".name",
                      "duplicate suite name \"" + config.suites[i].name + "\" (also on line " +
                          std::to_string(config.suites[j].line) + ")");
             }
           });
  std::vector<int> threshold_lines;
  ReadList(r, top, "thresholds", &config.thresholds,
           [&](const YAML::Node& node, std::string path, std::size_t i) {
             threshold_lines.resize(i + 1);
             threshold_lines[i] = ReadThreshold(r, node, path, config, config.thresholds[i]);
             if (i > 0 && MatchesEverything(config.thresholds[i - 1])) {
               r.Fail(node.Mark(), path,
                      "unreachable: the rule on line " + std::to_string(threshold_lines[i - 1]) +
                          " already matches every benchmark and metric (first match wins)");
             }
           });
  if (!r.ok()) return;
  if (env) {
    if (auto token = env("PERFWARDEN_TOKEN"); token && !token->empty())
      config.server.token = *token;
    if (auto testbed = env("PERFWARDEN_TESTBED"); testbed && !testbed->empty()) {
      if (!IsName(*testbed)) {
        return r.FailWithoutPosition("testbed",
                                     "environment variable PERFWARDEN_TESTBED: must be 1..200 "
                                     "characters from [A-Za-z0-9_.-], got \"" +
                                         *testbed + "\"");
      }
      config.testbed = *testbed;
    }
    // A directory named in the job's environment is the job's, so relative to where it runs.
    if (auto cache = env("PERFWARDEN_BASELINE_CACHE"); cache && !cache->empty()) {
      std::error_code ec;
      config.gate.baseline_cache = fs::absolute(*cache, ec).lexically_normal();
    }
  }
  if (config.testbed.empty()) {
    // CI runners are usually ephemeral VMs with a new host name per job: one name for them all
    // (the fingerprint still tells CPU models and kernels apart).
    const auto ci = env ? env("CI") : std::nullopt;
    const bool in_ci = ci && !ci->empty() && *ci != "false" && *ci != "0";
    config.testbed = in_ci ? "ci-" + MachineName() : HostName();
  }
}

}  // namespace

std::string_view GateModeName(GateMode mode) {
  return mode == GateMode::kPaired ? "paired" : mode == GateMode::kAuto ? "auto" : "unpaired";
}

std::optional<GateMode> ParseGateMode(std::string_view text) {
  for (GateMode mode : {GateMode::kUnpaired, GateMode::kPaired, GateMode::kAuto}) {
    if (text == GateModeName(mode)) return mode;
  }
  return std::nullopt;
}

std::string_view SuiteTypeName(SuiteType type) {
  return type == SuiteType::kCommand ? "command" : type == SuiteType::kTrain ? "train" : "gbench";
}

const Suite* RunnerConfig::FindSuite(std::string_view name) const {
  for (const Suite& suite : suites) {
    if (suite.name == name) return &suite;
  }
  return nullptr;
}

ResolvedThreshold RunnerConfig::Resolve(std::string_view suite, std::string_view benchmark,
                                        std::string_view metric) const {
  ResolvedThreshold resolved;
  const ThresholdRule* rule = FirstMatch(thresholds, suite, benchmark, metric);
  if (rule == nullptr) return resolved;
  resolved.percent = rule->percent.value_or(0) > 0 ? *rule->percent : kDefaultThresholdPercent;
  resolved.alpha = rule->alpha.value_or(0) > 0 ? *rule->alpha : kDefaultAlpha;
  resolved.direction = rule->direction;
  resolved.ignore = rule->ignore;
  resolved.rule = static_cast<int>(rule - thresholds.data());
  return resolved;
}

Result<RunnerConfig> ParseRunnerConfig(std::string_view yaml, std::string_view source_name,
                                       const std::filesystem::path& base_dir,
                                       const EnvLookup& env) {
  YamlReader reader(source_name, Position::kLineColumn);
  RunnerConfig config;
  std::error_code ec;
  config.base_dir = base_dir.empty() ? fs::current_path(ec) : fs::absolute(base_dir, ec);
  config.base_dir = config.base_dir.lexically_normal();
  if (std::optional<YAML::Node> root = reader.Load(yaml); root) {
    try {
      ReadDocument(reader, *root, env, config);
    } catch (const YAML::Exception& e) {
      reader.Fail(e.mark, "", "invalid YAML: " + e.msg);
    }
  }
  if (!reader.ok()) return tl::unexpected(reader.error());
  return config;
}

Result<RunnerConfig> LoadRunnerConfig(const std::string& path, const EnvLookup& env) {
  auto text = ReadConfigFile(path);
  if (!text) return tl::unexpected(text.error());
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  auto config = ParseRunnerConfig(*text, path, absolute.parent_path(), env);
  if (config) config->config_file = absolute.lexically_normal();
  return config;
}

Result<RunnerConfig> LoadRunnerConfig(const std::string& path) {
  return LoadRunnerConfig(path, ProcessEnvironment());
}

}  // namespace perfwarden::config
