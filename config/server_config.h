// SPDX-License-Identifier: Apache-2.0
// perfwarden-server's configuration: defaults, then server.yaml, then PERFWARDEN_* environment
// variables, then command-line flags. Every layer goes through the same per-key setters, so a
// value is validated the same way wherever it comes from, and errors name their origin (file and
// line, environment variable, or flag).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/environment.h"
#include "config/history_config.h"
#include "config/logging.h"
#include "core/result.h"

namespace perfwarden::config {

struct ListenAddress {
  std::string host = "127.0.0.1";  // IPv6 literals are stored without brackets
  std::uint16_t port = 8080;       // 0 asks the OS for a free port (tests)

  // "host:port", with brackets around an IPv6 host.
  std::string ToString() const;
};

// "host:port", "[v6]:port". Hosts are IP literals or DNS names; the port is 0..65535.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// Bounds that keep one client from exhausting the server.
struct ServerLimits {
  std::size_t body_bytes = 32u << 20;
  std::size_t header_bytes = 16u << 10;
  int read_timeout_ms = 30'000;  // a whole request must arrive within this
  int idle_timeout_ms = 60'000;  // a keep-alive connection with no request is closed after this
  // A new connection's first byte, and every request's header, must arrive within this.
  int header_timeout_ms = 10'000;
  // On SIGTERM: how long the server answers the requests it has read before it exits anyway.
  int drain_ms = 10'000;
  // Open client connections at most; more are closed as soon as they are accepted.
  int max_connections = 512;
  // A database statement running longer is cancelled and its request answered 503.
  int statement_timeout_ms = 30'000;
  int json_depth = 64;
  // Memory for baselines prepared for verdicts (sample sets with their bootstrap tables), kept
  // for the next pull request judged against the same baseline runs; 0 keeps none.
  std::size_t baseline_cache_bytes = 256u << 20;
  // Heavy requests (verdicts, compare, change points, bisect reads: docs/api.md) queued or
  // running at most, every caller together (over it: 503), and of one caller, its bearer token
  // or else its address (over it: 429); both answered at once with Retry-After.
  // Request bodies in memory at once, every connection together: a request whose body does not
  // fit is answered 503 with Retry-After before its body is read (the server takes at least
  // body_bytes). The decoders bound a body's cost at a few times its size (docs/reliability.md).
  std::size_t request_memory_bytes = 256u << 20;
  int heavy_requests = 64;
  int heavy_requests_per_caller = 8;
  // Remote bisects pending or running at most on one testbed of a project; one more is 409.
  int open_bisects_per_testbed = 8;
};

struct ServerConfig {
  ListenAddress listen;
  int threads = 1;           // DefaultServerConfig() sets the hardware concurrency
  std::string database_url;  // empty: perfwarden-server runs its own PostgreSQL under data_dir
  std::string data_dir = "./.perfwarden";
  std::string migrations_dir;  // empty: the migrations the server was built with
  // The dashboard's files (the repository's web/): empty serves the copy built into the binary;
  // a directory serves its files from disk, read at every request (front-end development).
  std::string web_root;
  ServerLimits limits;
  int pool_size = 8;  // PostgreSQL connections
  LogConfig log;
  HistoryConfig history;
  // Becomes the admin token at first start when set; must look like a generated token
  // ("pwt_" + 43 base64url characters) so that bearer parsing and log redaction recognise it.
  std::string admin_token;
};

// The built-in defaults, with threads = std::thread::hardware_concurrency() (at least 1).
ServerConfig DefaultServerConfig();

// Reads a server.yaml over DefaultServerConfig(). Unknown keys, wrong types and out-of-range or
// malformed values are kInvalidArgument errors "FILE:LINE: KEY: what is wrong", field = KEY.
Result<ServerConfig> LoadServerConfig(const std::filesystem::path& path);
// The same from YAML text; source_name stands for the file name in messages.
Result<ServerConfig> ParseServerConfig(std::string_view yaml_text, std::string_view source_name,
                                       ServerConfig base = DefaultServerConfig());

// One value for one key, as text, and where it came from ("environment variable
// PERFWARDEN_THREADS", "--threads") for error messages.
struct Override {
  std::string key;  // dotted config key: "listen", "limits.body_bytes", "log.format", ...
  std::string value;
  std::string origin;
};

// Applies overrides in order; the first bad one is an error "ORIGIN: what is wrong", field = key.
// main() applies flags with this, after ApplyEnvironment().
Result<void> ApplyOverrides(ServerConfig& config, std::span<const Override> overrides);
Result<void> ApplyOverride(ServerConfig& config, std::string_view key, std::string_view value,
                           std::string_view origin);

// Every dotted key ApplyOverride() knows, in documentation order.
std::vector<std::string_view> ConfigKeys();

// The environment variables ApplyEnvironment() reads, with the key each one sets.
struct EnvironmentVariable {
  std::string_view name;
  std::string_view key;
};
std::span<const EnvironmentVariable> EnvironmentVariables();

// Applies the PERFWARDEN_* variables that are set and not empty (an empty variable is treated as
// unset, as CI systems often export empty ones).
Result<void> ApplyEnvironment(ServerConfig& config, const EnvLookup& lookup);

// A one-line summary for the startup log; the admin token and any DSN password are hidden.
std::string DescribeForLog(const ServerConfig& config);

}  // namespace perfwarden::config
