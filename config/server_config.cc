// SPDX-License-Identifier: Apache-2.0
#include "config/server_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "config/logging.h"
#include "config/yaml_reader.h"

namespace perfwarden::config {
namespace {

// Setters report what is wrong with the value; callers prefix where it came from.
using Setter = Result<void> (*)(ServerConfig&, std::string_view);

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
  return text.size() == 47 && text.starts_with("pwt_") &&
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

Result<void> SetRequestMemoryBytes(ServerConfig& config, std::string_view text) {
  auto value = ParseByteSize(text, std::int64_t{1} << 20, std::int64_t{64} << 30);
  if (!value) return tl::unexpected(value.error());
  config.limits.request_memory_bytes = static_cast<std::size_t>(*value);
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

Result<void> SetHeaderTimeout(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, kMaxTimeoutMs, "an integer (milliseconds)");
  if (!value) return tl::unexpected(value.error());
  config.limits.header_timeout_ms = static_cast<int>(*value);
  return {};
}

Result<void> SetDrain(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, kMaxTimeoutMs, "an integer (milliseconds)");
  if (!value) return tl::unexpected(value.error());
  config.limits.drain_ms = static_cast<int>(*value);
  return {};
}

Result<void> SetMaxConnections(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, 1'000'000, "an integer");
  if (!value) return tl::unexpected(value.error());
  config.limits.max_connections = static_cast<int>(*value);
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

// A count of requests or jobs in flight, 1..100000, for limits.<kMember>.
template <int ServerLimits::*kMember>
Result<void> SetInFlightLimit(ServerConfig& config, std::string_view text) {
  auto value = ParseInteger(text, 1, 100'000, "an integer");
  if (!value) return tl::unexpected(value.error());
  config.limits.*kMember = static_cast<int>(*value);
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
        "must be a perfwarden token: \"pwt_\" followed by 43 base64url characters");
  }
  config.admin_token = std::string(text);
  return {};
}

struct KeySetter {
  std::string_view key;
  Setter set;
};

constexpr std::array<KeySetter, 24> kKeys = {{
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
    {"limits.header_timeout_ms", SetHeaderTimeout},
    {"limits.drain_ms", SetDrain},
    {"limits.max_connections", SetMaxConnections},
    {"limits.statement_timeout_ms", SetStatementTimeout},
    {"limits.json_depth", SetJsonDepth},
    {"limits.baseline_cache_bytes", SetBaselineCacheBytes},
    {"limits.request_memory_bytes", SetRequestMemoryBytes},
    {"limits.heavy_requests", SetInFlightLimit<&ServerLimits::heavy_requests>},
    {"limits.heavy_requests_per_caller",
     SetInFlightLimit<&ServerLimits::heavy_requests_per_caller>},
    {"limits.open_bisects_per_testbed", SetInFlightLimit<&ServerLimits::open_bisects_per_testbed>},
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
    {"PERFWARDEN_LISTEN", "listen"},
    {"PERFWARDEN_THREADS", "threads"},
    {"PERFWARDEN_DATABASE_URL", "database_url"},
    {"PERFWARDEN_DATA_DIR", "data_dir"},
    {"PERFWARDEN_LOG_LEVEL", "log.level"},
    {"PERFWARDEN_LOG_FORMAT", "log.format"},
    {"PERFWARDEN_ADMIN_TOKEN", "admin_token"},
    {"PERFWARDEN_HISTORY_WEBHOOK_URL", "history.webhook_url"},
}};

YAML::Mark MarkOr(const YAML::Node& node, const YAML::Mark& fallback) {
  return node.Mark().line >= 0 ? node.Mark() : fallback;
}

// The keys valid under `prefix` ("" for the top level, "limits", ...).
std::vector<std::string_view> KeysUnder(const std::string& prefix) {
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
  return known;
}

// Walks a mapping of server.yaml in document order, every value going through the setter its
// override would use. `seen` holds the dotted keys read so far: "limits.body_bytes" may also be
// written at the top level, and is then a duplicate of the one under limits:.
void ReadSection(YamlReader& r, const YAML::Node& map, const std::string& prefix,
                 const YAML::Mark& at, std::set<std::string>& seen, ServerConfig& config) {
  if (!map.IsMap()) {
    return r.Fail(
        at, prefix.empty() ? "(document)" : prefix,
        prefix.empty() ? "the document must be a mapping of keys to values" : kNotAMapping);
  }
  for (const auto& entry : map) {
    if (!r.ok()) return;
    const YAML::Node& key_node = entry.first;
    const YAML::Node& value = entry.second;
    const YAML::Mark key_mark = MarkOr(key_node, at);
    if (!key_node.IsScalar()) return r.Fail(key_mark, prefix, kPlainNames);
    const std::string key = prefix.empty() ? key_node.Scalar() : prefix + "." + key_node.Scalar();
    if (!seen.insert(key).second) return r.Fail(key_mark, key, kDuplicateKey);
    // yaml-cpp marks an empty value where the scanner stopped (often the next line).
    const YAML::Mark value_mark = value.IsNull() ? key_mark : MarkOr(value, key_mark);

    if (prefix.empty() && Contains(kSections, key)) {
      if (value.IsNull()) continue;  // "limits:" with everything commented out
      ReadSection(r, value, key, value_mark, seen, config);
      continue;
    }
    const KeySetter* setter = FindKey(key);
    const bool history = IsHistoryKey(key);
    if (setter == nullptr && !history) {
      return r.Fail(key_mark, key, UnknownKey("known keys here", KeysUnder(prefix)));
    }
    if (value.IsNull()) {
      return r.Fail(value_mark, key, "has no value (remove the key to keep the default)");
    }
    std::string text;
    if (key == "history.branches" && value.IsSequence()) {
      for (const auto& item : value) {
        if (!item.IsScalar()) return r.Fail(value_mark, key, "expected a list of branch names");
        text += (text.empty() ? "" : ",") + item.Scalar();
      }
    } else if (!value.IsScalar()) {
      return r.Fail(value_mark, key, kSingleValue);
    } else {
      text = value.Scalar();
    }
    auto set = history ? SetHistoryKey(config.history, key, text) : setter->set(config, text);
    if (!set) return r.Fail(value_mark, key, set.error().message);
  }
}

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

ServerConfig DefaultServerConfig() {
  ServerConfig config;
  config.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return config;
}

Result<ServerConfig> ParseServerConfig(std::string_view yaml_text, std::string_view source_name,
                                       ServerConfig base) {
  YamlReader reader(source_name, Position::kLine);
  const std::optional<YAML::Node> root = reader.Load(yaml_text);
  if (!root) return tl::unexpected(reader.error());
  if (!root->IsDefined() || root->IsNull()) return base;  // an empty or all-comments file
  std::set<std::string> seen;
  try {
    ReadSection(reader, *root, "", YAML::Mark(), seen, base);
  } catch (const YAML::Exception& e) {
    reader.Fail(e.mark, "", e.msg);
  }
  if (!reader.ok()) return tl::unexpected(reader.error());
  return base;
}

Result<ServerConfig> LoadServerConfig(const std::filesystem::path& path) {
  auto text = ReadConfigFile(path.string());
  if (!text) return tl::unexpected(text.error());
  return ParseServerConfig(*text, path.string());
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
      << " header_timeout_ms=" << config.limits.header_timeout_ms
      << " drain_ms=" << config.limits.drain_ms
      << " max_connections=" << config.limits.max_connections
      << " statement_timeout_ms=" << config.limits.statement_timeout_ms
      << " json_depth=" << config.limits.json_depth
      << " baseline_cache_bytes=" << config.limits.baseline_cache_bytes
      << " request_memory_bytes=" << config.limits.request_memory_bytes
      << " heavy_requests=" << config.limits.heavy_requests << "/"
      << config.limits.heavy_requests_per_caller
      << " open_bisects_per_testbed=" << config.limits.open_bisects_per_testbed
      << " history=" << (config.history.enabled ? "on" : "off")
      << " webhook=" << (config.history.webhook_url.empty() ? "none" : "set")
      << " log=" << LogLevelName(config.log.level) << "/" << LogFormatName(config.log.format)
      << " admin_token=" << (config.admin_token.empty() ? "unset" : "set");
  return out.str();
}

}  // namespace perfwarden::config
