// SPDX-License-Identifier: Apache-2.0
// Helpers of the Google Benchmark reader's tests (tests/unit/runner/adapters): a file parsed,
// read from tests/fixtures or collected into series that must succeed, and a "text contains part"
// predicate for error messages.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runner/adapters/gbench_reader.h"
#include "tests/testing/oracle_csv.h"

namespace perfwarden::testing {

// gmock is not linked: "message contains part" as a gtest predicate, failing with both texts.
inline ::testing::AssertionResult ContainsText(const char* text_expr, const char* part_expr,
                                               const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << text_expr << " does not contain " << part_expr
                                       << "\n  text: " << text << "\n  part: " << part;
}
inline std::string HasSubstr(std::string part) { return part; }

// Values are read from decimal text and scaled by at most 1e9; one rounding each way.
inline constexpr double kRel = 1e-15;

inline adapters::GbenchFile MustParse(const std::string& text,
                                      const std::string& source = "t.json") {
  Result<adapters::GbenchFile> file = adapters::ParseGbenchJson(text, source);
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().message);
  return file ? *file : adapters::GbenchFile{};
}

inline adapters::GbenchFile MustRead(const std::string& relative) {
  Result<adapters::GbenchFile> file = adapters::ReadGbenchFile(FixturePath(relative));
  EXPECT_TRUE(file.has_value()) << relative << ": " << (file ? "" : file.error().message);
  return file ? *file : adapters::GbenchFile{};
}

inline const adapters::MetricSeries* Find(const std::vector<adapters::MetricSeries>& series,
                                          const std::string& name) {
  for (const adapters::MetricSeries& one : series) {
    if (one.key.benchmark == name) return &one;
  }
  return nullptr;
}

inline std::vector<adapters::MetricSeries> MustCollect(const adapters::GbenchFile& file,
                                                       const std::string& metric) {
  Result<std::vector<adapters::MetricSeries>> series = adapters::CollectMetric(file, metric);
  EXPECT_TRUE(series.has_value()) << metric << ": " << (series ? "" : series.error().message);
  return series ? *series : std::vector<adapters::MetricSeries>{};
}

}  // namespace perfwarden::testing
