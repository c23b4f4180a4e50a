// SPDX-License-Identifier: Apache-2.0
// server.yaml loading, environment and flag overrides: defaults, precedence, and errors that
// name the file, line and key (or the variable) for every kind of bad input.
#include "config/server_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

namespace perfwarden::config {
namespace {

constexpr char kToken[] = "pwt_abcdefghijklmnopqrstuvwxyzABCDEFGHIJK-_0123";

std::filesystem::path WriteFile(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path) << text;
  return path;
}

EnvLookup FakeEnvironment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ServerConfig, Defaults) {
  const ServerConfig config = DefaultServerConfig();
  EXPECT_EQ(config.listen.ToString(), "127.0.0.1:8080");
  EXPECT_EQ(config.threads, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_GE(config.threads, 1);
  EXPECT_EQ(config.database_url, "");
  EXPECT_EQ(config.data_dir, "./.perfwarden");
  EXPECT_EQ(config.migrations_dir, "");
  EXPECT_EQ(config.limits.body_bytes, 32u << 20);
  EXPECT_EQ(config.limits.header_bytes, 16u << 10);
  EXPECT_EQ(config.limits.read_timeout_ms, 30000);
  EXPECT_EQ(config.limits.idle_timeout_ms, 60000);
  EXPECT_EQ(config.limits.header_timeout_ms, 10000);
  EXPECT_EQ(config.limits.drain_ms, 10000);
  EXPECT_EQ(config.limits.max_connections, 512);
  EXPECT_EQ(config.limits.statement_timeout_ms, 30000);
  EXPECT_EQ(config.limits.json_depth, 64);
  EXPECT_EQ(config.limits.baseline_cache_bytes, 256u << 20);
  EXPECT_EQ(config.limits.heavy_requests, 64);
  EXPECT_EQ(config.limits.heavy_requests_per_caller, 8);
  EXPECT_EQ(config.limits.open_bisects_per_testbed, 8);
  EXPECT_EQ(config.pool_size, 8);
  EXPECT_EQ(config.log.level, LogLevel::kInfo);
  EXPECT_EQ(config.log.format, LogFormat::kPlain);
  EXPECT_EQ(config.admin_token, "");
}

TEST(ServerConfig, LoadsEveryKey) {
  const auto path = WriteFile("full.yaml", R"(# every key
listen: "[::1]:9000"
threads: 3
database_url: "host=db port=5432 dbname=perfwarden"
data_dir: /var/lib/perfwarden
migrations_dir: /usr/share/perfwarden/migrations
pool_size: 12
limits:
  body_bytes: 8MiB
  header_bytes: 32768
  read_timeout_ms: 5000
  idle_timeout_ms: 7000
  header_timeout_ms: 3000
  drain_ms: 1500
  max_connections: 64
  statement_timeout_ms: 2500
  json_depth: 20
  baseline_cache_bytes: 0
  heavy_requests: 16
  heavy_requests_per_caller: 2
  open_bisects_per_testbed: 3
log:
  level: debug
  format: json
admin_token: )" + std::string(kToken) + "\n");
  auto config = LoadServerConfig(path);
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->listen.host, "::1");
  EXPECT_EQ(config->listen.port, 9000);
  EXPECT_EQ(config->listen.ToString(), "[::1]:9000");
  EXPECT_EQ(config->threads, 3);
  EXPECT_EQ(config->database_url, "host=db port=5432 dbname=perfwarden");
  EXPECT_EQ(config->data_dir, "/var/lib/perfwarden");
  EXPECT_EQ(config->migrations_dir, "/usr/share/perfwarden/migrations");
  EXPECT_EQ(config->pool_size, 12);
  EXPECT_EQ(config->limits.body_bytes, 8u << 20);
  EXPECT_EQ(config->limits.header_bytes, 32768u);
  EXPECT_EQ(config->limits.read_timeout_ms, 5000);
  EXPECT_EQ(config->limits.idle_timeout_ms, 7000);
  EXPECT_EQ(config->limits.header_timeout_ms, 3000);
  EXPECT_EQ(config->limits.drain_ms, 1500);
  EXPECT_EQ(config->limits.max_connections, 64);
  EXPECT_EQ(config->limits.statement_timeout_ms, 2500);
  EXPECT_EQ(config->limits.json_depth, 20);
  EXPECT_EQ(config->limits.baseline_cache_bytes, 0u);
  EXPECT_EQ(config->limits.heavy_requests, 16);
  EXPECT_EQ(config->limits.heavy_requests_per_caller, 2);
  EXPECT_EQ(config->limits.open_bisects_per_testbed, 3);
  EXPECT_EQ(config->log.level, LogLevel::kDebug);
  EXPECT_EQ(config->log.format, LogFormat::kJson);
  EXPECT_EQ(config->admin_token, kToken);
}

TEST(ServerConfig, EmptyFileAndEmptySectionsKeepDefaults) {
  for (const char* text : {"", "# nothing\n", "limits:\nlog:\n"}) {
    auto config = ParseServerConfig(text, "server.yaml");
    ASSERT_TRUE(config.has_value()) << text << ": " << config.error().message;
    EXPECT_EQ(config->listen.ToString(), "127.0.0.1:8080");
    EXPECT_EQ(config->limits.json_depth, 64);
  }
}

TEST(ServerConfig, ExampleFileLoads) {
  // Every key is commented out in the example, so it must load as the defaults.
  auto config = LoadServerConfig(std::filesystem::path(PERFWARDEN_FIXTURES_DIR) /
                                 "../../config/server.example.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message;
}

TEST(ServerConfig, MissingFileIsAnError) {
  auto config = LoadServerConfig("/nonexistent/server.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_NE(config.error().message.find("/nonexistent/server.yaml"), std::string::npos);
}

struct BadFile {
  std::string text;
  std::string expected_prefix;  // "server.yaml:LINE: KEY: "
  std::string message_part;
};

TEST(ServerConfig, BadFilesNameFileLineAndKey) {
  const std::vector<BadFile> cases = {
      {"listen: 127.0.0.1:8080\nthreds: 4\n", "server.yaml:2: threds: ", "unknown key"},
      {"limits:\n  body_byte: 10\n", "server.yaml:2: limits.body_byte: ", "unknown key"},
      {"log:\n  level: info\n  colour: true\n", "server.yaml:3: log.colour: ", "unknown key"},
      {"threads: four\n", "server.yaml:1: threads: ", "expected an integer"},
      {"threads: 4.5\n", "server.yaml:1: threads: ", "expected an integer"},
      {"threads: -2\n", "server.yaml:1: threads: ", "must be in [1, 1024]"},
      {"threads: 0\n", "server.yaml:1: threads: ", "must be in [1, 1024]"},
      {"threads: 99999999999999999999\n", "server.yaml:1: threads: ", "expected an integer"},
      {"threads: [1, 2]\n", "server.yaml:1: threads: ", "expected a single value"},
      {"threads:\n", "server.yaml:1: threads: ", "has no value"},
      {"pool_size: 0\n", "server.yaml:1: pool_size: ", "must be in"},
      {"\n\nlisten: localhost\n", "server.yaml:3: listen: ", "missing port"},
      {"listen: 127.0.0.1:70000\n", "server.yaml:1: listen: ", "port above 65535"},
      {"listen: 127.0.0.1:http\n", "server.yaml:1: listen: ", "bad port"},
      {"listen: \":8080\"\n", "server.yaml:1: listen: ", "missing host"},
      {"listen: \"::1:8080\"\n", "server.yaml:1: listen: ", "brackets"},
      {"listen: \"[::1]\"\n", "server.yaml:1: listen: ", "missing port"},
      {"listen: \"bad host:80\"\n", "server.yaml:1: listen: ", "bad host"},
      {"data_dir: \"\"\n", "server.yaml:1: data_dir: ", "must not be empty"},
      {"limits:\n  body_bytes: -1\n", "server.yaml:2: limits.body_bytes: ", "must be in"},
      {"limits:\n  body_bytes: 2GiB\n", "server.yaml:2: limits.body_bytes: ", "must be in"},
      {"limits:\n  body_bytes: 10MB\n", "server.yaml:2: limits.body_bytes: ", "expected a byte"},
      {"limits:\n  header_bytes: 10\n", "server.yaml:2: limits.header_bytes: ", "must be in"},
      {"limits:\n  read_timeout_ms: 0\n", "server.yaml:2: limits.read_timeout_ms: ", "must be"},
      {"limits:\n  idle_timeout_ms: 1h\n", "server.yaml:2: limits.idle_timeout_ms: ", "integer"},
      {"limits:\n  header_timeout_ms: 0\n", "server.yaml:2: limits.header_timeout_ms: ", "must be"},
      {"limits:\n  drain_ms: 0\n", "server.yaml:2: limits.drain_ms: ", "must be"},
      {"limits:\n  max_connections: 0\n", "server.yaml:2: limits.max_connections: ", "must be"},
      {"limits:\n  statement_timeout_ms: 0\n",
       "server.yaml:2: limits.statement_timeout_ms: ", "must be in"},
      {"limits:\n  json_depth: 100000\n", "server.yaml:2: limits.json_depth: ", "must be in"},
      {"limits:\n  baseline_cache_bytes: 65GiB\n",
       "server.yaml:2: limits.baseline_cache_bytes: ", "must be in"},
      {"limits:\n  heavy_requests: 0\n", "server.yaml:2: limits.heavy_requests: ", "must be in"},
      {"limits:\n  heavy_requests_per_caller: many\n",
       "server.yaml:2: limits.heavy_requests_per_caller: ", "expected an integer"},
      {"limits:\n  open_bisects_per_testbed: 0\n",
       "server.yaml:2: limits.open_bisects_per_testbed: ", "must be in [1, 100000]"},
      {"limits: 5\n", "server.yaml:1: limits: ", "must be a mapping"},
      {"log:\n  format: xml\n", "server.yaml:2: log.format: ", "expected plain or json"},
      {"log:\n  level: loud\n", "server.yaml:2: log.level: ", "expected one of"},
      {"admin_token: secret\n", "server.yaml:1: admin_token: ", "must be a perfwarden token"},
      {"threads: 2\nthreads: 3\n", "server.yaml:2: threads: ", "duplicate key"},
      {"history:\n  threshold: big\n", "server.yaml:2: history.threshold: ", "expected a number"},
      {"history:\n  threshold: 0\n", "server.yaml:2: history.threshold: ", "must be above 0"},
      {"history:\n  window: 3\n", "server.yaml:2: history.window: ", "[4, 10000]"},
      {"history:\n  max_pvalue: 1\n", "server.yaml:2: history.max_pvalue: ", "(0, 1)"},
      {"history:\n  enabled: yes\n", "server.yaml:2: history.enabled: ", "true or false"},
      {"history:\n  branches: [main, \"a b\"]\n",
       "server.yaml:2: history.branches: ", "branch names"},
      {"history:\n  branches: [[main]]\n", "server.yaml:2: history.branches: ", "a list"},
      {"history:\n  webhook_url: ftp://x\n", "server.yaml:2: history.webhook_url: ", "http"},
      {"history:\n  windows: 5\n", "server.yaml:2: history.windows: ", "unknown key"},
      {"- a\n- b\n", "server.yaml:1: ", "must be a mapping"},
      {"threads: [1,\n", "server.yaml:", "invalid YAML"},
  };
  for (const BadFile& c : cases) {
    SCOPED_TRACE(c.text);
    auto config = ParseServerConfig(c.text, "server.yaml");
    ASSERT_FALSE(config.has_value());
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument);
    EXPECT_TRUE(config.error().message.starts_with(c.expected_prefix)) << config.error().message;
    EXPECT_NE(config.error().message.find(c.message_part), std::string::npos)
        << config.error().message;
  }
}

TEST(ServerConfig, HistorySection) {
  const ServerConfig defaults = DefaultServerConfig();
  EXPECT_TRUE(defaults.history.enabled);
  EXPECT_EQ(defaults.history.branches, (std::vector<std::string>{"main", "master"}));
  EXPECT_EQ(defaults.history.threshold, 0.05);
  auto config = ParseServerConfig(
      "history:\n  enabled: false\n  branches: [main, release/1.x]\n  threshold: 3%\n"
      "  window: 30\n  max_pvalue: 0.01\n  webhook_url: https://hooks.example/T/1\n"
      "  public_url: http://perfwarden.example\n",
      "server.yaml");
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_FALSE(config->history.enabled);
  EXPECT_EQ(config->history.branches, (std::vector<std::string>{"main", "release/1.x"}));
  EXPECT_DOUBLE_EQ(config->history.threshold, 0.03);
  EXPECT_EQ(config->history.window, 30u);
  EXPECT_EQ(config->history.max_pvalue, 0.01);
  EXPECT_EQ(config->history.webhook_url, "https://hooks.example/T/1");
  EXPECT_EQ(config->history.public_url, "http://perfwarden.example");
  ServerConfig overridden = DefaultServerConfig();
  ASSERT_TRUE(ApplyOverride(overridden, "history.branches", "trunk, nightly", "--flag"));
  EXPECT_EQ(overridden.history.branches, (std::vector<std::string>{"trunk", "nightly"}));
  EXPECT_TRUE(ApplyOverride(overridden, "history.threshold", "0.07", "--flag"));
  EXPECT_DOUBLE_EQ(overridden.history.threshold, 0.07);
}

TEST(ServerConfig, ErrorsCarryTheKeyAsField) {
  auto config = ParseServerConfig("limits:\n  json_depth: x\n", "server.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().field, "limits.json_depth");
}

TEST(ServerConfig, UnknownKeyListsTheKnownOnes) {
  auto config = ParseServerConfig("log:\n  lvl: info\n", "server.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_NE(config.error().message.find("level, format"), std::string::npos)
      << config.error().message;
}

TEST(ServerConfig, AdminTokenIsNeverEchoed) {
  const std::string secret = "pwt_notquitelongenough";
  auto config = ParseServerConfig("admin_token: " + secret + "\n", "server.yaml");
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().message.find(secret), std::string::npos);
}

TEST(ParseListenAddress, AcceptsHostsAndPorts) {
  struct Case {
    std::string text, host;
    int port;
  };
  for (const Case& c :
       std::vector<Case>{{"127.0.0.1:8080", "127.0.0.1", 8080},
                         {"0.0.0.0:0", "0.0.0.0", 0},
                         {"localhost:65535", "localhost", 65535},
                         {"perf-gate.example.com:443", "perf-gate.example.com", 443},
                         {"[::]:8080", "::", 8080},
                         {"[::ffff:127.0.0.1]:80", "::ffff:127.0.0.1", 80}}) {
    auto address = ParseListenAddress(c.text);
    ASSERT_TRUE(address.has_value()) << c.text << ": " << address.error().message;
    EXPECT_EQ(address->host, c.host);
    EXPECT_EQ(address->port, c.port);
    EXPECT_EQ(address->ToString(), c.text);
  }
  for (const char* bad : {"", ":", "host:", "host:-1", "host:+80", "[::1:80", "[]:80", "[x]:80",
                          "host:080808", "a b:80"}) {
    EXPECT_FALSE(ParseListenAddress(bad).has_value()) << bad;
  }
}

TEST(ApplyEnvironment, OverridesTheFile) {
  auto config =
      ParseServerConfig("listen: 127.0.0.1:1000\nthreads: 2\nlog:\n  level: warn\n", "server.yaml");
  ASSERT_TRUE(config.has_value());
  auto applied = ApplyEnvironment(*config, FakeEnvironment({
                                               {"PERFWARDEN_LISTEN", "0.0.0.0:2000"},
                                               {"PERFWARDEN_THREADS", "6"},
                                               {"PERFWARDEN_DATABASE_URL", "postgresql://db/x"},
                                               {"PERFWARDEN_DATA_DIR", "/tmp/pg"},
                                               {"PERFWARDEN_LOG_FORMAT", "json"},
                                               {"PERFWARDEN_LOG_LEVEL", "error"},
                                               {"PERFWARDEN_ADMIN_TOKEN", kToken},
                                           }));
  ASSERT_TRUE(applied.has_value()) << applied.error().message;
  EXPECT_EQ(config->listen.ToString(), "0.0.0.0:2000");
  EXPECT_EQ(config->threads, 6);
  EXPECT_EQ(config->database_url, "postgresql://db/x");
  EXPECT_EQ(config->data_dir, "/tmp/pg");
  EXPECT_EQ(config->log.format, LogFormat::kJson);
  EXPECT_EQ(config->log.level, LogLevel::kError);
  EXPECT_EQ(config->admin_token, kToken);
}

TEST(ApplyEnvironment, UnsetAndEmptyVariablesChangeNothing) {
  ServerConfig config = DefaultServerConfig();
  config.threads = 5;
  ASSERT_TRUE(ApplyEnvironment(config, FakeEnvironment({{"PERFWARDEN_THREADS", ""}})));
  ASSERT_TRUE(ApplyEnvironment(config, FakeEnvironment({{"UNRELATED", "1"}})));
  EXPECT_EQ(config.threads, 5);
}

TEST(ApplyEnvironment, BadValuesNameTheVariable) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"PERFWARDEN_LISTEN", "nowhere"},    {"PERFWARDEN_THREADS", "-1"},
      {"PERFWARDEN_THREADS", "many"},      {"PERFWARDEN_LOG_FORMAT", "yaml"},
      {"PERFWARDEN_LOG_LEVEL", "verbose"}, {"PERFWARDEN_ADMIN_TOKEN", "hunter2"},
  };
  for (const auto& [name, value] : cases) {
    ServerConfig config = DefaultServerConfig();
    auto applied = ApplyEnvironment(config, FakeEnvironment({{name, value}}));
    ASSERT_FALSE(applied.has_value()) << name;
    EXPECT_TRUE(applied.error().message.starts_with("environment variable " + name + ": "))
        << applied.error().message;
  }
  ServerConfig config = DefaultServerConfig();
  auto applied = ApplyEnvironment(config, FakeEnvironment({{"PERFWARDEN_ADMIN_TOKEN", "hunter2"}}));
  ASSERT_FALSE(applied.has_value());
  EXPECT_EQ(applied.error().message.find("hunter2"), std::string::npos);
}

TEST(ApplyEnvironment, EveryVariableMapsToAKnownKey) {
  const auto keys = ConfigKeys();
  for (const EnvironmentVariable& variable : EnvironmentVariables()) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), variable.key), keys.end()) << variable.name;
  }
  EXPECT_EQ(EnvironmentVariables().size(), 8u);
}

TEST(ApplyOverrides, FlagsWinOverEnvironmentWhichWinsOverTheFile) {
  auto config =
      ParseServerConfig("threads: 2\nlisten: 127.0.0.1:1\ndata_dir: /file\n", "server.yaml");
  ASSERT_TRUE(config.has_value());
  ASSERT_TRUE(ApplyEnvironment(*config, FakeEnvironment({{"PERFWARDEN_THREADS", "3"},
                                                         {"PERFWARDEN_LISTEN", "127.0.0.1:2"}})));
  const std::vector<Override> flags = {{"threads", "4", "--threads"}};
  ASSERT_TRUE(ApplyOverrides(*config, flags));
  EXPECT_EQ(config->threads, 4);                        // flag
  EXPECT_EQ(config->listen.ToString(), "127.0.0.1:2");  // environment
  EXPECT_EQ(config->data_dir, "/file");                 // file
}

TEST(ApplyOverrides, StopsAtTheFirstBadOneAndNamesIt) {
  ServerConfig config = DefaultServerConfig();
  const std::vector<Override> flags = {{"pool_size", "3", "--pool-size"},
                                       {"limits.json_depth", "0", "--json-depth"},
                                       {"threads", "9", "--threads"}};
  auto applied = ApplyOverrides(config, flags);
  ASSERT_FALSE(applied.has_value());
  EXPECT_TRUE(applied.error().message.starts_with("--json-depth: ")) << applied.error().message;
  EXPECT_EQ(applied.error().field, "limits.json_depth");
  EXPECT_EQ(config.pool_size, 3);

  auto unknown = ApplyOverride(config, "limit.body_bytes", "1", "--x");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("unknown configuration key"), std::string::npos);
}

TEST(DescribeForLog, HidesSecrets) {
  ServerConfig config = DefaultServerConfig();
  config.database_url = "postgresql://perfwarden:s3cret@db:5432/perfwarden";
  config.admin_token = kToken;
  const std::string text = DescribeForLog(config);
  EXPECT_EQ(text.find("s3cret"), std::string::npos) << text;
  EXPECT_EQ(text.find(kToken), std::string::npos) << text;
  EXPECT_NE(text.find("admin_token=set"), std::string::npos) << text;
  EXPECT_NE(text.find("listen=127.0.0.1:8080"), std::string::npos) << text;
}

}  // namespace
}  // namespace perfwarden::config
