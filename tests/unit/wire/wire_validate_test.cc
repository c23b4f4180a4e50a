// SPDX-License-Identifier: Apache-2.0
// Tests of the shared validators (wire/validate.h): shas and UUIDs in either letter case or lower
// case only, names, and the strict RFC 3339 parser with its calendar and the instant it yields.
#include <gtest/gtest.h>

#include <string>

#include "wire/validate.h"

namespace perfwarden::wire {
namespace {

const std::string kSha = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad";

TEST(WireValidate, Sha) {
  EXPECT_TRUE(IsSha(kSha));
  EXPECT_TRUE(IsSha("3B18E512DBA79E4C8300DD08AEB37F8E728B8DAD"));
  EXPECT_TRUE(IsSha(kSha, HexCase::kLower));
  EXPECT_FALSE(IsSha("3B18E512DBA79E4C8300DD08AEB37F8E728B8DAD", HexCase::kLower));
  EXPECT_FALSE(IsSha(kSha.substr(1)));
  EXPECT_FALSE(IsSha(kSha + "0"));
  EXPECT_FALSE(IsSha("g" + kSha.substr(1)));
  EXPECT_FALSE(IsSha(""));
}

TEST(WireValidate, Uuid) {
  EXPECT_TRUE(IsUuid("6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3"));
  EXPECT_TRUE(IsUuid("6F1C0C4E-8D2B-4A9E-9C31-2B7D5E0A41F3"));
  EXPECT_TRUE(IsUuid("6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f3", HexCase::kLower));
  EXPECT_FALSE(IsUuid("6F1C0C4E-8D2B-4A9E-9C31-2B7D5E0A41F3", HexCase::kLower));
  EXPECT_FALSE(IsUuid("6f1c0c4e8d2b4a9e9c312b7d5e0a41f3"));
  EXPECT_FALSE(IsUuid("6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41f"));
  EXPECT_FALSE(IsUuid("6f1c0c4e-8d2b-4a9e-9c31_2b7d5e0a41f3"));
  EXPECT_FALSE(IsUuid("{6f1c0c4e-8d2b-4a9e-9c31-2b7d5e0a41}"));
}

TEST(WireValidate, Name) {
  EXPECT_TRUE(IsName("feature/faster-sort_2.1"));
  EXPECT_TRUE(IsName(std::string(kMaxNameLength, 'a')));
  EXPECT_FALSE(IsName(std::string(kMaxNameLength + 1, 'a')));
  EXPECT_FALSE(IsName(""));
  EXPECT_FALSE(IsName("with space"));
  EXPECT_FALSE(IsName("caf\xC3\xA9"));
}

TEST(WireValidate, Rfc3339AcceptsTheStrictForms) {
  for (const char* text :
       {"2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123Z", "2024-01-02T03:04:05.123456789Z",
        "2024-02-29T00:00:00+01:00", "2000-02-29T00:00:00-15:59", "2016-12-31T23:59:60Z",
        "0001-01-01T00:00:00Z"}) {
    EXPECT_TRUE(IsRfc3339(text)) << text;
  }
}

TEST(WireValidate, Rfc3339RefusesTheRest) {
  for (const char* text :
       {"", "2024-01-02", "2024-01-02t03:04:05Z", "2024-01-02T03:04:05z", "2024-01-02 03:04:05Z",
        "2024-01-02T03:04:05", "2024-01-02T03:04:05.Z", "2024-01-02T03:04:05+0100",
        "2024-01-02T03:04:05+24:00", "2024-01-02T03:04:05+01:60", "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z",
        "2024-04-31T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-02T24:00:00Z",
        "2024-01-02T03:60:00Z", "2024-01-02T03:04:61Z", "2024-01-02T03:04:05Zjunk",
        "+2024-01-02T03:04:05Z",
        // RFC 3339, but not what PostgreSQL's timestamptz takes.
        "0000-01-01T00:00:00Z",
        "0001-01-01T00:00:00+00:01",  // 0000-12-31 in UTC
        "9999-12-31T23:59:59-00:01",  // 10000-01-01 in UTC
        "2024-01-02T03:04:05+16:00", "2000-02-29T00:00:00-23:59",
        "2024-01-02T03:04:05.1234567891Z"}) {
    EXPECT_FALSE(IsRfc3339(text)) << text;
  }
}

TEST(WireValidate, Rfc3339FieldsAndInstant) {
  const auto time = ParseRfc3339("2024-01-02T03:04:05.25+01:30");
  ASSERT_TRUE(time.has_value());
  EXPECT_EQ(time->year, 2024);
  EXPECT_EQ(time->month, 1);
  EXPECT_EQ(time->day, 2);
  EXPECT_EQ(time->hour, 3);
  EXPECT_EQ(time->minute, 4);
  EXPECT_EQ(time->second, 5);
  EXPECT_EQ(time->fraction_digits, 2u);
  EXPECT_EQ(time->offset_seconds, 5400);
  EXPECT_EQ(time->instant.nanos, 250000000);
  // 2024-01-02T01:34:05Z.
  EXPECT_EQ(time->instant.unix_seconds, 1704159245);
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z")->instant, (Instant{0, 0}));
  // The same instant written at two offsets compares equal; a later one compares greater.
  EXPECT_EQ(ParseRfc3339("2024-01-02T01:34:05.25Z")->instant, time->instant);
  EXPECT_LT(time->instant, ParseRfc3339("2024-01-02T01:34:05.250000001Z")->instant);
}

}  // namespace
}  // namespace perfwarden::wire
