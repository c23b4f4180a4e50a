// The validators every HTTP message shares: commit shas, UUIDs, names and RFC 3339 timestamps,
// written once so that the runner, the API routes and the stores accept the same texts. Each is
// a pure function of its text; the messages that name a failing field are the callers'.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace perfgate::wire {

// Which letters a hex validator takes: a decoder accepts either case and lowers what it keeps;
// a store that only ever holds what a decoder lowered takes lower case alone.
enum class HexCase { kAny, kLower };

// A commit sha: 40 hex digits.
bool IsSha(std::string_view text, HexCase letters = HexCase::kAny);

// A canonical UUID: 8-4-4-4-12 hex digits.
bool IsUuid(std::string_view text, HexCase letters = HexCase::kAny);

// Project, branch and testbed names: 1..kMaxNameLength characters from [A-Za-z0-9._/-].
inline constexpr size_t kMaxNameLength = 200;
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

// Strict RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS(.frac)?(Z|+HH:MM|-HH:MM), upper-case T and Z,
// calendar-checked (leap years; second 60 allowed for leap seconds). nullopt otherwise.
std::optional<Rfc3339Time> ParseRfc3339(std::string_view text);
bool IsRfc3339(std::string_view text);

}  // namespace perfgate::wire
