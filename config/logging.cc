// SPDX-License-Identifier: Apache-2.0
#include "config/logging.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <ostream>
#include <utility>

#include "config/yaml_reader.h"

namespace perfwarden::config {
namespace {

constexpr std::string_view kMask = "***";

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

bool IsBase64UrlChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// RFC 6750 b64token characters.
bool IsBearerChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/' || c == '=';
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// Each matcher looks at text[i...]; on a match it appends the redacted form to `out` and returns
// the index just past what it consumed, otherwise it returns i and appends nothing.

std::size_t RedactBearer(std::string_view text, std::size_t i, std::string& out) {
  constexpr std::string_view kScheme = "bearer";
  if (!StartsWithIgnoreCase(text.substr(i), kScheme)) return i;
  if (i > 0 && IsWordChar(text[i - 1])) return i;
  std::size_t start = i + kScheme.size();
  while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
  if (start == i + kScheme.size()) return i;
  std::size_t end = start;
  while (end < text.size() && IsBearerChar(text[end])) ++end;
  if (end == start) return i;
  out.append(text.substr(i, start - i));
  out.append(kMask);
  return end;
}

std::size_t RedactPerfwardenToken(std::string_view text, std::size_t i, std::string& out) {
  constexpr std::string_view kPrefix = "pwt_";
  if (!text.substr(i).starts_with(kPrefix)) return i;
  std::size_t end = i + kPrefix.size();
  while (end < text.size() && IsBase64UrlChar(text[end])) ++end;
  if (end == i + kPrefix.size()) return i;  // "pwt_" alone, e.g. in a help text
  out.append(kMask);
  return end;
}

std::size_t RedactPassword(std::string_view text, std::size_t i, std::string& out) {
  constexpr std::string_view kKey = "password";
  if (!StartsWithIgnoreCase(text.substr(i), kKey)) return i;
  std::size_t j = i + kKey.size();
  while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
  if (j >= text.size() || text[j] != '=') return i;
  ++j;
  while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
  std::size_t end = j;
  if (end < text.size() && text[end] == '\'') {
    // libpq quoting: '...' with backslash escapes.
    ++end;
    while (end < text.size() && text[end] != '\'') end += (text[end] == '\\') ? 2 : 1;
    end = std::min(end + 1, text.size());
  } else {
    while (end < text.size() && !IsSpace(text[end]) && text[end] != '&' && text[end] != '"' &&
           text[end] != '\'') {
      ++end;
    }
  }
  if (end == j) return i;
  out.append(text.substr(i, j - i));
  out.append(kMask);
  return end;
}

std::size_t RedactUriPassword(std::string_view text, std::size_t i, std::string& out) {
  constexpr std::string_view kSeparator = "://";
  if (!text.substr(i).starts_with(kSeparator)) return i;
  const std::size_t user_start = i + kSeparator.size();
  std::size_t at = user_start;
  while (at < text.size() && !IsSpace(text[at]) && text[at] != '@' && text[at] != '/' &&
         text[at] != '?' && text[at] != '#') {
    ++at;
  }
  if (at >= text.size() || text[at] != '@') return i;
  const std::string_view user_info = text.substr(user_start, at - user_start);
  const std::size_t colon = user_info.find(':');
  if (colon == std::string_view::npos || colon + 1 == user_info.size()) return i;
  out.append(kSeparator);
  out.append(user_info.substr(0, colon + 1));
  out.append(kMask);
  out.push_back('@');
  return at + 1;
}

// JSON string contents: escapes quotes, backslashes and control characters; bytes that are not
// well-formed UTF-8 become U+FFFD so that every line stays valid JSON.
void AppendJsonEscaped(std::string_view text, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out += "\\u00";
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xf]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // Multi-byte sequence: length from the lead byte, then continuation bytes, rejecting
    // overlong forms, surrogates and code points above U+10FFFF.
    std::size_t length = 0;
    std::uint32_t code_point = 0;
    std::uint32_t minimum = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
      code_point = c & 0x1f;
      minimum = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      code_point = c & 0x0f;
      minimum = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      code_point = c & 0x07;
      minimum = 0x10000;
    }
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) {
        valid = false;
      } else {
        code_point = (code_point << 6) | (next & 0x3f);
      }
    }
    valid = valid && code_point >= minimum && code_point <= 0x10ffff &&
            !(code_point >= 0xd800 && code_point <= 0xdfff);
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
}

std::string_view LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kCritical:
      return spdlog::level::critical;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

// RFC 3339 UTC with milliseconds: sortable, and what log collectors parse without help.
std::string Timestamp(spdlog::log_clock::time_point time) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[40];
  const std::size_t length = std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  char fraction[8];
  std::snprintf(fraction, sizeof(fraction), ".%03dZ", static_cast<int>(millis));
  return std::string(buffer, length) + fraction;
}

// Owns the whole line layout (rather than a pattern string) because redaction and escaping
// must apply to the message text, which spdlog patterns cannot transform.
class RedactingFormatter final : public spdlog::formatter {
 public:
  explicit RedactingFormatter(LogFormat format) : format_(format) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string message =
        RedactSecrets(std::string_view(msg.payload.data(), msg.payload.size()));
    std::string line;
    line.reserve(message.size() + 64);
    if (format_ == LogFormat::kJson) {
      line += "{\"ts\":\"";
      line += Timestamp(msg.time);
      line += "\",\"level\":\"";
      line += LevelName(msg.level);
      line += "\",\"msg\":\"";
      AppendJsonEscaped(message, line);
      line += "\"}\n";
    } else {
      line += Timestamp(msg.time);
      line += " [";
      line += LevelName(msg.level);
      line += "] ";
      for (char c : message) {
        if (c == '\n') {
          line += "\\n";
        } else if (c == '\r') {
          line += "\\r";
        } else {
          line.push_back(c);
        }
      }
      line.push_back('\n');
    }
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<RedactingFormatter>(format_);
  }

 private:
  LogFormat format_;
};

Result<void> Install(const LogConfig& config, spdlog::sink_ptr sink) {
  try {
    sink->set_formatter(std::make_unique<RedactingFormatter>(config.format));
    auto logger = std::make_shared<spdlog::logger>("perfwarden", std::move(sink));
    logger->set_level(ToSpdlog(config.level));
    // Warnings and errors reach the sink at once, so that a crash right after loses nothing.
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(std::move(logger));
  } catch (const spdlog::spdlog_ex& e) {
    return MakeError(ErrorCode::kInternal, std::string("cannot set up logging: ") + e.what());
  }
  return {};
}

}  // namespace

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

std::string RedactSecrets(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t next = RedactBearer(text, i, out);
    if (next == i) next = RedactPerfwardenToken(text, i, out);
    if (next == i) next = RedactPassword(text, i, out);
    if (next == i) next = RedactUriPassword(text, i, out);
    if (next == i) {
      out.push_back(text[i]);
      ++next;
    }
    i = next;
  }
  return out;
}

Result<void> SetupLogging(const LogConfig& config) {
  return Install(config, std::make_shared<spdlog::sinks::stderr_sink_mt>());
}

Result<void> SetupLogging(const LogConfig& config, std::ostream& out) {
  return Install(config,
                 std::make_shared<spdlog::sinks::ostream_sink_mt>(out, /*force_flush=*/true));
}

}  // namespace perfwarden::config
