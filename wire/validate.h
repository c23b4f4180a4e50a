// SPDX-License-Identifier: Apache-2.0
// The validators every HTTP message shares: commit shas, UUIDs, names and RFC 3339 timestamps,
// written once so that the runner, the API routes and the stores accept the same texts. Each is
// a pure function of its text; the messages that name a failing field are the callers'.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace perfwarden::wire {

// Which letters a hex validator takes: a decoder accepts either case and lowers what it keeps;
// a store that only ever holds what a decoder lowered takes lower case alone.
enum class HexCase { kAny, kLower };

// A commit sha: 40 hex digits.
bool IsSha(std::string_view text, HexCase letters = HexCase::kAny);

// A canonical UUID: 8-4-4-4-12 hex digits.
bool IsUuid(std::string_view text, HexCase letters = HexCase::kAny);

// Project, branch and testbed names: 1..kMaxNameLength characters from [A-Za-z0-9._/-]. The
// database's CHECKs allow as much (projects since migration 0018, branches and testbeds 256).
inline constexpr size_t kMaxNameLength = 200;

// A series' suite, benchmark, metric and unit: at most this many bytes each. PostgreSQL's
// unique indexes on (project, suite, benchmark) and (project, metric, unit) take 2,704 bytes a
// row at most; two of these fit with room to spare.
inline constexpr size_t kMaxSeriesTextBytes = 1024;
bool IsName(std::string_view text);

// A build's version (`git describe` output, "v1.2.0-3-g1a2b3c4-dirty"): 1..kMaxVersionLength
// printable ASCII characters, no space.
inline constexpr size_t kMaxVersionLength = 128;
bool IsVersion(std::string_view text);

// A point in time, comparable across UTC offsets.
struct Instant {
  int64_t unix_seconds = 0;
  int64_t nanos = 0;
  auto operator<=>(const Instant&) const = default;
};

// The fields of an RFC 3339 date-time as written.
struct Rfc3339Time {
  int64_t year = 0;
  int64_t month = 0;
  int64_t day = 0;
  int64_t hour = 0;
  int64_t minute = 0;
  int64_t second = 0;          // 60 for a leap second
  size_t fraction_digits = 0;  // after the '.', 0 when there is none
  int64_t offset_seconds = 0;  // east of UTC
  Instant instant;             // nanoseconds from the first 9 fraction digits
};

// What PostgreSQL's timestamptz takes as written, where every accepted time ends up, and what
// reads back as RFC 3339: the instant within the years 0001..9999 in UTC (PostgreSQL has no
// year 0; a 5-digit year is no RFC 3339), UTC offsets within +-15:59 (its "time zone
// displacement" range), no more fraction digits than nanoseconds (a long fraction overflows its
// date/time text).
inline constexpr int64_t kMinYear = 1, kMaxYear = 9999;
inline constexpr int64_t kMaxUtcOffsetMinutes = 15 * 60 + 59;
inline constexpr size_t kMaxFractionDigits = 9;
// The refusal every decoder and query parameter gives for a timestamp ParseRfc3339 refuses.
inline constexpr std::string_view kRfc3339Rule =
    "not an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)) that can be stored: years "
    "0001..9999 in UTC, UTC offset within +-15:59, at most 9 fraction digits";

// Strict RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS(.frac)?(Z|+HH:MM|-HH:MM), upper-case T and Z,
// calendar-checked (leap years; second 60 allowed for leap seconds), narrowed to the limits
// above. nullopt otherwise.
std::optional<Rfc3339Time> ParseRfc3339(std::string_view text);
bool IsRfc3339(std::string_view text);

}  // namespace perfwarden::wire
