#include "config/server_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "config/logging.h"

namespace perfgate::config {
namespace {

// Setters report what is wrong with the value; callers prefix where it came from.
using Setter = Result<void> (*)(ServerConfig&, std::string_view);

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

Result<std::int64_t> ParseInteger(std::string_view text, std::int64_t min, std::int64_t max,
                                  std::string_view what) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument("expected " + std::string(what) + ", got " + Quoted(text));
  }
  if (value < min || value > max) {
    return InvalidArgument("must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                           "], got " + std::to_string(value));
  }
  return value;
}

// A byte count, optionally with a binary suffix (KiB, MiB, GiB), so that 32MiB reads as meant.
Result<std::int64_t> ParseByteSize(std::string_view text, std::int64_t min, std::int64_t max) {
  static constexpr std::array<std::pair<std::string_view, int>, 3> kSuffixes = {
      {{"KiB", 10}, {"MiB", 20}, {"GiB", 30}}};
  const std::string_view original = text;
  int shift = 0;
  for (const auto& [suffix, bits] : kSuffixes) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      text.remove_suffix(suffix.size());
      shift = bits;
      break;
    }
  }
  // The limits stay far below 2^33, so clamping before the shift cannot hide a bad value.
  auto number = ParseInteger(text, std::numeric_limits<std::int32_t>::min(),
                             std::numeric_limits<std::int64_t>::max(),
                             "a byte count (an integer, optionally with KiB, MiB or GiB)");
  if (!number) return tl::unexpected(number.error());
  const std::int64_t value =
      std::clamp<std::int64_t>(*number, -(std::int64_t{1} << 32), std::int64_t{1} << 32) *
      (std::int64_t{1} << shift);
  if (value < min || value > max) {
    return InvalidArgument("must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                           "] bytes, got " + std::string(original));
  }
  return value;
}

bool IsHostnameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-';
}

bool IsIpv6Char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
}

bool IsBase64UrlChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// Mirrors auth::IsWellFormedToken (config may not depend on server/auth); tokens_test checks
// that the two agree.
bool LooksLikeToken(std::string_view text) {
  return text.size() == 47 && text.starts_with("pgt_") &&
         std::all_of(text.begin() + 4, text.end(), IsBase64UrlChar);
}

Result<void> SetListen(ServerConfig& config, std::string_view text) {
  auto address = ParseListenAddress(text);
  if (!address) return tl::unexpected(address.error());
  config.listen = *std::move(address);
  return {};
}

Result<void> SetThreads(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, 1024, "an integer");
  if (!value) return tl::unexpected(value.error());
  config.threads = static_cast<int>(*value);
  return {};
}

Result<void> SetDatabaseUrl(ServerConfig& config, std::string_view text) {
  config.database_url = std::string(text);
  return {};
}

Result<void> SetDataDir(ServerConfig& config, std::string_view text) {
  if (text.empty()) return InvalidArgument("must not be empty");
  config.data_dir = std::string(text);
  return {};
}

Result<void> SetMigrationsDir(ServerConfig& config, std::string_view text) {
  config.migrations_dir = std::string(text);
  return {};
}

Result<void> SetWebRoot(ServerConfig& config, std::string_view text) {
  config.web_root = std::string(text);
  return {};
}

Result<void> SetBodyBytes(ServerConfig& config, std::string_view text) {
  auto value = ParseByteSize(text, 1, std::int64_t{1} << 30);
  if (!value) return tl::unexpected(value.error());
  config.limits.body_bytes = static_cast<std::size_t>(*value);
  return {};
}

Result<void> SetBaselineCacheBytes(ServerConfig& config, std::string_view text) {
  auto value = ParseByteSize(text, 0, std::int64_t{64} << 30);
  if (!value) return tl::unexpected(value.error());
  config.limits.baseline_cache_bytes = static_cast<std::size_t>(*value);
  return {};
}

Result<void> SetHeaderBytes(ServerConfig& config, std::string_view text) {
  auto value = ParseByteSize(text, 1024, std::int64_t{1} << 20);
  if (!value) return tl::unexpected(value.error());
  config.limits.header_bytes = static_cast<std::size_t>(*value);
  return {};
}

constexpr std::int64_t kMaxTimeoutMs = 3'600'000;

Result<void> SetReadTimeout(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, kMaxTimeoutMs, "an integer (milliseconds)");
  if (!value) return tl::unexpected(value.error());
  config.limits.read_timeout_ms = static_cast<int>(*value);
  return {};
}

Result<void> SetIdleTimeout(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, kMaxTimeoutMs, "an integer (milliseconds)");
  if (!value) return tl::unexpected(value.error());
  config.limits.idle_timeout_ms = static_cast<int>(*value);
  return {};
}

Result<void> SetStatementTimeout(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, kMaxTimeoutMs, "an integer (milliseconds)");
  if (!value) return tl::unexpected(value.error());
  config.limits.statement_timeout_ms = static_cast<int>(*value);
  return {};
}

Result<void> SetJsonDepth(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, 1000, "an integer");
  if (!value) return tl::unexpected(value.error());
  config.limits.json_depth = static_cast<int>(*value);
  return {};
}

Result<void> SetPoolSize(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, 1000, "an integer");
  if (!value) return tl::unexpected(value.error());
  config.pool_size = static_cast<int>(*value);
  return {};
}

Result<void> SetLogLevel(ServerConfig& config, std::string_view text) {
  auto level = ParseLogLevel(text);
  if (!level) return tl::unexpected(level.error());
  config.log.level = *level;
  return {};
}

Result<void> SetLogFormat(ServerConfig& config, std::string_view text) {
  auto format = ParseLogFormat(text);
  if (!format) return tl::unexpected(format.error());
  config.log.format = *format;
  return {};
}

Result<void> SetAdminToken(ServerConfig& config, std::string_view text) {
  // The value is never echoed: it is a secret.
  if (!text.empty() && !LooksLikeToken(text)) {
    return InvalidArgument(
        "must be a perfgate token: \"pgt_\" followed by 43 base64url characters");
  }
  config.admin_token = std::string(text);
  return {};
}

struct KeySetter {
  std::string_view key;
  Setter set;
};

constexpr std::array<KeySetter, 17> kKeys = {{
    {"listen", SetListen},
    {"threads", SetThreads},
    {"database_url", SetDatabaseUrl},
    {"data_dir", SetDataDir},
    {"migrations_dir", SetMigrationsDir},
    {"web_root", SetWebRoot},
    {"pool_size", SetPoolSize},
    {"limits.body_bytes", SetBodyBytes},
    {"limits.header_bytes", SetHeaderBytes},
    {"limits.read_timeout_ms", SetReadTimeout},
    {"limits.idle_timeout_ms", SetIdleTimeout},
    {"limits.statement_timeout_ms", SetStatementTimeout},
    {"limits.json_depth", SetJsonDepth},
    {"limits.baseline_cache_bytes", SetBaselineCacheBytes},
    {"log.level", SetLogLevel},
    {"log.format", SetLogFormat},
    {"admin_token", SetAdminToken},
}};

constexpr std::array<std::string_view, 3> kSections = {"limits", "log", "history"};

bool IsHistoryKey(std::string_view key) {
  return std::find(kHistoryKeys.begin(), kHistoryKeys.end(), key) != kHistoryKeys.end();
}

const KeySetter* FindKey(std::string_view key) {
  for (const auto& entry : kKeys) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

constexpr std::array<EnvironmentVariable, 8> kEnvironment = {{
    {"PERFGATE_LISTEN", "listen"},
    {"PERFGATE_THREADS", "threads"},
    {"PERFGATE_DATABASE_URL", "database_url"},
    {"PERFGATE_DATA_DIR", "data_dir"},
    {"PERFGATE_LOG_LEVEL", "log.level"},
    {"PERFGATE_LOG_FORMAT", "log.format"},
    {"PERFGATE_ADMIN_TOKEN", "admin_token"},
    {"PERFGATE_HISTORY_WEBHOOK_URL", "history.webhook_url"},
}};

// Walks the YAML document; everything it reports carries "SOURCE:LINE: KEY: ".
class YamlReader {
 public:
  YamlReader(std::string_view source, ServerConfig& config) : source_(source), config_(config) {}

  Result<void> ReadMap(const YAML::Node& map, const std::string& prefix, int line) {
    if (!map.IsMap()) {
      return Fail(line, prefix.empty() ? "(document)" : prefix,
                  prefix.empty() ? "the document must be a mapping of keys to values"
                                 : "must be a mapping of keys to values");
    }
    for (const auto& entry : map) {
      const YAML::Node& key_node = entry.first;
      const YAML::Node& value = entry.second;
      const int key_line = LineOf(key_node, line);
      if (!key_node.IsScalar()) return Fail(key_line, prefix, "keys must be plain names");
      const std::string key = prefix.empty() ? key_node.Scalar() : prefix + "." + key_node.Scalar();
      if (!seen_.insert(key).second) return Fail(key_line, key, "duplicate key");
      // yaml-cpp marks an empty value where the scanner stopped (often the next line).
      const int value_line = value.IsNull() ? key_line : LineOf(value, key_line);

      if (prefix.empty() && std::find(kSections.begin(), kSections.end(), key) != kSections.end()) {
        if (value.IsNull()) continue;  // "limits:" with everything commented out
        if (auto nested = ReadMap(value, key, value_line); !nested) return nested;
        continue;
      }
      const KeySetter* setter = FindKey(key);
      const bool history = IsHistoryKey(key);
      if (setter == nullptr && !history) return Fail(key_line, key, UnknownKeyMessage(prefix));
      if (value.IsNull()) {
        return Fail(value_line, key, "has no value (remove the key to keep the default)");
      }
      std::string text;
      if (key == "history.branches" && value.IsSequence()) {
        for (const auto& item : value) {
          if (!item.IsScalar()) return Fail(value_line, key, "expected a list of branch names");
          text += (text.empty() ? "" : ",") + item.Scalar();
        }
      } else if (!value.IsScalar()) {
        return Fail(value_line, key, "expected a single value");
      } else {
        text = value.Scalar();
      }
      auto set = history ? SetHistoryKey(config_.history, key, text) : setter->set(config_, text);
      if (!set) return Fail(value_line, key, set.error().message);
    }
    return {};
  }

  tl::unexpected<Error> Fail(int line, const std::string& key, const std::string& message) const {
    std::string text = std::string(source_);
    if (line > 0) text += ":" + std::to_string(line);
    text += ": ";
    if (!key.empty()) text += key + ": ";
    return InvalidArgument(text + message, key);
  }

 private:
  static int LineOf(const YAML::Node& node, int fallback) {
    const int line = node.Mark().line;
    return line >= 0 ? line + 1 : fallback;
  }

  // Lists the keys valid at this level, so that a typo is easy to fix.
  static std::string UnknownKeyMessage(const std::string& prefix) {
    std::vector<std::string_view> known;
    for (std::string_view key : ConfigKeys()) {
      if (!prefix.empty()) {
        if (!key.starts_with(prefix + ".")) continue;
        key.remove_prefix(prefix.size() + 1);
      } else {
        key = key.substr(0, key.find('.'));
      }
      if (std::find(known.begin(), known.end(), key) == known.end()) known.push_back(key);
    }
    std::string list;
    for (std::string_view key : known) list += (list.empty() ? "" : ", ") + std::string(key);
    return "unknown key (known keys here: " + list + ")";
  }

  std::string_view source_;
  ServerConfig& config_;
  std::set<std::string> seen_;
};

}  // namespace

std::string ListenAddress::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto malformed = [&](std::string_view why) {
    return InvalidArgument("expected HOST:PORT (" + std::string(why) + "), got " + Quoted(text));
  };
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return malformed("missing ']'");
    host = text.substr(1, close - 1);
    if (close + 1 >= text.size() || text[close + 1] != ':') return malformed("missing port");
    port = text.substr(close + 2);
    if (host.empty() || host.find(':') == std::string_view::npos ||
        !std::all_of(host.begin(), host.end(), IsIpv6Char)) {
      return malformed("bad IPv6 address");
    }
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return malformed("missing port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return malformed("put IPv6 addresses in brackets");
    }
    if (host.empty()) return malformed("missing host");
    if (!std::all_of(host.begin(), host.end(), IsHostnameChar)) return malformed("bad host");
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return malformed("bad port");
  }
  const int port_number = std::stoi(std::string(port));
  if (port_number > 65535) return malformed("port above 65535");
  return ListenAddress{std::string(host), static_cast<std::uint16_t>(port_number)};
}

Result<LogLevel> ParseLogLevel(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, LogLevel>, 8> kNames = {{
      {"trace", LogLevel::kTrace},
      {"debug", LogLevel::kDebug},
      {"info", LogLevel::kInfo},
      {"warn", LogLevel::kWarn},
      {"warning", LogLevel::kWarn},
      {"error", LogLevel::kError},
      {"critical", LogLevel::kCritical},
      {"off", LogLevel::kOff},
  }};
  for (const auto& [name, level] : kNames) {
    if (name == text) return level;
  }
  return InvalidArgument("expected one of trace, debug, info, warn, error, critical, off; got " +
                         Quoted(text));
}

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kCritical:
      return "critical";
    case LogLevel::kOff:
      return "off";
  }
  return "info";
}

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "plain") return LogFormat::kPlain;
  if (text == "json") return LogFormat::kJson;
  return InvalidArgument("expected plain or json, got " + Quoted(text));
}

std::string_view LogFormatName(LogFormat format) {
  return format == LogFormat::kJson ? "json" : "plain";
}

ServerConfig DefaultServerConfig() {
  ServerConfig config;
  config.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return config;
}

Result<ServerConfig> ParseServerConfig(std::string_view yaml_text, std::string_view source_name,
                                       ServerConfig base) {
  YamlReader reader(source_name, base);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return reader.Fail(e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "invalid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) return base;  // an empty or all-comments file
  try {
    if (auto read = reader.ReadMap(root, "", 1); !read) return tl::unexpected(read.error());
  } catch (const YAML::Exception& e) {
    return reader.Fail(e.mark.line >= 0 ? e.mark.line + 1 : 0, "", e.msg);
  }
  return base;
}

Result<ServerConfig> LoadServerConfig(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgument(path.string() + ": cannot read the configuration file", "config");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseServerConfig(text.str(), path.string());
}

std::vector<std::string_view> ConfigKeys() {
  std::vector<std::string_view> keys;
  for (const auto& entry : kKeys) keys.push_back(entry.key);
  for (std::string_view key : kHistoryKeys) keys.push_back(key);
  return keys;
}

Result<void> ApplyOverride(ServerConfig& config, std::string_view key, std::string_view value,
                           std::string_view origin) {
  const KeySetter* setter = FindKey(key);
  const bool history = IsHistoryKey(key);
  if (setter == nullptr && !history) {
    return InvalidArgument(std::string(origin) + ": unknown configuration key " + Quoted(key),
                           std::string(key));
  }
  auto set = history ? SetHistoryKey(config.history, key, value) : setter->set(config, value);
  if (!set) {
    return InvalidArgument(std::string(origin) + ": " + set.error().message, std::string(key));
  }
  return {};
}

Result<void> ApplyOverrides(ServerConfig& config, std::span<const Override> overrides) {
  for (const Override& entry : overrides) {
    if (auto applied = ApplyOverride(config, entry.key, entry.value, entry.origin); !applied) {
      return applied;
    }
  }
  return {};
}

std::span<const EnvironmentVariable> EnvironmentVariables() { return kEnvironment; }

EnvLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<void> ApplyEnvironment(ServerConfig& config, const EnvLookup& lookup) {
  std::vector<Override> overrides;
  for (const EnvironmentVariable& variable : kEnvironment) {
    std::optional<std::string> value = lookup(variable.name);
    if (!value || value->empty()) continue;
    overrides.push_back({std::string(variable.key), *std::move(value),
                         "environment variable " + std::string(variable.name)});
  }
  return ApplyOverrides(config, overrides);
}

std::string DescribeForLog(const ServerConfig& config) {
  std::ostringstream out;
  out << "listen=" << config.listen.ToString() << " threads=" << config.threads << " database="
      << (config.database_url.empty() ? std::string("embedded")
                                      : RedactSecrets(config.database_url))
      << " data_dir=" << config.data_dir
      << " migrations_dir=" << (config.migrations_dir.empty() ? "built-in" : config.migrations_dir)
      << " web_root=" << (config.web_root.empty() ? "built-in" : config.web_root)
      << " pool_size=" << config.pool_size << " body_bytes=" << config.limits.body_bytes
      << " header_bytes=" << config.limits.header_bytes
      << " read_timeout_ms=" << config.limits.read_timeout_ms
      << " idle_timeout_ms=" << config.limits.idle_timeout_ms
      << " statement_timeout_ms=" << config.limits.statement_timeout_ms
      << " json_depth=" << config.limits.json_depth
      << " baseline_cache_bytes=" << config.limits.baseline_cache_bytes
      << " history=" << (config.history.enabled ? "on" : "off")
      << " webhook=" << (config.history.webhook_url.empty() ? "none" : "set")
      << " log=" << LogLevelName(config.log.level) << "/" << LogFormatName(config.log.format)
      << " admin_token=" << (config.admin_token.empty() ? "unset" : "set");
  return out.str();
}

}  // namespace perfgate::config
