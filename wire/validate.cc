// SPDX-License-Identifier: Apache-2.0
#include "wire/validate.h"

#include <array>

namespace perfwarden::wire {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsHex(char c, HexCase letters) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (letters == HexCase::kAny && c >= 'A' && c <= 'F');
}

int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  // Howard Hinnant's days_from_civil.
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

bool IsSha(std::string_view text, HexCase letters) {
  if (text.size() != 40) return false;
  for (char c : text) {
    if (!IsHex(c, letters)) return false;
  }
  return true;
}

bool IsUuid(std::string_view text, HexCase letters) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsHex(text[i], letters)) return false;
  }
  return true;
}

bool IsName(std::string_view text) {
  if (text.empty() || text.size() > kMaxNameLength) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '.' ||
                    c == '_' || c == '/' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsVersion(std::string_view text) {
  if (text.empty() || text.size() > kMaxVersionLength) return false;
  for (char c : text) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

std::optional<Rfc3339Time> ParseRfc3339(std::string_view text) {
  size_t pos = 0;
  auto number = [&](size_t digits, int64_t* out) {
    if (pos + digits > text.size()) return false;
    int64_t value = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char c = text[pos + i];
      if (!IsDigit(c)) return false;
      value = value * 10 + (c - '0');
    }
    pos += digits;
    *out = value;
    return true;
  };
  auto literal = [&](char c) {
    if (pos >= text.size() || text[pos] != c) return false;
    ++pos;
    return true;
  };
  Rfc3339Time time;
  if (!number(4, &time.year) || !literal('-') || !number(2, &time.month) || !literal('-') ||
      !number(2, &time.day) || !literal('T') || !number(2, &time.hour) || !literal(':') ||
      !number(2, &time.minute) || !literal(':') || !number(2, &time.second)) {
    return std::nullopt;
  }
  static constexpr std::array<int64_t, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (time.year % 4 == 0 && time.year % 100 != 0) || time.year % 400 == 0;
  if (time.month < 1 || time.month > 12 || time.day < 1) return std::nullopt;
  if (time.day > kDays[static_cast<size_t>(time.month - 1)] + (time.month == 2 && leap ? 1 : 0)) {
    return std::nullopt;
  }
  if (time.hour > 23 || time.minute > 59 || time.second > 60) return std::nullopt;
  int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t begin = pos;
    while (pos < text.size() && IsDigit(text[pos])) {
      if (pos - begin < 9) nanos = nanos * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == begin) return std::nullopt;
    time.fraction_digits = pos - begin;
    if (time.fraction_digits > kMaxFractionDigits) return std::nullopt;
    for (size_t i = time.fraction_digits; i < 9; ++i) nanos *= 10;
  }
  if (literal('Z')) {
    // UTC.
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int64_t sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t offset_hours = 0, offset_minutes = 0;
    if (!number(2, &offset_hours) || !literal(':') || !number(2, &offset_minutes)) {
      return std::nullopt;
    }
    if (offset_minutes > 59 || offset_hours * 60 + offset_minutes > kMaxUtcOffsetMinutes) {
      return std::nullopt;
    }
    time.offset_seconds = sign * (offset_hours * 3600 + offset_minutes * 60);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  time.instant.unix_seconds = DaysFromCivil(time.year, time.month, time.day) * 86400 +
                              time.hour * 3600 + time.minute * 60 + time.second -
                              time.offset_seconds;
  time.instant.nanos = nanos;
  static const int64_t kFirst = DaysFromCivil(kMinYear, 1, 1) * 86400;
  static const int64_t kLast = DaysFromCivil(kMaxYear, 12, 31) * 86400 + 86399;
  if (time.instant.unix_seconds < kFirst || time.instant.unix_seconds > kLast) return std::nullopt;
  return time;
}

bool IsRfc3339(std::string_view text) { return ParseRfc3339(text).has_value(); }

}  // namespace perfwarden::wire
