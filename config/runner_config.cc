#include "config/runner_config.h"

#include <sys/utsname.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <span>
#include <sstream>
#include <utility>

namespace perfgate::config {
namespace {

namespace fs = std::filesystem;
using Keys = std::span<const std::string_view>;

constexpr std::size_t kMaxNameLength = 200;  // the wire format's limit for names

constexpr std::array<std::string_view, 8> kTopKeys = {"version", "server",    "target_branch",
                                                      "testbed", "spool_dir", "defaults",
                                                      "suites",  "thresholds"};
constexpr std::array<std::string_view, 3> kServerKeys = {"url", "project", "token"};
constexpr std::array<std::string_view, 2> kDefaultsKeys = {"repetitions", "min_time"};
constexpr std::array<std::string_view, 6> kSuiteCommonKeys = {"name",        "type", "build",
                                                              "repetitions", "env",  "timeout"};
constexpr std::array<std::string_view, 4> kGbenchKeys = {"binary", "filter", "min_time", "args"};
constexpr std::array<std::string_view, 2> kCommandKeys = {"command", "warmup"};
constexpr std::array<std::string_view, 1> kTrainKeys = {"command"};
constexpr std::array<std::string_view, 12> kSuiteKeys = {
    "name",   "type",   "build",    "repetitions", "env",     "timeout",
    "binary", "filter", "min_time", "args",        "command", "warmup"};
constexpr std::array<std::string_view, 7> kThresholdKeys = {
    "suite", "benchmark", "metric", "percent", "alpha", "direction", "ignore"};

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
}

// Suite, project and testbed names: path segments and series keys, so a closed alphabet.
bool IsName(std::string_view text) {
  return !text.empty() && text.size() <= kMaxNameLength &&
         std::all_of(text.begin(), text.end(), IsNameChar);
}

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

std::string JoinKeys(Keys keys) {
  std::string out;
  for (std::string_view key : keys) out += (out.empty() ? "" : ", ") + std::string(key);
  return out;
}

bool Contains(Keys keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// One YAML mapping whose keys have been checked, with its path for messages.
struct Entry {
  YAML::Node key;  // carries the position when the value is empty
  YAML::Node value;
};
struct Map {
  std::string path;  // "" for the document, "suites[2]", ...
  YAML::Mark mark;
  std::map<std::string, Entry, std::less<>> entries;

  const Entry* Find(std::string_view key) const {
    auto it = entries.find(key);
    return it == entries.end() ? nullptr : &it->second;
  }
  std::string Path(std::string_view key) const {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
};

enum class Check { kAny, kNonEmpty, kName };

// Walks the document. The first problem is kept (later ones are usually consequences of it);
// afterwards the accessors change nothing, so parsing runs to the end without branching.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

  void Fail(const YAML::Mark& mark, const std::string& key, const std::string& message) {
    if (error_) return;
    std::string text(source_);
    if (!mark.is_null()) {
      text += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    text += ": ";
    if (!key.empty()) text += key + ": ";
    error_ = Error{ErrorCode::kInvalidArgument, text + message, key};
  }
  void Fail(const Entry& at, const std::string& key, const std::string& message) {
    Fail(at.value.IsNull() ? at.key.Mark() : at.value.Mark(), key, message);
  }
  // For values that did not come from the file.
  void FailWithoutPosition(const std::string& key, const std::string& message) {
    if (!error_) error_ = Error{ErrorCode::kInvalidArgument, message, key};
  }

  // The keys of a mapping; unknown and duplicate keys are errors that list the allowed ones
  // (every key is allowed when `allowed` is empty).
  Map ReadMap(const YAML::Node& node, const YAML::Mark& fallback, std::string path, Keys allowed) {
    Map map{std::move(path), node.IsNull() ? fallback : node.Mark(), {}};
    if (!node.IsMap()) {
      Fail(map.mark, map.path, "must be a mapping of keys to values");
      return map;
    }
    for (const auto& item : node) {
      const std::string name = item.first.IsScalar() ? item.first.Scalar() : std::string();
      if (name.empty()) {
        Fail(item.first.Mark(), map.path, "keys must be plain names");
      } else if (!allowed.empty() && !Contains(allowed, name)) {
        Fail(item.first.Mark(), map.Path(name), "unknown key (allowed: " + JoinKeys(allowed) + ")");
      } else if (!map.entries.emplace(name, Entry{item.first, item.second}).second) {
        Fail(item.first.Mark(), map.Path(name), "duplicate key");
      }
    }
    return map;
  }

  void Require(const Map& map, std::string_view key) {
    if (ok() && map.Find(key) == nullptr) {
      Fail(map.mark, map.path, "missing required key " + std::string(key));
    }
  }

  std::optional<std::string> Scalar(const Entry& e, const std::string& path) {
    if (!ok()) return std::nullopt;
    if (e.value.IsNull()) return Fail(e, path, "has no value"), std::nullopt;
    if (!e.value.IsScalar()) return Fail(e, path, "expected a single value"), std::nullopt;
    return e.value.Scalar();
  }

  // The accessors set *out only when the key is present and its value valid.
  bool Text(const Map& map, std::string_view key, std::string* out, Check check = Check::kAny) {
    const Entry* e = map.Find(key);
    if (e == nullptr) return false;
    std::optional<std::string> text = Scalar(*e, map.Path(key));
    if (!text) return false;
    if (check == Check::kNonEmpty && text->empty()) {
      return Fail(*e, map.Path(key), "must not be empty"), false;
    }
    if (check == Check::kName && !IsName(*text)) {
      return Fail(*e, map.Path(key), kNameRule + ", got \"" + *text + "\""), false;
    }
    *out = *std::move(text);
    return true;
  }

  template <class Int>
  void Integer(const Map& map, std::string_view key, std::int64_t min, std::int64_t max, Int* out) {
    std::string text;
    if (!Text(map, key, &text)) return;
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
      return Fail(*map.Find(key), map.Path(key), "expected an integer, got \"" + text + "\"");
    }
    if (value < min || value > max) {
      return Fail(
          *map.Find(key), map.Path(key),
          "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + text);
    }
    *out = static_cast<Int>(value);
  }

  // A number in (low, high]: every such quantity here excludes zero and allows its maximum.
  void Positive(const Map& map, std::string_view key, double low, double high,
                std::optional<double>* out) {
    std::string text;
    if (!Text(map, key, &text)) return;
    double value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
        !std::isfinite(value)) {
      return Fail(*map.Find(key), map.Path(key), "expected a number, got \"" + text + "\"");
    }
    if (!(value > low && value <= high)) {
      return Fail(*map.Find(key), map.Path(key),
                  "must be in (" + Number(low) + ", " + Number(high) + "], got " + text);
    }
    *out = value;
  }

  void Bool(const Map& map, std::string_view key, bool* out) {
    std::string text;
    if (!Text(map, key, &text)) return;
    if (text == "true" || text == "True" || text == "TRUE") {
      *out = true;
    } else if (text == "false" || text == "False" || text == "FALSE") {
      *out = false;
    } else {
      Fail(*map.Find(key), map.Path(key), "expected true or false, got \"" + text + "\"");
    }
  }

  void StringList(const Map& map, std::string_view key, std::vector<std::string>* out) {
    const Entry* e = map.Find(key);
    if (e == nullptr || !ok()) return;
    if (!e->value.IsSequence()) return Fail(*e, map.Path(key), "expected a list of strings");
    out->clear();
    for (std::size_t i = 0; i < e->value.size(); ++i) {
      const std::string path = map.Path(key) + "[" + std::to_string(i) + "]";
      out->push_back(Scalar(Entry{e->key, e->value[i]}, path).value_or(""));
    }
  }

 private:
  static inline const std::string kNameRule =
      "must be 1.." + std::to_string(kMaxNameLength) + " characters from [A-Za-z0-9_.-]";

  std::string_view source_;
  std::optional<Error> error_;
};

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

void ReadServer(Reader& r, const Entry& e, RunnerConfig& config) {
  const Map server = r.ReadMap(e.value, e.key.Mark(), "server", kServerKeys);
  if (const Entry* token = server.Find("token"); token != nullptr) {
    r.Fail(*token, "server.token",
           "tokens do not belong in a file in the repository; set PERFGATE_TOKEN");
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

void ReadSuite(Reader& r, const YAML::Node& node, std::string path, const RunnerConfig& config,
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
int ReadThreshold(Reader& r, const YAML::Node& node, std::string path, const RunnerConfig& config,
                  ThresholdRule& rule) {
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
  return map.mark.line + 1;
}

bool MatchesEverything(const ThresholdRule& rule) {
  return (rule.suite.empty() || rule.suite == "*") && rule.benchmark == "*" && rule.metric == "*";
}

// Reads a list of mappings with `read`, "suites[i]" / "thresholds[i]" being each one's path.
template <class T, class ReadOne>
void ReadList(Reader& r, const Map& top, std::string_view key, std::vector<T>* out,
              const ReadOne& read) {
  const Entry* e = top.Find(key);
  if (e == nullptr || !r.ok()) return;
  if (!e->value.IsSequence()) return r.Fail(*e, std::string(key), "expected a list");
  out->resize(e->value.size());
  for (std::size_t i = 0; i < out->size() && r.ok(); ++i) {
    read(e->value[i], std::string(key) + "[" + std::to_string(i) + "]", i);
  }
}

void ReadDocument(Reader& r, const YAML::Node& root, const EnvLookup& env, RunnerConfig& config) {
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
                      " (this perfgate reads version 1)");
  }
  if (const Entry* server = top.Find("server"); server != nullptr) ReadServer(r, *server, config);
  if (r.Text(top, "target_branch", &config.target_branch) && !IsBranchName(config.target_branch)) {
    r.Fail(*top.Find("target_branch"), "target_branch",
           "must be 1..200 characters from [A-Za-z0-9_./-]");
  }
  r.Text(top, "testbed", &config.testbed, Check::kName);
  std::string spool = ".perfgate/spool";
  r.Text(top, "spool_dir", &spool, Check::kNonEmpty);
  config.spool_dir = ResolvePath(config.base_dir, spool);
  if (const Entry* defaults = top.Find("defaults"); defaults != nullptr) {
    const Map map = r.ReadMap(defaults->value, defaults->key.Mark(), "defaults", kDefaultsKeys);
    r.Integer(map, "repetitions", 2, 10000, &config.default_repetitions);
    r.Positive(map, "min_time", 0, 3600, &config.default_min_time);
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
    if (auto token = env("PERFGATE_TOKEN"); token && !token->empty()) config.server.token = *token;
    if (auto testbed = env("PERFGATE_TESTBED"); testbed && !testbed->empty()) {
      if (!IsName(*testbed)) {
        return r.FailWithoutPosition("testbed",
                                     "environment variable PERFGATE_TESTBED: must be 1..200 "
                                     "characters from [A-Za-z0-9_.-], got \"" +
                                         *testbed + "\"");
      }
      config.testbed = *testbed;
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
  Reader reader(source_name);
  RunnerConfig config;
  std::error_code ec;
  config.base_dir = base_dir.empty() ? fs::current_path(ec) : fs::absolute(base_dir, ec);
  config.base_dir = config.base_dir.lexically_normal();
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    ReadDocument(reader, root, env, config);
  } catch (const YAML::Exception& e) {
    reader.Fail(e.mark, "", "invalid YAML: " + e.msg);
  }
  if (!reader.ok()) return tl::unexpected(reader.error());
  return config;
}

Result<RunnerConfig> LoadRunnerConfig(const std::string& path, const EnvLookup& env) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(path + ": cannot read the configuration file", "config");
  std::ostringstream text;
  text << in.rdbuf();
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  auto config = ParseRunnerConfig(text.str(), path, absolute.parent_path(), env);
  if (config) config->config_file = absolute.lexically_normal();
  return config;
}

Result<RunnerConfig> LoadRunnerConfig(const std::string& path) {
  return LoadRunnerConfig(path, ProcessEnvironment());
}

}  // namespace perfgate::config
