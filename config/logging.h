// SPDX-License-Identifier: Apache-2.0
// Process-wide logging: spdlog's default logger, as plain text or JSON lines, with secrets
// (bearer tokens, perfwarden tokens, DSN passwords) replaced by "***" before anything is written.
// Callers log through spdlog as usual; only the composition root calls SetupLogging().
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "core/result.h"

namespace perfwarden::config {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };
enum class LogFormat { kPlain, kJson };

// "trace", "debug", "info", "warn" (or "warning"), "error", "critical", "off".
Result<LogLevel> ParseLogLevel(std::string_view text);
std::string_view LogLevelName(LogLevel level);
// "plain" or "json".
Result<LogFormat> ParseLogFormat(std::string_view text);
std::string_view LogFormatName(LogFormat format);

struct LogConfig {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kPlain;
};

// Replaces with "***": the credential after "Bearer " (any case), perfwarden tokens ("pwt_..."),
// the value of "password=" (libpq keyword/value DSNs, URI query parameters, PGPASSWORD=) and the
// password in URI user info ("postgresql://user:***@host/db"). It errs on the side of hiding
// too much. Safe to call on any text, including invalid UTF-8.
std::string RedactSecrets(std::string_view text);

// Makes spdlog's default logger write to stderr at config.level, in config.format:
//   plain: 2024-05-01T12:00:00.123Z [info] message
//   json:  {"ts":"2024-05-01T12:00:00.123Z","level":"info","msg":"message"}
// Messages are redacted; in JSON they are escaped (invalid UTF-8 becomes U+FFFD), in plain text
// line breaks are escaped so that one record stays one line.
Result<void> SetupLogging(const LogConfig& config);
// The same, writing to `out`, which must outlive the logger (tests; a caller-owned file).
Result<void> SetupLogging(const LogConfig& config, std::ostream& out);

}  // namespace perfwarden::config
